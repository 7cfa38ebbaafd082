"""Split a generated answer into sentences and read each sentence's citations.

Sentences come from the same splitter as ingest (:func:`verifai_desktop.ingest.sentences.
split_sentences`). Citations are ``[n]`` markers, also grouped (``[1, 3]``) or chained
(``[1][2]``); ``n`` is the 1-based number of a passage in the prompt. A fragment made only of
citation markers (``"... claim. [2]"`` split after the full stop) belongs to the sentence before,
and so do markers opening a sentence when the sentence before cites nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from verifai_desktop.domain import CITATION_NUMBERS, CITATION_RE, strip_citations
from verifai_desktop.ingest.sentences import split_sentences

Splitter = Callable[[str], tuple[tuple[int, int], ...]]

_ONLY_CITATIONS_RE = re.compile(rf"^(?:\s*\[\s*{CITATION_NUMBERS}\s*\]\s*)+[.!?;,]?\s*$")
_LEADING_CITATIONS_RE = re.compile(rf"^(?:\[\s*{CITATION_NUMBERS}\s*\])+")


@dataclass(frozen=True, slots=True)
class ParsedSentence:
    """One answer sentence with its citations read.

    Attributes:
        text: the sentence as generated, markers included.
        char_start: start offset into the answer text.
        char_end: end offset (exclusive) into the answer text.
        citations: valid 1-based passage numbers, in order of first mention, no repeats.
        invalid_citations: numbers cited that name no given passage (0 or > n_passages).
        claim: the sentence without citation markers (the NLI hypothesis).
    """

    text: str
    char_start: int
    char_end: int
    citations: tuple[int, ...]
    invalid_citations: tuple[int, ...]
    claim: str


def parse_citations(text: str, n_passages: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Read the citation numbers of one sentence.

    Args:
        text: a sentence with markers such as ``[1]``, ``[1, 3]``, ``[1; 3]`` or ``[1][2]``.
        n_passages: how many passages were given; valid numbers are 1..n_passages.

    Returns:
        ``(valid, invalid)``: valid numbers in order of first mention without repeats, and
        every out-of-range number as cited (repeats kept, so they can be counted).
    """
    valid: list[int] = []
    invalid: list[int] = []
    for match in CITATION_RE.finditer(text):
        for number_text in re.split(r"[,;]", match.group(1)):
            number = int(number_text)
            if 1 <= number <= n_passages:
                if number not in valid:
                    valid.append(number)
            else:
                invalid.append(number)
    return tuple(valid), tuple(invalid)


def split_answer(
    answer: str, n_passages: int, *, splitter: Splitter | None = None
) -> tuple[ParsedSentence, ...]:
    """Split an answer into sentences and parse each sentence's citations.

    Args:
        answer: the generated answer text.
        n_passages: number of passages given to the generator (citations 1..n_passages).
        splitter: sentence splitter returning half-open spans into its argument; the ingest
            splitter when None.

    Returns:
        The sentences in order; offsets are into ``answer``.
    """
    split = splitter or split_sentences
    spans: list[tuple[int, int]] = []
    for start, end in split(answer):
        if spans and _ONLY_CITATIONS_RE.match(answer[start:end]):
            spans[-1] = (spans[-1][0], end)  # "claim. [2]" -> the marker belongs to the claim
            continue
        lead = _LEADING_CITATIONS_RE.match(answer[start:end])
        if spans and lead and not CITATION_RE.search(answer[spans[-1][0] : spans[-1][1]]):
            # "First claim. [2] Second claim [1]." split after the full stop: [2] is the
            # first claim's (it had none), not a second citation of the next one.
            cut = start + lead.end()
            spans[-1] = (spans[-1][0], cut)
            while cut < end and answer[cut].isspace():
                cut += 1
            start = cut
            if start >= end:
                continue
        spans.append((start, end))
    sentences = []
    for start, end in spans:
        text = answer[start:end]
        valid, invalid = parse_citations(text, n_passages)
        sentences.append(ParsedSentence(text, start, end, valid, invalid, strip_citations(text)))
    return tuple(sentences)


def with_citations(text: str, numbers: tuple[int, ...]) -> str:
    """``text`` with its citation markers replaced by ``numbers``, chained after the sentence
    as the citation grammar writes them (``"Claim. [4][2]"``).

    Args:
        text: one answer sentence, with or without markers.
        numbers: 1-based passage numbers; none leaves the sentence without markers.
    """
    bare = strip_citations(text)
    markers = "".join(f"[{n}]" for n in numbers)
    return f"{bare} {markers}" if markers else bare
