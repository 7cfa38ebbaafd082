"""PDF parsing with PyMuPDF: text per page at the right page number."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from tests.conftest import DOCS_CLEAN, DOCS_NASTY
from verifai_desktop.domain import DocFormat, Document, Location, LocationKind
from verifai_desktop.errors import NeedsOcr, ParseError
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.ingest.pdf import parse_pdf


def page_of(doc: Document, phrase: str) -> int | None:
    at = doc.text.find(phrase)
    assert at >= 0, f"{phrase!r} not in {doc.path.name}"
    for section in doc.sections:
        if section.char_start <= at < section.char_end:
            return section.location.number
    raise AssertionError("phrase outside every section")


@pytest.fixture(scope="module")
def trauma() -> Document:
    return parse_file(DOCS_CLEAN / "bmc_trauma_2010_dvt_prophylaxis_review.pdf")


def test_pages_are_numbered_sections(trauma: Document) -> None:
    assert trauma.format is DocFormat.PDF
    assert [s.location for s in trauma.sections] == [
        Location(LocationKind.PAGE, n) for n in (1, 2, 3, 4)
    ]
    assert trauma.title.startswith("Complications related to deep")


def test_phrase_on_the_right_page() -> None:
    doc = parse_file(DOCS_CLEAN / "bmc_health_serv_res_2014_quality_improvement.pdf")
    assert page_of(doc, "originally designed in English") == 3
    s2orc = parse_file(DOCS_CLEAN / "acl2020_s2orc.pdf")
    assert page_of(s2orc, "S2ORC: The Semantic Scholar Open Research Corpus") == 1
    assert page_of(s2orc, "Papers w/ GROBID full text") == 5


def test_line_end_hyphens_joined(trauma: Document) -> None:
    assert "they must be appropriately utilized." in trauma.text
    assert "appro-\npriately" not in trauma.text


def test_many_pages() -> None:
    doc = parse_file(DOCS_NASTY / "many_pages_285.pdf")
    assert [s.location.number for s in doc.sections] == list(range(1, 286))
    assert len(doc.text) > 400_000
    assert page_of(doc, "MuPDF has a very consistent layout and whitespace style") == 285


def test_truncated_gives_no_partial_text() -> None:
    with pytest.raises(ParseError, match="truncated"):
        parse_file(DOCS_NASTY / "truncated_first40pct_bmc_health_serv_res_2014.pdf")


def test_cooperative_deadline_between_pages() -> None:
    with pytest.raises(ParseError, match="timed out after reading 0 of 285 pages"):
        parse_file(DOCS_NASTY / "many_pages_285.pdf", timeout_s=-1.0)


def _vector_only_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(50, 50, 300, 200), color=(1, 0, 0), fill=(0, 0, 1))
    page.draw_line((10, 10), (400, 500))
    doc.save(path, deflate=True)
    return path


def test_a_damaged_content_stream_gives_the_real_reason(tmp_path: Path) -> None:
    """Issue 14: a vector-only PDF with a zlib error in its content was labelled "scanned"."""
    data = bytearray(_vector_only_pdf(tmp_path / "ok.pdf").read_bytes())
    start = data.index(b"stream", data.index(b"/Filter")) + len(b"stream\n")
    for i in range(start + 2, start + 12):  # flip bits inside the compressed page content
        data[i] ^= 0x5A
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(bytes(data))
    with pytest.raises(ParseError) as info:
        parse_pdf(broken)
    assert not isinstance(info.value, NeedsOcr)
    assert "cannot be decoded (MuPDF: " in info.value.reason
    assert "zlib error" in info.value.reason


def test_drawings_without_text_or_images_are_not_called_scanned(tmp_path: Path) -> None:
    with pytest.raises(NeedsOcr) as info:
        parse_pdf(_vector_only_pdf(tmp_path / "drawing.pdf"))
    assert info.value.reason.startswith("no text and no scanned images on any page")


def test_scanned_pages_still_need_ocr() -> None:
    with pytest.raises(NeedsOcr) as info:
        parse_pdf(DOCS_NASTY / "scanned_image_only_lexmark_2p.pdf")
    assert "scanned pages" in info.value.reason
