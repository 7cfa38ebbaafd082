"""Markdown (heading paths) and plain text in any common encoding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN, DOCS_NASTY
from verifai_desktop.domain import DocFormat, Location, LocationKind
from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.ingest.text import decode_text, html_blocks


def test_markdown_heading_paths() -> None:
    doc = parse_file(DOCS_CLEAN / "scifact_data_description.md")
    assert doc.format is DocFormat.MD
    assert doc.title == "Data"
    assert [s.location.heading for s in doc.sections] == [
        "Data",
        "Data > Outline",
        "Data > Claims",
        "Data > Claims > Explanation of cited_doc_ids",
        "Data > Corpus",
        "Data > Code",
    ]
    outline = doc.sections[1]
    assert doc.text[outline.char_start : outline.char_end] == (
        "Outline\n\nClaims\n\nCorpus\n\nCode"  # list items, link markup gone
    )


def test_markdown_attribute_lists_and_emphasis_removed() -> None:
    doc = parse_file(DOCS_CLEAN / "deep_rules_02_intro.md")
    assert doc.sections[0].location == Location(LocationKind.SECTION, None, "Introduction")
    assert doc.text.startswith("Introduction\n\nMachine learning is a modern approach")
    assert "{#intro}" not in doc.text
    assert "##" not in doc.text


def test_markdown_tables_as_rows(tmp_path: Path) -> None:
    md = tmp_path / "t.md"
    md.write_text("# Top\n\nIntro.\n\n## Sub\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter.\n")
    doc = parse_file(md)
    assert doc.text == "Top\n\nIntro.\n\nSub\n\na | b\n1 | 2\n\nAfter."
    assert [s.location.heading for s in doc.sections] == ["Top", "Top > Sub"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("txt_cp1252_dutch.txt", ("Stipan Arkadiewitsch was tegenover zich zelf", "al\u2026")),
        ("txt_latin1_portuguese.txt", ("acha-se tão bem determinada", "indicações", "corôa")),
        (
            "txt_cp1251_russian.txt",
            ("\u0412 гимназии он не был в числе первых учеников", "Альберт"),
        ),
        (
            "txt_shift_jis_rashomon_gutenberg.txt",
            ("羅生門\n\n芥川龍之介", "或日の暮方の事である。"),
        ),
    ],
)
def test_txt_encodings(name: str, expected: tuple[str, ...]) -> None:
    doc = parse_file(DOCS_NASTY / name)
    assert doc.format is DocFormat.TXT
    for phrase in expected:
        assert phrase in doc.text
    assert "\ufffd" not in doc.text
    assert doc.sections == (doc.sections[0],)
    assert (doc.sections[0].char_start, doc.sections[0].char_end) == (0, len(doc.text))


def test_utf16le_without_bom_has_no_nuls() -> None:
    raw = (DOCS_NASTY / "txt_utf16le_no_bom.txt").read_bytes()
    doc = parse_file(DOCS_NASTY / "txt_utf16le_no_bom.txt")
    assert "\x00" not in doc.text
    assert doc.text == raw.decode("utf-16-le").replace("\r\n", "\n").strip()
    assert doc.text.startswith("DateTime,Bid,Ask\n07/19/2015 21:00:15.469,1.083,1.08332\n")


def test_decode_boms_and_big_endian(tmp_path: Path) -> None:
    text = "Größe: 5 µm\r\nzweite Zeile"
    path = tmp_path / "x.txt"
    assert decode_text(path, text.encode("utf-16-be")) == "Größe: 5 µm\nzweite Zeile"
    assert decode_text(path, text.encode("utf-16")) == "Größe: 5 µm\nzweite Zeile"
    assert decode_text(path, b"\xef\xbb\xbf" + text.encode()) == "Größe: 5 µm\nzweite Zeile"


def test_binary_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "blob.txt"
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ParseError):
        parse_file(path)


def test_html_blocks() -> None:
    html = (
        "<html><head><title>t</title><style>p{}</style></head><body>"
        "<h2>Head  line</h2><p>One\n two <b>bold</b>.<br/>Next</p>"
        "<ul><li>a</li><li>b <i>c</i></li></ul><script>x()</script>"
        "<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table></body></html>"
    )
    blocks = html_blocks(html)
    assert [(b.heading_level, b.text) for b in blocks] == [
        (2, "Head line"),
        (0, "One two bold.\nNext"),
        (0, "a"),
        (0, "b c"),
        (0, "k | v\n1 | 2"),
    ]
