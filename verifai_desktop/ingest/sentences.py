"""Sentence splitting with sentencex, as half-open offsets into the original text.

sentencex (Wikimedia's rule-based splitter: abbreviations, decimals, initials) does the
splitting inside a block of running text. Before it runs, the text is cut at boundaries it
cannot see because they are layout, not punctuation: blank lines (paragraphs), line breaks
before list items, after table rows (``"cell | cell"``) and after heading-like short lines with
no final punctuation ("2 Methods" followed by the section text). Single line breaks inside a
paragraph (hard-wrapped PDF lines) are not boundaries.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import sentencex

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v]*\n\s*")
_LIST_ITEM = re.compile(
    r"^\s*(?:[-*+\u2022\u00b7\u25aa\u25e6\u2023\u2013\u2014>]|\d{1,3}[.)]|[a-zA-Z][.)])\s"
)
_NO_BREAK_END = frozenset(".!?,;:-\u2013\u2014([/&")
_MARKER_ONLY = re.compile(r"^\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)]$")
_NUMBER_ABBREVIATIONS = frozenset(
    {
        "fig", "figs", "eq", "eqs", "approx", "no", "nos", "ref", "refs", "vol", "p", "pp",
        "ca", "cf", "sec", "ch", "chap", "suppl", "tab", "art", "para", "ex", "vs", "nr",
    }
)  # fmt: skip
_LEADING_WORD = re.compile(r"[^\W\d_]+(?=[\s.,;:)]|$)")
_ABBREVIATION_MAX_LEN = 4
_SHORT_LINE_RATIO = 0.6
_SHORT_LINE_WORDS = 8

Span = tuple[int, int]


def _paragraphs(text: str) -> Iterator[Span]:
    """Blank-line separated blocks of ``text``."""
    start = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        yield start, match.start()
        start = match.end()
    yield start, len(text)


def _is_layout_break(prev: str, nxt: str, before_len: int, n_lines: int) -> bool:
    """Whether the line break between stripped lines ``prev`` and ``nxt`` ends a sentence.

    ``before_len`` is the length of the line before ``prev`` (0 if none): a heading is a line
    clearly shorter than its neighbours that does not end in punctuation.
    """
    if not prev or not nxt:
        return True
    if _LIST_ITEM.match(nxt) or " | " in prev or " | " in nxt:
        return True
    if prev[-1] in _NO_BREAK_END:
        return False  # sentencex decides after .!?; , ; - etc. continue the sentence
    first = nxt[0]
    if not (first.isupper() or first.isdigit() or first in "\"'\u201c\u2018"):
        return False
    if n_lines <= 2:
        return len(prev.split()) <= _SHORT_LINE_WORDS
    return len(prev) < _SHORT_LINE_RATIO * max(len(nxt), before_len)


def _blocks(text: str, start: int, end: int) -> Iterator[Span]:
    """Cut one paragraph ``text[start:end]`` at layout line breaks."""
    if "\n" not in text[start:end]:
        yield start, end
        return
    line_spans: list[Span] = []
    pos = start
    while pos <= end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        line_spans.append((pos, stop))
        if nl < 0:
            break
        pos = nl + 1
    lines = [text[a:b].strip() for a, b in line_spans]
    block_start = start
    for i in range(len(lines) - 1):
        before_len = len(lines[i - 1]) if i > 0 else 0
        if _is_layout_break(lines[i], lines[i + 1], before_len, len(lines)):
            yield block_start, line_spans[i][1]
            block_start = line_spans[i + 1][0]
    yield block_start, end


def _trim(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _segments(block: str) -> list[Span]:
    """sentencex segments of one block as offsets into it, contiguous and covering it."""
    spans: list[Span] = []
    cursor = 0
    for segment in sentencex.segment("en", block):
        if not segment:
            continue
        found = block.find(segment, cursor)
        if found < 0:  # sentencex changed the text: keep the rest as one sentence
            break
        end = found + len(segment)
        spans.append((cursor, end))
        cursor = end
    if cursor < len(block):
        spans.append((cursor, len(block)))
    return spans


def _continues(prev: str, nxt: str) -> bool:
    """Whether sentencex's cut between stripped segments ``prev`` and ``nxt`` is wrong.

    Cases it gets wrong on scientific text: a list number alone ("1."), an abbreviation before
    a number ("Fig. 2", "approx. 0.05"), and a cut after a short word and "." followed by an
    all-lower-case word ("12 pts. vs. 1.2 mg").
    """
    if not prev or not nxt:
        return False
    if _MARKER_ONLY.match(prev):
        return True
    if prev[-1] != ".":
        return False
    last_word = prev[:-1].rsplit(None, 1)[-1].lower() if prev[:-1].strip() else ""
    first_word = _LEADING_WORD.match(nxt)
    if first_word is not None and first_word.group(0).islower():
        # "12 pts. vs. 1.2 mg" but not "were lysed. mRNA was" (mixed case) or "p53 ..." (digit)
        return len(last_word) <= _ABBREVIATION_MAX_LEN or last_word in _NUMBER_ABBREVIATIONS
    if nxt[0].isdigit():
        return last_word in _NUMBER_ABBREVIATIONS
    return False


def split_sentences(text: str) -> tuple[Span, ...]:
    """Split text into sentences.

    Args:
        text: any text (a document, a chunk, an answer).

    Returns:
        Half-open ``(start, end)`` character offsets into ``text``, in order, non-overlapping,
        each trimmed of surrounding whitespace and non-empty; together they cover every
        non-whitespace character of ``text``.
    """
    spans: list[Span] = []
    for p_start, p_end in _paragraphs(text):
        for b_start, b_end in _blocks(text, p_start, p_end):
            block = text[b_start:b_end]
            if not block.strip():
                continue
            merged: list[Span] = []
            for start, end in _segments(block):
                if merged and _continues(
                    block[merged[-1][0] : merged[-1][1]].strip(), block[start:end].strip()
                ):
                    merged[-1] = (merged[-1][0], end)
                else:
                    merged.append((start, end))
            for start, end in merged:
                span = _trim(text, b_start + start, b_start + end)
                if span is not None:
                    spans.append(span)
    return tuple(spans)
