"""OCR of the images of DOCX, PPTX and EPUB files (issue 28): real documents built with
python-docx, python-pptx and ebooklib around a real rendering of a docs/clean page (the title
block of a paper), read by Tesseract at ingest; bombs, damaged images, OCR off and the limits.

Each image is a 1442 x 332 px crop (about 2 s of Tesseract on two shared cores).
"""

from __future__ import annotations

import io
import json
import re
import struct
import subprocess
import sys
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pptx
import pymupdf
import pytest
from docx.shared import Inches
from ebooklib import epub
from PIL import Image

from tests.conftest import needs_tesseract
from tests.unit.ingest.test_ocr import PAPER, TESSERACT
from verifai_desktop.domain import Document, Location, LocationKind
from verifai_desktop.errors import NeedsOcr, ParseError
from verifai_desktop.ingest.chunking import chunk_document
from verifai_desktop.ingest.embedded import EmbeddedImage, recognise_embedded
from verifai_desktop.ingest.epub import parse_epub
from verifai_desktop.ingest.ocr import OCR_OFF_REASON, OcrOptions, unread_summary, worth_retrying
from verifai_desktop.ingest.office import parse_docx, parse_pptx
from verifai_desktop.ingest.parse import ParserPool

_mu: Any = pymupdf
WORDS = ("complications", "venous", "thrombosis", "prophylaxis", "trauma")
"""Words of the paper's title, all in the scanned crop."""
DOCX_IMAGE = "word/media/image1.png"


def title_scan() -> bytes:
    """The title block of the paper's first page rendered at 200 dpi, as PNG (1442 x 332)."""
    page = _mu.open(PAPER)[0]
    first = page.search_for("Complications related")[0]
    last = page.search_for("systematic review")[0]
    clip = _mu.Rect(first.x0 - 10, first.y0 - 10, page.rect.width - 30, last.y1 + 60)
    png: bytes = page.get_pixmap(dpi=200, clip=clip).tobytes("png")
    return png


def poster_docx(path: Path) -> Path:
    """A DOCX (111 KB) holding one 7000 x 7000 grey picture (49 Mpx, under the default pixel
    limit) with the paper's title block rendered at 600 dpi near its top."""
    page = _mu.open(PAPER)[0]
    first = page.search_for("Complications related")[0]
    last = page.search_for("systematic review")[0]
    clip = _mu.Rect(first.x0 - 10, first.y0 - 10, page.rect.width - 30, last.y1 + 60)
    title = Image.open(io.BytesIO(page.get_pixmap(dpi=600, clip=clip).tobytes("png")))
    poster = Image.new("L", (7000, 7000), "white")
    poster.paste(title.convert("L"), (300, 300))
    png = io.BytesIO()
    poster.save(png, "PNG", optimize=True)
    document = docx.Document()
    document.add_paragraph("A poster of the review's title.")
    document.add_picture(io.BytesIO(png.getvalue()), width=Inches(6))
    document.save(str(path))
    return path


_PEAK_SCRIPT = """
import json, resource, sys
from pathlib import Path
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.ingest.office import parse_docx
doc = parse_docx(Path(sys.argv[1]), ocr=OcrOptions("tesseract"))
print(json.dumps({
    "text": doc.text,
    "unread": doc.unread_images,
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child of a large pytest
    # process would report the parent's peak (5.8 GB in the full suite)
    "parser_kib": next(
        int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")
    ),
    "tesseract_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
}))
"""
"""Parse a DOCX with OCR in a fresh process; print its text and the peak RSS (KiB, Linux) of
that process and of the largest of its children (Tesseract; a child counts the pages of the
process it was forked from until it runs Tesseract)."""


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, "PNG")
    return out.getvalue()


def bomb_png() -> bytes:
    """A small PNG whose header declares 60,000 x 60,000 pixels (3.6 Gpx, 10.8 GB as RGB)."""
    data = bytearray(_png(400, 400))
    data[16:24] = struct.pack(">II", 60_000, 60_000)  # IHDR width, height
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))  # its CRC
    return bytes(data)


def replace_member(path: Path, name: str, data: bytes) -> None:
    """Put ``data`` in place of the zip member ``name`` (a picture the library checked)."""
    with zipfile.ZipFile(path) as zf:
        members = [(info, zf.read(info)) for info in zf.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, content in members:
            zf.writestr(info, data if info.filename == name else content)


def docx_with_scan(path: Path, *, extra: bytes | None = None) -> Path:
    """A report whose section "Background" shows the scan between two paragraphs (and a 64 px
    icon; ``extra``: one more picture after it)."""
    document = docx.Document()
    document.add_heading("Background", level=1)
    document.add_paragraph("The ward audit counted every admission in 2009.")
    document.add_picture(io.BytesIO(title_scan()), width=Inches(5))
    document.add_picture(io.BytesIO(_png(64, 64)), width=Inches(0.3))
    if extra is not None:
        document.add_picture(io.BytesIO(extra), width=Inches(3))
    document.add_paragraph("The audit closed in December.")
    document.add_heading("Methods", level=1)
    document.add_paragraph("Charts were read twice by two nurses.")
    document.save(str(path))
    return path


def pptx_with_scan(path: Path) -> Path:
    """A deck: slide 1 text only, slide 2 titled "Scanned abstract" shows the scan."""
    prs = pptx.Presentation()
    first = prs.slides.add_slide(prs.slide_layouts[1])
    first.shapes.title.text = "Ward audit"
    first.placeholders[1].text = "Every admission in 2009 was counted."
    second = prs.slides.add_slide(prs.slide_layouts[5])  # title only
    second.shapes.title.text = "Scanned abstract"
    second.shapes.add_picture(io.BytesIO(title_scan()), pptx.util.Inches(0.5), pptx.util.Inches(2))
    prs.save(str(path))
    return path


def epub_with_scan(path: Path) -> Path:
    """A book: chapter 1 text only, chapter 2 "Scanned abstract" shows the scan."""
    book = epub.EpubBook()
    book.set_identifier("ocr-images-test")
    book.set_title("Ward audit notes")
    book.set_language("en")
    one = epub.EpubHtml(title="Ward audit", file_name="chap_01.xhtml", lang="en")
    one.content = "<h1>Ward audit</h1><p>Every admission in 2009 was counted.</p>"
    two = epub.EpubHtml(title="Scanned abstract", file_name="chap_02.xhtml", lang="en")
    two.content = (
        "<h1>Scanned abstract</h1><p>The abstract as it was scanned:</p>"
        '<img src="images/scan.png"/>'
    )
    scan = epub.EpubItem(
        uid="scan", file_name="images/scan.png", media_type="image/png", content=title_scan()
    )
    for item in (one, two, scan):
        book.add_item(item)
    book.toc = (one, two)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = [one, two]
    epub.write_epub(str(path), book)
    return path


def _recognised(doc: Document) -> tuple[Location, str]:
    """The location and text of the one section OCR read; its recognition checked."""
    (section,) = [s for s in doc.sections if s.ocr is not None]
    assert section.ocr is not None and section.ocr.engine == "tesseract"
    assert 0.6 < section.ocr.mean_confidence <= 1.0
    assert section.ocr.words == ()  # no page to draw boxes on
    text = doc.text[section.char_start : section.char_end]
    words = re.findall(r"[a-z]+", text.lower())
    for expected in WORDS:
        assert expected in words, (expected, text)
    assert doc.unread_images == ()
    return section.location, text


@needs_tesseract
def test_a_docx_picture_is_read_where_it_is_in_its_section(tmp_path: Path) -> None:
    doc = parse_docx(docx_with_scan(tmp_path / "report.docx"), ocr=TESSERACT)
    location, text = _recognised(doc)
    assert location == Location(LocationKind.SECTION, None, "Background")
    assert [(s.location.heading, s.ocr is not None) for s in doc.sections] == [
        ("Background", False),
        ("Background", True),
        ("Background", False),
        ("Methods", False),
    ]
    assert doc.text.index("admission in 2009") < doc.text.index(text)
    assert doc.text.index(text) < doc.text.index("closed in December")
    chunks = chunk_document(doc, count_tokens=lambda t: len(t.split()), max_tokens=200)
    read = [c for c in chunks if "thrombosis" in c.text]
    assert read and all(c.ocr is not None and c.location == location for c in read)
    assert all(c.ocr is None for c in chunks if "December" in c.text)


@needs_tesseract
@pytest.mark.parametrize(
    ("build", "parse", "location"),
    [
        (pptx_with_scan, parse_pptx, Location(LocationKind.SLIDE, 2, "Scanned abstract")),
        (epub_with_scan, parse_epub, Location(LocationKind.CHAPTER, 2, "Scanned abstract")),
    ],
    ids=["pptx slide", "epub chapter"],
)
def test_a_picture_is_read_on_its_slide_or_in_its_chapter(
    tmp_path: Path,
    build: Callable[[Path], Path],
    parse: Callable[..., Document],
    location: Location,
) -> None:
    doc = parse(build(tmp_path / "file"), ocr=TESSERACT)
    assert _recognised(doc)[0] == location
    assert [(s.location.number, s.ocr is not None) for s in doc.sections] == [
        (1, False),
        (2, False),  # the slide's or chapter's title and text
        (2, True),
    ]


@pytest.mark.parametrize(
    ("image", "reason"),
    [
        (
            bomb_png(),
            r"its image is 60,000 x 60,000 pixels, over the limit of 50,000,000 \(setting "
            r"ingest\.ocr_max_pixels\)",
        ),
        (title_scan()[:4000], r"its image cannot be decoded \(.*truncated.*\)"),
    ],
    ids=["decompression bomb", "truncated"],
)
def test_a_picture_not_decoded_is_recorded_and_the_text_kept(
    tmp_path: Path, image: bytes, reason: str
) -> None:
    path = docx_with_scan(tmp_path / "report.docx")
    replace_member(path, DOCX_IMAGE, image)
    t0 = time.perf_counter()
    doc = parse_docx(path, ocr=TESSERACT)
    assert time.perf_counter() - t0 < 5.0  # the bomb is never decoded
    assert all(s.ocr is None for s in doc.sections)
    assert "closed in December" in doc.text and "Charts were read twice" in doc.text
    ((image_name, why),) = doc.unread_images
    assert image_name == f"{DOCX_IMAGE} in section Background"
    assert re.fullmatch(reason, why), why
    assert unread_summary((), doc.unread_images) == (
        f"embedded image {DOCX_IMAGE} in section Background not recognised: {why}"
    )


def test_ocr_off_records_the_picture_and_a_later_run_retries_it(tmp_path: Path) -> None:
    """The 64 px icon beside the scan is too small to hold text: never listed."""
    doc = parse_docx(docx_with_scan(tmp_path / "report.docx"), ocr=OcrOptions("off"))
    assert all(s.ocr is None for s in doc.sections) and "thrombosis" not in doc.text
    assert doc.unread_images == ((f"{DOCX_IMAGE} in section Background", OCR_OFF_REASON),)
    summary = unread_summary(doc.unrecognised, doc.unread_images)
    assert worth_retrying(summary, TESSERACT) and not worth_retrying(summary, None)


def test_a_docx_that_is_only_a_picture_needs_ocr_when_it_is_off(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_picture(io.BytesIO(title_scan()), width=Inches(5))
    document.save(str(tmp_path / "scan.docx"))
    with pytest.raises(NeedsOcr) as info:
        parse_docx(tmp_path / "scan.docx", ocr=OcrOptions("off"))
    assert info.value.reason == f"embedded image {DOCX_IMAGE} not recognised: {OCR_OFF_REASON}"


def test_the_page_limit_counts_pictures(tmp_path: Path) -> None:
    path = docx_with_scan(tmp_path / "report.docx", extra=_png(400, 300))
    doc = parse_docx(path, ocr=OcrOptions("tesseract", max_pages=1))
    reason = (
        "2 embedded images, over the OCR limit of 1 pages or images per file (setting "
        "ingest.ocr_max_pages)"
    )
    assert [why for _, why in doc.unread_images] == [reason, reason]
    summary = unread_summary((), doc.unread_images)
    assert worth_retrying(summary, OcrOptions("tesseract", max_pages=2))
    assert not worth_retrying(summary, OcrOptions("tesseract", max_pages=1))


def test_ocr_stops_at_the_deadline_before_an_image(tmp_path: Path) -> None:
    image = EmbeddedImage("ppt/media/image1.png", "image/png", title_scan(), "on slide 2")
    with pytest.raises(ParseError) as info:
        recognise_embedded(
            tmp_path / "deck.pptx", [[image]], TESSERACT, deadline=time.monotonic() - 1.0
        )
    assert info.value.reason.startswith(
        "timed out before recognising image 1 (0 of 1 embedded images read)"
    )


@needs_tesseract
def test_the_worker_reports_each_picture_it_reads(tmp_path: Path) -> None:
    progress: list[tuple[int, int, int, str]] = []
    with ParserPool(timeout_s=120.0, ocr=TESSERACT) as pool:
        doc = pool.parse(
            pptx_with_scan(tmp_path / "deck.pptx"), on_page=lambda *p: progress.append(p)
        )
    assert progress == [(0, 1, 1, "images")]
    assert _recognised(doc)[0].number == 2


@needs_tesseract
def test_a_7000_px_picture_is_read_within_a_memory_cap(tmp_path: Path) -> None:
    """Issue 41, row 13: a 7000 x 7000 picture in a small DOCX took 708 MiB in the parsing
    process and 533 MiB in Tesseract; it is scaled down to at most 48 MiB of RGB before it is
    converted or handed over, and read all the same."""
    path = poster_docx(tmp_path / "poster.docx")
    assert path.stat().st_size < 200_000  # small: the picture is mostly white
    run = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, str(path)],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    found = json.loads(run.stdout)
    assert found["unread"] == []
    words = re.findall(r"[a-z]+", found["text"].lower())
    assert [w for w in WORDS if w not in words] == []
    # Before the cap: 714 MiB each (the largest child counts the parser's pages it was forked
    # with); 188 MiB each with it, of which 53 MiB is the parser's imports.
    assert found["parser_kib"] < 300 * 1024
    assert found["tesseract_kib"] < 300 * 1024


def test_a_picture_that_would_take_too_much_memory_is_not_decoded(tmp_path: Path) -> None:
    """Under a raised pixel limit, an 11,000 x 11,000 colour picture (121 Mpx, 462 MiB as
    Pillow holds it) is refused by its memory, before anything is decoded."""
    data = bytearray(_png(400, 400))
    data[16:24] = struct.pack(">II", 11_000, 11_000)  # IHDR width, height
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    path = docx_with_scan(tmp_path / "report.docx")
    replace_member(path, DOCX_IMAGE, bytes(data))
    doc = parse_docx(path, ocr=OcrOptions("tesseract", max_pixels=200_000_000))
    assert doc.unread_images == (
        (
            f"{DOCX_IMAGE} in section Background",
            "its image (11,000 x 11,000 pixels, RGB) would take 462 MiB of memory to decode, "
            "over the limit of 384 MiB",
        ),
    )
