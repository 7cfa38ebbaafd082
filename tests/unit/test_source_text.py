"""A passage of a Markdown or text file is found again in the file as written (issue 42, item
10): its offsets and its line, whatever the parser did to markup and spacing; a real file of
docs/clean, parsed and chunked as an ingest does."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import DOCS_CLEAN
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.ingest.source_text import SourceText, passage_line, read_source

MD = DOCS_CLEAN / "deep_rules_09_overfitting.md"


def test_markup_and_spacing_do_not_matter(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(
        "# Title\n\nFirst line.\n\nA **bold** claim,\nwrapped   over two lines.\n", "utf-8"
    )
    source = read_source(path)
    assert source is not None
    span = source.locate("A bold claim, wrapped over two lines.")
    assert span is not None
    assert source.text[span[0] : span[1]] == "A **bold** claim,\nwrapped   over two lines"
    assert source.line_of(span[0]) == 5
    assert source.locate("not in the file at all") is None
    assert read_source(tmp_path / "paper.pdf") is None


def test_a_real_markdown_files_paragraphs_are_found_at_their_lines(shared_data: Path) -> None:
    document = parse_file(MD)
    source = read_source(MD)
    assert source is not None
    lines = source.text.split("\n")
    found = 0
    for paragraph in document.text.split("\n"):
        if len(paragraph) < 40:
            continue
        span = source.locate(paragraph)
        assert span is not None, paragraph[:60]
        line = source.line_of(span[0])
        # The line found holds the paragraph's first word as written.
        first_word = next(w for w in paragraph.split() if w.isalnum())
        assert first_word.lower() in lines[line - 1].lower()
        assert passage_line(MD, paragraph) == line
        found += 1
    assert found >= 3


def test_a_link_dropped_by_the_parser_is_bridged() -> None:
    source = SourceText.of(
        Path("x.md"),
        "Intro.\n\nSee [the guide](https://example.org/guide) for every detail of the "
        "method and its many parameters, then run the tool on your data.\n",
    )
    parsed = (
        "See the guide for every detail of the method and its many parameters, then run the "
        "tool on your data."
    )
    span = source.locate(parsed)
    assert span is not None
    assert source.text[span[0] :].startswith("See [the guide]")
    assert source.text[: span[1]].endswith("your data")
