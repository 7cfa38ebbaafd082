"""EPUB parsing with ebooklib: chapters in spine order with their titles."""

from __future__ import annotations

import pytest

from tests.conftest import DOCS_CLEAN, DOCS_NASTY
from verifai_desktop.domain import DocFormat, Location, LocationKind
from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.parse import parse_file


def test_alice_chapters_in_spine_order() -> None:
    doc = parse_file(DOCS_CLEAN / "alice_in_wonderland.epub")
    assert doc.format is DocFormat.EPUB
    assert doc.title == "Alice's Adventures in Wonderland"
    assert [s.location.heading for s in doc.sections] == [
        "Contents",
        "Title Page",
        "Down The Rabbit-Hole",
        "The Pool Of Tears",
        "A Caucus-Race And A Long Tale",
        "The Rabbit Sends In A Little Bill",
        "Advice From A Caterpillar",
        "Pig And Pepper",
        "A Mad Tea-Party",
        "The Queen's Croquet Ground",
        "Who Stole The Tarts?",
        "Alice's Evidence",
    ]
    assert [s.location.number for s in doc.sections] == list(range(1, 13))
    assert all(s.location.kind is LocationKind.CHAPTER for s in doc.sections)
    rabbit = doc.sections[2]
    chapter = doc.text[rabbit.char_start : rabbit.char_end]
    assert chapter.startswith(
        "Down The Rabbit-Hole\n\nAlice was beginning to get very tired of sitting by her sister"
    )
    assert "Curiouser and curiouser!" not in chapter
    tears = doc.sections[3]
    assert "Curiouser and curiouser!" in doc.text[tears.char_start : tears.char_end]


def test_html_blocks_become_lines() -> None:
    doc = parse_file(DOCS_CLEAN / "ebooklib_sample_book.epub")
    assert [s.location for s in doc.sections] == [
        Location(LocationKind.CHAPTER, 1, "Sample book"),
        Location(LocationKind.CHAPTER, 2, "Introduction"),
        Location(LocationKind.CHAPTER, 3, "About this book"),
    ]
    third = doc.sections[2]
    assert doc.text[third.char_start : third.char_end] == (
        "About this book\n\nHelou, this is my book! There are many books, but this one is mine."
    )


def test_single_file_poem_titled_by_its_heading() -> None:
    doc = parse_file(DOCS_CLEAN / "the_waste_land.epub")
    assert [s.location for s in doc.sections] == [
        Location(LocationKind.CHAPTER, 1, "The Waste Land")
    ]
    assert "April is the cruellest month" in doc.text


def test_broken_internal_link_is_fine() -> None:
    doc = parse_file(DOCS_NASTY / "epub_broken_internal_link.epub")
    assert doc.text.startswith("Lorem Ipsum\n\nChapter 1\n\nLorem ipsum dolor sit amet")


def test_truncated_zip() -> None:
    with pytest.raises(ParseError, match="not a readable EPUB"):
        parse_file(DOCS_NASTY / "epub_truncated_zip_no_end_header.epub")
