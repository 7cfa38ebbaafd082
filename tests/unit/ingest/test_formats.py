"""Format detection by content sniffing, with the extension only for plain text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN, DOCS_NASTY
from verifai_desktop.domain import DocFormat
from verifai_desktop.errors import ParseError, UnsupportedFormat
from verifai_desktop.ingest.formats import clean_text, detect_format, pick_title


@pytest.mark.parametrize("path", sorted(DOCS_CLEAN.iterdir()), ids=lambda p: p.name)
def test_clean_files_detected_as_their_extension(path: Path) -> None:
    assert detect_format(path) is DocFormat(path.suffix.lstrip("."))


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        # filetype calls these plain "zip"; the package members decide
        ("docx_with_tables.docx", DocFormat.DOCX),
        ("pptx_missing_rels_item.pptx", DocFormat.PPTX),
        ("pptx_with_speaker_notes_and_table.pptx", DocFormat.PPTX),
        ("epub_broken_internal_link.epub", DocFormat.EPUB),
        # directory unreadable: the extension decides and the EPUB parser reports the damage
        ("epub_truncated_zip_no_end_header.epub", DocFormat.EPUB),
        ("truncated_first40pct_bmc_health_serv_res_2014.pdf", DocFormat.PDF),
        ("txt_utf16le_no_bom.txt", DocFormat.TXT),
    ],
)
def test_nasty_files_detected(name: str, fmt: DocFormat) -> None:
    assert detect_format(DOCS_NASTY / name) is fmt


def test_content_beats_extension(tmp_path: Path) -> None:
    disguised_docx = tmp_path / "report.bin"
    shutil.copy(DOCS_CLEAN / "pandoc_mendeley_citations.docx", disguised_docx)
    assert detect_format(disguised_docx) is DocFormat.DOCX
    disguised_pdf = tmp_path / "paper.txt"
    shutil.copy(DOCS_NASTY / "corrupted_zen_of_python.pdf", disguised_pdf)
    assert detect_format(disguised_pdf) is DocFormat.PDF
    disguised_epub = tmp_path / "book.zip"
    shutil.copy(DOCS_CLEAN / "ebooklib_sample_book.epub", disguised_epub)
    assert detect_format(disguised_epub) is DocFormat.EPUB


def test_zero_bytes_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as info:
        detect_format(DOCS_NASTY / "zero_bytes.pdf")
    assert info.value.reason == "empty file (0 bytes)"
    assert type(info.value) is ParseError


def test_unsupported(tmp_path: Path) -> None:
    png = tmp_path / "image.pdf"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with pytest.raises(UnsupportedFormat, match="image/png"):
        detect_format(png)
    unknown = tmp_path / "data.xyz"
    unknown.write_text("hello")
    with pytest.raises(UnsupportedFormat, match=r"\.xyz"):
        detect_format(unknown)
    plain_zip = tmp_path / "archive.zip"
    shutil.make_archive(str(tmp_path / "archive"), "zip", root_dir=tmp_path, base_dir="data.xyz")
    with pytest.raises(UnsupportedFormat, match="application/zip"):
        detect_format(plain_zip)


def test_clean_text() -> None:
    raw = "a\x00b  \t c\r\n\r\n\r\n\r\nnext\u00a0 line \x07\nsoft\u00adhyphen  "
    assert clean_text(raw) == "ab c\n\nnext line\nsofthyphen"


@pytest.mark.parametrize(
    ("candidates", "expected"),
    [
        (("6489122611071476 1..10",), "stem"),
        (("ipg1300180a",), "stem"),
        (("zen_of_python.txt",), "stem"),
        (("PowerPoint Presentation", "Slide Heading"), "Slide Heading"),
        (
            ("", None, "  Construction of the Literature\nGraph "),
            "Construction of the Literature Graph",
        ),
        (("Introduction",), "Introduction"),
    ],
)
def test_pick_title(candidates: tuple[str | None, ...], expected: str) -> None:
    assert pick_title(*candidates, fallback="stem") == expected
