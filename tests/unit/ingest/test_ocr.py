"""OCR of pages without a text layer (issue 28), on real rendered pages and the nasty scans.

Each test reads one page or part of one: OCR on two shared cores takes seconds a page.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from tests.conftest import DOCS_CLEAN, DOCS_NASTY, needs_tesseract
from verifai_desktop.domain import Document, LocationKind
from verifai_desktop.errors import NeedsOcr, ParseError
from verifai_desktop.ingest import ocr as ocr_module
from verifai_desktop.ingest.chunking import chunk_document
from verifai_desktop.ingest.ocr import (
    OCR_OFF_REASON,
    TIME_LIMIT_REASON,
    OcrOptions,
    Token,
    page_text_and_words,
    recognise_pages,
    worth_retrying,
)
from verifai_desktop.ingest.pdf import parse_pdf
from verifai_desktop.ingest.unread import unread_summary
from verifai_desktop.recognition import Recognition, WordBox

PAPER = DOCS_CLEAN / "bmc_trauma_2010_dvt_prophylaxis_review.pdf"
LEXMARK = DOCS_NASTY / "scanned_image_only_lexmark_2p.pdf"
JBIG2 = DOCS_NASTY / "scanned_image_only_jbig2.pdf"
TESSERACT = OcrOptions("tesseract", dpi=200)

_mu: Any = pymupdf


def scanned_top_of_paper(path: Path, *, fraction: float = 0.3, dpi: int = 200) -> Path:
    """The top ``fraction`` of the paper's first page as an image-only PDF page of the same
    size and position (a scan of it): its text layer is the ground truth."""
    src = _mu.open(PAPER)
    clip = _mu.Rect(0, 0, src[0].rect.width, src[0].rect.height * fraction)
    png = src[0].get_pixmap(dpi=dpi, clip=clip).tobytes("png")
    out = _mu.open()
    page = out.new_page(width=clip.width, height=clip.height)
    page.insert_image(page.rect, stream=png)
    out.save(path)
    return path


def mixed_pdf(path: Path) -> Path:
    """Page 2 of the paper (a text layer), then the jbig2 scan (none) as page 2."""
    mixed = _mu.open()
    mixed.insert_pdf(_mu.open(PAPER), from_page=1, to_page=1)
    mixed.insert_pdf(_mu.open(JBIG2))
    mixed.save(path)
    return path


def _jpeg_page(path: Path) -> tuple[Any, int]:
    """A new PDF whose one page is a JPEG image of the paper's first page; returns the open
    document and the image's xref."""
    jpeg = _mu.open(PAPER)[0].get_pixmap(dpi=72).tobytes("jpeg")
    doc = _mu.open()
    page = doc.new_page(width=612, height=792)
    page.insert_image(page.rect, stream=jpeg)
    return doc, int(page.get_images(full=True)[0][0])


@needs_tesseract
def test_a_rendered_page_is_recognised_with_its_words_where_the_text_layer_has_them(
    tmp_path: Path,
) -> None:
    doc = parse_pdf(scanned_top_of_paper(tmp_path / "scan.pdf"), ocr=TESSERACT)
    assert [s.location.number for s in doc.sections] == [1]
    ocr = doc.sections[0].ocr
    assert ocr is not None and ocr.engine == "tesseract"
    assert 0.6 < ocr.mean_confidence <= 1.0
    words = doc.text.lower().split()
    for expected in ("complications", "venous", "thrombosis", "prophylaxis", "trauma"):
        assert expected in words, expected
    # Every word box names its word in the text, and "thrombosis" sits where the born-digital
    # page draws it: same left, right and top edge within 3 pt (at 200 dpi a pixel is 0.36
    # pt), its ink inside the font's line box (which also holds the descender).
    assert len(ocr.words) == len(doc.text.split())
    for w in ocr.words:
        assert doc.text[w.char_start : w.char_end] == doc.text[w.char_start : w.char_end].strip()
    truth = _mu.open(PAPER)[0].search_for("thrombosis")[0]
    found = [w for w in ocr.words if doc.text[w.char_start : w.char_end].startswith("thrombosis")]
    assert found
    best = min(found, key=lambda w: abs(w.x0 - truth.x0) + abs(w.y0 - truth.y0))
    assert max(abs(best.x0 - truth.x0), abs(best.x1 - truth.x1)) < 3.0
    assert abs(best.y0 - truth.y0) < 3.0 and best.y1 <= truth.y1


def test_rapidocr_reads_the_jbig2_scan() -> None:
    """Runs wherever the ``test`` extra is installed: it pulls the ``ocr`` extra in (issue 41
    row 17: it skipped without it, so RapidOCR had no running test)."""
    from importlib import metadata

    doc = parse_pdf(JBIG2, ocr=OcrOptions("rapidocr"))
    assert doc.text.split()[:2] == ["It", "Doesn't"]
    ocr = doc.sections[0].ocr
    assert ocr is not None and ocr.engine == "rapidocr" and ocr.mean_confidence > 0.5
    assert ocr.version == metadata.version("rapidocr-onnxruntime")
    assert doc.unrecognised == ()


@needs_tesseract
def test_a_chunk_of_a_recognised_page_carries_its_flag_and_word_boxes(tmp_path: Path) -> None:
    """A born-digital page 1 and a scanned page 2 in one file: only page 2's chunks are OCR."""
    doc = parse_pdf(mixed_pdf(tmp_path / "mixed.pdf"), ocr=TESSERACT)
    assert [(s.location.number, s.ocr is not None) for s in doc.sections] == [
        (1, False),
        (2, True),
    ]
    chunks = chunk_document(doc, count_tokens=lambda t: len(t.split()), max_tokens=200)
    scanned = [c for c in chunks if c.location.number == 2]
    assert scanned and all(c.ocr is None for c in chunks if c.location.number == 1)
    assert all(c.ocr is not None and c.ocr.engine == "tesseract" for c in scanned)
    words = [c.text[w.char_start : w.char_end] for c in scanned if c.ocr for w in c.ocr.words]
    assert words[:2] == ["It", "Doesn't"]


OVER_PAGES = (
    "2 scanned pages, over the OCR limit of 1 pages per file (setting ingest.ocr_max_pages)"
)


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (OcrOptions("off"), OCR_OFF_REASON),
        (OcrOptions("tesseract", max_pages=1), OVER_PAGES),
        (  # the lexmark scan is 1240 x 1754 pixels a page
            OcrOptions("tesseract", max_pixels=1_000_000),
            "its image is 1,240 x 1,754 pixels, over the limit of 1,000,000 (setting "
            "ingest.ocr_max_pixels)",
        ),
    ],
    ids=["ocr off", "page limit", "pixel limit"],
)
def test_a_scan_not_recognised_keeps_needs_ocr_with_the_reason(
    options: OcrOptions, reason: str
) -> None:
    with pytest.raises(NeedsOcr) as info:
        parse_pdf(LEXMARK, ocr=options)
    assert info.value.reason == f"scanned pages 1, 2 not recognised: {reason}"


def test_only_a_setting_that_now_lets_ocr_read_a_file_retries_it() -> None:
    off = f"scanned pages 1, 2 not recognised: {OCR_OFF_REASON}"
    assert worth_retrying(off, TESSERACT) and not worth_retrying(off, OcrOptions("off"))
    over = f"scanned pages 1, 2 not recognised: {OVER_PAGES}"
    assert worth_retrying(over, OcrOptions("tesseract", max_pages=2))
    assert not worth_retrying(over, OcrOptions("tesseract", max_pages=1))
    assert not worth_retrying("scanned page 1 not recognised: tesseract found no text", TESSERACT)


def test_a_decompression_bomb_is_refused_without_decoding_it(tmp_path: Path) -> None:
    """An image that declares 60,000 x 60,000 pixels (3.6 Gpx, 10.8 GB as RGB)."""
    doc, xref = _jpeg_page(tmp_path / "bomb.pdf")
    doc.xref_set_key(xref, "Width", "60000")
    doc.xref_set_key(xref, "Height", "60000")
    doc.save(tmp_path / "bomb.pdf")
    t0 = time.perf_counter()
    with pytest.raises(NeedsOcr) as info:
        parse_pdf(tmp_path / "bomb.pdf", ocr=TESSERACT)
    assert time.perf_counter() - t0 < 5.0
    assert info.value.reason == (
        "scanned page 1 not recognised: its image is 60,000 x 60,000 pixels, over the limit "
        "of 50,000,000 (setting ingest.ocr_max_pixels)"
    )


def test_a_corrupt_image_is_recorded_with_the_decoder_message(tmp_path: Path) -> None:
    doc, xref = _jpeg_page(tmp_path / "corrupt.pdf")
    raw = doc.xref_stream_raw(xref)
    doc.update_stream(xref, raw[: len(raw) // 3], compress=False)
    doc.xref_set_key(xref, "Filter", "/DCTDecode")
    doc.save(tmp_path / "corrupt.pdf")
    with pytest.raises(NeedsOcr) as info:
        parse_pdf(tmp_path / "corrupt.pdf", ocr=TESSERACT)
    assert re.fullmatch(
        r"scanned page 1 not recognised: its image cannot be decoded \(MuPDF: .*jpeg.*\); "
        r"the scan is damaged: get a complete copy",
        info.value.reason,
    ), info.value.reason


def test_ocr_stops_at_the_deadline_before_a_page() -> None:
    doc = _mu.open(LEXMARK)
    with pytest.raises(ParseError) as info:
        recognise_pages(LEXMARK, doc, [0, 1], TESSERACT, deadline=time.monotonic() - 1.0)
    assert info.value.reason.startswith("timed out before recognising page 1 (0 of 2 scanned")


def test_page_text_and_words_joins_tokens_into_clean_text_with_point_boxes() -> None:
    lines = [
        [Token("Heparin", (100, 50, 300, 90), 0.9), Token(" \x00 ", (0, 0, 1, 1), 0.1)],
        [Token("is", (100, 100, 140, 140), 0.8), Token("safe.", (160, 100, 260, 140), 0.7)],
    ]
    text, ocr = page_text_and_words(lines, 200 / 72, "tesseract")
    assert text == "Heparin\nis safe."
    assert [text[w.char_start : w.char_end] for w in ocr.words] == ["Heparin", "is", "safe."]
    assert ocr.words[0].x0 == pytest.approx(36.0) and ocr.words[0].y1 == pytest.approx(32.4)
    assert ocr.mean_confidence == pytest.approx(0.8)


def test_recognition_round_trips_and_a_chunk_keeps_its_own_words() -> None:
    words = (WordBox(0, 7, 36.0, 18.0, 108.0, 32.4, 0.9), WordBox(8, 10, 1, 2, 3, 4, 0.5))
    ocr = Recognition("rapidocr", 0.7, words)
    assert Recognition.from_json(ocr.to_json()) == ocr
    assert ocr.within(8, 10) == Recognition("rapidocr", 0.5, (WordBox(0, 2, 1, 2, 3, 4, 0.5),))
    with pytest.raises(ValueError, match="not a stored OCR recognition"):
        Recognition.from_json('{"engine": "x"}')


def test_a_page_with_text_is_never_recognised(tmp_path: Path) -> None:
    """Born-digital pages keep their text layer (no OCR, no provenance)."""
    doc: Document = parse_pdf(PAPER, ocr=TESSERACT)
    assert all(s.ocr is None and s.location.kind is LocationKind.PAGE for s in doc.sections)
    assert doc.unrecognised == ()


class _SlowEngine:
    """Takes 1 s a page (control flow only: the time limit, not recognition)."""

    name = "slow"

    def version(self) -> str:
        return "1.0"

    def read(self, image: Any, *, timeout_s: float) -> list[list[Token]]:
        time.sleep(1.0)
        return [[Token("page", (0, 0, 10, 10), 0.9)]]


def test_pages_the_time_limit_would_cut_are_left_out_and_those_read_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2 s for two pages of 1 s (and a render each): the second would be killed before it
    ends, losing the first."""
    monkeypatch.setitem(ocr_module._loaded, "slow", _SlowEngine())
    doc = _mu.open(LEXMARK)
    options = OcrOptions("slow", dpi=100)
    read, unread = recognise_pages(LEXMARK, doc, [0, 1], options, deadline=time.monotonic() + 2.0)
    assert [i for i in read] == [0] and read[0][0] == "page"
    assert unread == [(2, TIME_LIMIT_REASON)]


def test_scattered_pages_and_many_reasons_stay_one_readable_line() -> None:
    """Issue 41, row 14: every other page of 300 left out names ten of them and counts the
    rest; each reason keeps its own group."""
    unread = [(n, "OCR is off") for n in range(1, 300, 2)] + [(300, "no text found")]
    assert unread_summary(unread) == (
        "150 scanned pages (1, 3, 5, 7, 9, 11, 13, 15, 17, 19 and 140 more) not recognised: "
        "OCR is off; scanned page 300 not recognised: no text found"
    )
    assert unread_summary([(4, "r"), (5, "r"), (6, "r"), (8, "r"), (9, "r")]) == (
        "scanned pages 4-6, 8, 9 not recognised: r"
    )
