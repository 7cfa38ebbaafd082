"""The evidence highlight on real PDFs: the page text with a box per character is the indexed
text, and a sentence's rectangles cover its words and nothing of its neighbours, across line
breaks, a column break, a ligature and a hyphenated line end."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from tests.conftest import DOCS_CLEAN
from tests.pdf_evidence import (
    CASES,
    LIGATURES,
    S2ORC,
    Case,
    passage_and_span,
    text_under,
    words,
)
from verifai_desktop.ingest.pdf import parse_pdf
from verifai_desktop.ingest.pdf_layout import (
    PageLayout,
    Rect,
    locate_span,
    page_layout,
    span_rects,
)


@pytest.mark.parametrize(
    "name",
    ["acl2020_s2orc.pdf", "hindawi_rehab_res_pract_2010.pdf", "int_psychogeriatrics_2014.pdf"],
)
def test_page_layout_is_the_indexed_text_with_a_box_per_glyph(name: str, shared_data: Path) -> None:
    path = DOCS_CLEAN / name
    doc = parse_pdf(path)
    with pymupdf.open(path) as pdf:  # type: ignore[no-untyped-call]
        layouts = [page_layout(page) for page in pdf]
    pages = {s.location.number: doc.text[s.char_start : s.char_end] for s in doc.sections}
    assert {i + 1: lay.text for i, lay in enumerate(layouts) if lay.text} == pages
    for lay in layouts:
        assert len(lay.boxes) == len(lay.lines) == len(lay.text)
        unplaced = [c for c, box in zip(lay.text, lay.boxes, strict=True) if box is None]
        assert all(c.isspace() for c in unplaced)
        assert all(
            (box is None) == (line == -1) for box, line in zip(lay.boxes, lay.lines, strict=True)
        )


def _layout(text: str, lines: list[int]) -> PageLayout:
    """Glyphs 10 pt wide, line ``n`` from y = 20 n to 20 n + 12; spaces have no box."""
    boxes: list[Rect | None] = []
    for i, (c, line) in enumerate(zip(text, lines, strict=True)):
        x = 10.0 * (i - lines.index(line))
        boxes.append(None if c.isspace() else Rect(x, 20.0 * line, x + 10, 20.0 * line + 12))
    return PageLayout(
        0,
        text,
        tuple(boxes),
        tuple(-1 if b is None else n for b, n in zip(boxes, lines, strict=True)),
    )


def test_span_rects_is_one_rectangle_per_line_piece() -> None:
    # "ab cd" on line 0, "ef gh" on line 1, joined by a line break.
    layout = _layout("ab cd\nef gh", [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    # From "cd" to "ef": the end of line 0 and the start of line 1, nothing else.
    assert span_rects(layout, 3, 8) == (Rect(30, 0, 50, 12), Rect(0, 20, 20, 32))
    # Within a line the spaces between words are covered.
    assert span_rects(layout, 0, 5) == (Rect(0, 0, 50, 12),)
    assert span_rects(layout, 2, 3) == () and span_rects(layout, 4, 4) == ()
    assert span_rects(layout, 6, 99) == (Rect(0, 20, 50, 32),)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rectangles_cover_the_sentence_and_nothing_else(case: Case, shared_data: Path) -> None:
    passage, span = passage_and_span(case)
    with pymupdf.open(case.path) as pdf:  # type: ignore[no-untyped-call]
        pages = {}

        def layout_of(index: int) -> PageLayout:
            if index not in pages:
                pages[index] = page_layout(pdf[index])
            return pages[index]

        assert passage.location.number is not None
        found = locate_span(
            layout_of, pdf.page_count, passage.location.number - 1, passage.text, span
        )
        assert found is not None and found.page_index == case.page_number - 1
        rects = span_rects(layout_of(found.page_index), found.char_start, found.char_end)
        page = pdf[found.page_index]
        assert words(text_under(page, rects)) == case.sentence
        raw = text_under(page, rects, flags=pymupdf.TEXT_PRESERVE_LIGATURES)
        half = page.rect.width / 2
    assert len(rects) >= 2  # every case runs over more than one line
    if case.name == "across a column break":
        assert rects[0].x1 < half < rects[-1].x0  # starts in the left column, ends in the right
        assert rects[-1].y1 < rects[0].y0  # at the top of the right column
    if case.name == "ligature and hyphenation at a line end":
        assert any(c in raw for c in LIGATURES) and "suf\ufb01-\ncient" in raw


def test_evidence_of_a_changed_file_is_found_by_its_words(shared_data: Path) -> None:
    case = CASES[0]
    passage, (start, _) = passage_and_span(case)
    # The chunk text is no longer on its page (the file was re-saved since it was indexed):
    # the evidence is matched by its letters and digits, across spacing, hyphens, ligatures.
    evidence = "The result-\ning corpus\u00a0consists of 81.1M papers."
    changed = "Re-saved: " + passage.text[:start] + evidence
    span = (len(changed) - len(evidence), len(changed))
    with pymupdf.open(S2ORC) as pdf:  # type: ignore[no-untyped-call]
        layouts = [page_layout(page) for page in pdf]
    count = len(layouts)
    found = locate_span(layouts.__getitem__, count, case.page_number - 1, changed, span)
    assert found is not None and found.page_index == case.page_number - 1
    assert words(layouts[found.page_index].text[found.char_start : found.char_end]) == (
        case.sentence
    )
    # Recorded on the page before: looked for there, then on the next page, found on page 4.
    assert locate_span(layouts.__getitem__, count, case.page_number - 2, changed, span) == found
    # Evidence on none of the pages searched, or an empty span: nothing to highlight.
    assert locate_span(layouts.__getitem__, count, 3, "Not in this paper.", (0, 18)) is None
    assert locate_span(layouts.__getitem__, count, 3, passage.text, (5, 5)) is None
