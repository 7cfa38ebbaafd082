"""Where a PDF page's text sits on the page: the parser's page text with a box per character,
and the rectangles that cover a span of it (the evidence highlight of the document view).

The page text is the one :func:`verifai_desktop.ingest.pdf.parse_pdf` indexes (the same
function makes it), so a chunk's offsets carry over to the page: a chunk lies within one page
(chunks never cross a section), its text is found in the page text, and an offset into the
chunk becomes an offset into the page text. Each character of that text is paired with the
glyph MuPDF placed for it (``page.get_text("rawdict")``, the same extraction flags): both come
from one structured-text pass in the same order, and the page text only drops characters
(line-end hyphens, control characters, soft hyphens) and folds whitespace, so a left-to-right
walk pairs them. Ligature glyphs are already split ("ﬁ" -> "f", "i", each with its share of
the glyph's box); a dropped line-end hyphen is drawn with the character before it.

The rectangles of a span are one per text line it touches: a sentence broken over lines, or
over a column break, gets a rectangle per line piece and nothing in between.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pymupdf

from verifai_desktop.ingest.pdf import TEXT_FLAGS, page_text

_SKIPPABLE = frozenset("-\u00ad")
"""Glyphs the page text may drop besides whitespace and control characters: a line-end hyphen
("appro-" + "priately") and the soft hyphen."""

_NEIGHBOURS = (0, 1, -1)
"""Pages searched for evidence whose passage text is not on its page as ingested (the file was
re-saved since): the passage's page, then the next and the previous one."""


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned rectangle on a PDF page, in PDF points, origin at the top left
    (PyMuPDF's page coordinates, before any rotation of the page is applied)."""

    x0: float
    y0: float
    x1: float
    y1: float

    def union(self, other: Rect) -> Rect:
        """The smallest rectangle holding both."""
        return Rect(
            min(self.x0, other.x0),
            min(self.y0, other.y0),
            max(self.x1, other.x1),
            max(self.y1, other.y1),
        )


@dataclass(frozen=True, slots=True)
class PageLayout:
    """A page's text as indexed, with where each character is drawn.

    Attributes:
        page_index: 0-based page number.
        text: the page text exactly as :func:`~verifai_desktop.ingest.pdf.page_text` gives it
            (the page's section of ``Document.text``).
        boxes: one entry per character of ``text``: its glyph's box (joined with the box of a
            line-end hyphen the text dropped after it), or ``None`` for a character with no
            glyph of its own (whitespace, line breaks).
        lines: one entry per character of ``text``: the 0-based number of the text line
            (MuPDF's structured text, in extraction order) holding its glyph, -1 where
            ``boxes`` is ``None``.
    """

    page_index: int
    text: str
    boxes: tuple[Rect | None, ...]
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PageSpan:
    """A half-open ``[char_start, char_end)`` span of one page's :attr:`PageLayout.text`."""

    page_index: int
    char_start: int
    char_end: int


def _glyphs(page: pymupdf.Page) -> list[tuple[str, Rect | None, int]]:
    """The page's characters in extraction order as ``(char, box, line)``, with a ``"\\n"``
    (no box, line -1) after each line and each block, as the plain-text output has them."""
    out: list[tuple[str, Rect | None, int]] = []
    line_no = 0
    raw: dict[str, Any] = page.get_text("rawdict", flags=TEXT_FLAGS)  # type: ignore[no-untyped-call]
    for block in raw["blocks"]:
        if block["type"] != 0:  # an image block
            continue
        for line in block["lines"]:
            for span in line["spans"]:
                for ch in span["chars"]:
                    c: str = ch["c"]
                    box = None if c.isspace() else Rect(*(float(v) for v in ch["bbox"]))
                    out.append((c, box, line_no if box else -1))
            out.append(("\n", None, -1))
            line_no += 1
        out.append(("\n", None, -1))
    return out


def page_layout(page: pymupdf.Page) -> PageLayout:
    """The page's indexed text with the box of each character.

    Args:
        page: the page.

    Returns:
        The layout; a character that cannot be paired with a glyph (an extraction the walk
        does not understand, never seen on the test documents) has no box, so a span over it
        is highlighted without it rather than wrongly.
    """
    text = page_text(page)
    glyphs = _glyphs(page)
    boxes: list[Rect | None] = []
    lines: list[int] = []
    j = 0
    for ch in text:
        space = ch.isspace()
        k = j
        while k < len(glyphs):
            g = glyphs[k][0]
            if g == ch or (space and g.isspace()):
                break
            if not (g.isspace() or g in _SKIPPABLE or g < " "):
                k = len(glyphs)  # a glyph the page text cannot have dropped: no pair
                break
            k += 1
        if k < len(glyphs):
            for _, dropped, on_line in glyphs[j:k]:
                # A dropped line-end hyphen ("pa-" of "papers") is highlighted with its word.
                if dropped is not None and boxes and lines[-1] == on_line:
                    last = boxes[-1]
                    boxes[-1] = dropped if last is None else last.union(dropped)
            _, box, line = glyphs[k]
            boxes.append(box)
            lines.append(line)
            j = k + 1
        else:
            boxes.append(None)
            lines.append(-1)
    return PageLayout(page.number, text, tuple(boxes), tuple(lines))


def span_rects(layout: PageLayout, char_start: int, char_end: int) -> tuple[Rect, ...]:
    """The rectangles covering ``layout.text[char_start:char_end]``: one per text line the
    span touches, from its first to its last glyph on that line (the spaces between words
    included, nothing of the line outside the span).

    Args:
        layout: the page's text and character boxes.
        char_start: start offset into ``layout.text``.
        char_end: end offset (exclusive); clamped to the text.

    Returns:
        Rectangles in PDF points, in the span's reading order; ``()`` for an empty span or one
        without glyphs.
    """
    pieces: dict[int, Rect] = {}
    for i in range(max(0, char_start), min(char_end, len(layout.text))):
        box = layout.boxes[i]
        if box is None:
            continue
        line = layout.lines[i]
        seen = pieces.get(line)
        pieces[line] = box if seen is None else seen.union(box)
    return tuple(pieces.values())


def _key(text: str) -> tuple[str, list[int]]:
    """``text`` reduced to its letters and digits, case-folded and NFKC-normalised (ligatures
    spelled out), with the offset in ``text`` of each kept character."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).casefold():
            if c.isalnum():
                out.append(c)
                where.append(i)
    return "".join(out), where


def _find_loosely(text: str, wanted: str) -> tuple[int, int] | None:
    """Offsets in ``text`` of ``wanted`` compared by letters and digits (spacing, line breaks,
    hyphens and ligatures ignored), with the punctuation ``wanted`` opens and ends with when
    ``text`` has it there too; ``None`` if not found."""
    key, where = _key(text)
    wanted_key, wanted_where = _key(wanted)
    at = key.find(wanted_key) if wanted_key else -1
    if at < 0:
        return None
    start, end = where[at], where[at + len(wanted_key) - 1] + 1
    head = wanted[: wanted_where[0]].lstrip()
    tail = wanted[wanted_where[-1] + 1 :].rstrip()
    if head and text[:start].endswith(head):
        start -= len(head)
    if tail and text.startswith(tail, end):
        end += len(tail)
    return start, end


def locate_span(
    layout_of: Callable[[int], PageLayout],
    page_count: int,
    page_index: int,
    chunk_text: str,
    span: tuple[int, int],
) -> PageSpan | None:
    """Where ``chunk_text[span[0]:span[1]]`` is in the page text, for a chunk that starts on
    page ``page_index``.

    The chunk's text is looked up in its page's text: the evidence is then the same offsets
    from there. When the file changed since it was indexed, the evidence itself is looked up
    by its letters and digits on that page, then on the next and the previous one.

    Args:
        layout_of: ``(page_index) -> PageLayout`` (e.g. a cache over :func:`page_layout`).
        page_count: number of pages of the document.
        page_index: 0-based page where the chunk starts (``Location.number - 1``).
        chunk_text: the chunk's text (``Passage.text``).
        span: ``(start, end)`` offsets into ``chunk_text`` (``Verdict.evidence_span``).

    Returns:
        The span on its page, or ``None`` if the evidence is on none of those pages or the
        span is empty.
    """
    start, end = max(0, span[0]), min(len(chunk_text), span[1])
    if start >= end or not 0 <= page_index < page_count:
        return None
    layout = layout_of(page_index)
    at = layout.text.find(chunk_text)
    if at >= 0:
        return PageSpan(page_index, at + start, at + end)
    for step in _NEIGHBOURS:
        index = page_index + step
        if not 0 <= index < page_count:
            continue
        found = _find_loosely(layout_of(index).text, chunk_text[start:end])
        if found is not None:
            return PageSpan(index, *found)
    return None
