"""Evidence on real PDFs for the highlight tests: a sentence as the ingest pipeline chunks it,
and the text MuPDF finds under highlight rectangles, compared after normalising the ways a
page and its indexed text legitimately differ (spacing, line-end hyphens, ligatures)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import Chunk, ChunkId, DocId, Passage
from verifai_desktop.ingest.chunking import chunk_document
from verifai_desktop.ingest.pdf import parse_pdf
from verifai_desktop.ingest.pdf_layout import Rect

S2ORC = DOCS_CLEAN / "acl2020_s2orc.pdf"
"""Two-column ACL paper with ligatures (fi, ff) and line-end hyphens throughout."""

LIGATURES = "\ufb00\ufb01\ufb02\ufb03\ufb04"
_BAND = 0.3
"""Share of a rectangle's height left out at its top and at its bottom when reading the text
under it: line boxes of neighbouring lines touch (a line's bottom is the next one's top)."""


@dataclass(frozen=True, slots=True)
class Case:
    """A sentence of a real PDF (whitespace-normalised) and what makes it hard to highlight."""

    name: str
    path: Path
    sentence: str
    page_number: int


CASES = (
    Case(
        # The sentence holding the figure in the issue ("The resulting" was highlighted alone).
        "split across lines",
        S2ORC,
        "The resulting corpus consists of 81.1M papers.",
        4,
    ),
    Case(
        "across a column break",
        S2ORC,
        "There is an opportunity to use these tables for corpus-level results extraction "
        "and aggregation.",
        8,
    ),
    Case(
        # "suf\ufb01-" at a line end, "cient" on the next line.
        "ligature and hyphenation at a line end",
        S2ORC,
        "The size of S2ORC makes it more than sufficient for pretraining large language models "
        "such as ELMO, BERT, ROBERTA, GPT2, and others, whose reported training data sizes are "
        "given in Table 9 for comparison.",
        14,
    ),
)


def words(text: str) -> str:
    """``text`` with line-end hyphens joined, ligatures spelled out (NFKC) and each run of
    whitespace made one space."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"(?<=[a-z])-\s*\n\s*(?=[a-z])", "", text)
    return " ".join(text.split())


def ingested(path: Path) -> tuple[Chunk, ...]:
    """The chunks of ``path`` as ingest makes them (a whitespace word count as the tokenizer)."""
    return chunk_document(parse_pdf(path), count_tokens=lambda text: len(text.split()))


def passage_and_span(case: Case) -> tuple[Passage, tuple[int, int]]:
    """The chunk holding ``case.sentence`` as a passage, and the sentence's offsets into it
    (one of the chunk's sentence spans, as the verifier's evidence window would be)."""
    for chunk in ingested(case.path):
        for start, end in chunk.sentence_spans:
            if words(chunk.text[start:end]) == case.sentence:
                passage = Passage(
                    ChunkId(chunk.ordinal + 1),
                    DocId(1),
                    case.path,
                    case.path.stem,
                    chunk.text,
                    chunk.char_start,
                    chunk.char_end,
                    chunk.location,
                    chunk.sentence_spans,
                )
                return passage, (start, end)
    raise AssertionError(f"{case.sentence!r} is no sentence of {case.path.name}")


def text_under(page: pymupdf.Page, rects: Iterable[Rect], *, flags: int = 0) -> str:
    """The page's text under each rectangle (its middle band), one line per rectangle."""
    textpage = page.get_textpage(flags=flags)
    out = []
    for r in rects:
        inset = (r.y1 - r.y0) * _BAND
        clip = pymupdf.Rect(r.x0, r.y0 + inset, r.x1, r.y1 - inset)  # type: ignore[no-untyped-call]
        out.append(page.get_textbox(clip, textpage=textpage))
    return "\n".join(out)
