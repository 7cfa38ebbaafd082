"""PDF parsing with PyMuPDF: text per page at the right page number."""

from __future__ import annotations

import pytest

from tests.conftest import DOCS_CLEAN, DOCS_NASTY
from verifai_desktop.domain import DocFormat, Document, Location, LocationKind
from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.parse import parse_file


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
