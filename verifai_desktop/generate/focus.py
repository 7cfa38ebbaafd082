"""A smaller prompt at the same quality: each passage trimmed to the sentences that bear on the
question and their neighbours (issue 40, item 2).

Prompt reading dominates the wait for the first word on a CPU, and most sentences of a
retrieved passage do not bear on the question. With ``generation.reading_sentences`` = ``n``,
each passage the generator reads keeps its ``n`` sentences that share the most rare words with
the question (the IDF weight of :func:`~verifai_desktop.generate.quote.sentence_scores`, over
the sentences of all passages offered), each with :data:`NEIGHBOURS` sentence on either side
for context, and its first sentence (where a passage names its subject: the study, the
population, the system). Runs that are not adjacent are joined by an ellipsis. A passage no
longer than what would be kept stays whole.

Only the text the generator reads is trimmed: the answer's passages, what verification reads
and what the app shows are the whole passages. The reading budget was chosen on PubMedQA dev
questions 41-80 (``benchmarks/reading_budget.py``; README, Measured).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from verifai_desktop.domain import Passage
from verifai_desktop.generate.passages import ELLIPSIS
from verifai_desktop.generate.quote import sentence_scores

NEIGHBOURS = 1
"""Sentences kept on either side of a chosen one."""


def kept_sentences(scores: Sequence[float], keep: int, neighbours: int = NEIGHBOURS) -> list[int]:
    """Indices (ascending) of the sentences a passage keeps.

    Args:
        scores: one score per sentence of the passage, in order (higher bears more on the
            question; 0 shares no word with it).
        keep: sentences chosen by score (ties: earlier first); only sentences scoring above 0
            are chosen, so a passage sharing no word with the question keeps its opening.
        neighbours: sentences kept on either side of each chosen one.

    Returns:
        The first sentence, the chosen ones and their neighbours; all when ``keep`` is 0 or
        less (no trimming).
    """
    n = len(scores)
    if keep <= 0 or n == 0:
        return list(range(n))
    ranked = sorted((i for i in range(n) if scores[i] > 0), key=lambda i: (-scores[i], i))
    chosen = {0}
    for i in ranked[:keep]:
        chosen.update(range(max(i - neighbours, 0), min(i + neighbours + 1, n)))
    return sorted(chosen)


def focus_passage(passage: Passage, kept: Sequence[int]) -> Passage:
    """A copy of ``passage`` whose text holds only the sentences ``kept`` (indices into its
    ``sentence_spans``, ascending), runs joined by a space, gaps by an ellipsis
    (:data:`~verifai_desktop.generate.passages.ELLIPSIS`); ``sentence_spans`` point into the
    new text. The passage itself when every sentence is kept."""
    spans = passage.sentence_spans
    if len(kept) == len(spans):
        return passage
    parts: list[str] = []
    new_spans: list[tuple[int, int]] = []
    length = 0
    previous = -1
    for i in kept:
        start, end = spans[i]
        sentence = passage.text[start:end].strip()
        if parts:
            glue = " " if i == previous + 1 else f"{ELLIPSIS} "
            parts.append(glue)
            length += len(glue)
        new_spans.append((length, length + len(sentence)))
        parts.append(sentence)
        length += len(sentence)
        previous = i
    if previous < len(spans) - 1:
        parts.append(ELLIPSIS)
    return dataclasses.replace(passage, text="".join(parts), sentence_spans=tuple(new_spans))


def passage_scores(question: str, passages: Sequence[Passage]) -> list[list[float]]:
    """How much each sentence of each passage bears on ``question``
    (:func:`~verifai_desktop.generate.quote.sentence_scores`, the IDF taken over the sentences
    of all ``passages`` together, so a word every passage repeats counts little).

    Returns:
        One list per passage, one score per sentence of its ``sentence_spans``.
    """
    flat = sentence_scores(question, [s for p in passages for s in p.sentences()])
    out: list[list[float]] = []
    at = 0
    for passage in passages:
        n = len(passage.sentence_spans)
        out.append(flat[at : at + n])
        at += n
    return out


def focus_to_fit(
    passage: Passage,
    scores: Sequence[float],
    max_tokens: int,
    count_tokens: Callable[[str], int],
    neighbours: int = NEIGHBOURS,
) -> str | None:
    """The text of ``passage`` cut to ``max_tokens`` around what bears on the question: for the
    passage that crosses the reading budget, which would otherwise keep only its opening.

    Sentences scoring above 0 are taken best first (ties: earlier first), each with its
    ``neighbours`` when they fit and alone otherwise, while the text (with its ellipses) fits;
    then the first sentence (the passage's subject) when it still fits. The kept sentences are
    joined in passage order as :func:`focus_passage` joins them.

    Args:
        passage: the passage (its ``sentence_spans`` give the sentences).
        scores: one score per sentence (:func:`passage_scores`).
        max_tokens: tokens the kept text may take.
        count_tokens: the generator's tokenizer, ``text -> number of tokens``.
        neighbours: sentences kept on either side of a chosen one, room permitting.

    Returns:
        The cut text; the whole text when it fits; None when no sentence shares a word with
        the question or not even the best sentence fits (the caller keeps the opening).
    """
    if count_tokens(passage.text) <= max_tokens:
        return passage.text
    n = len(passage.sentence_spans)
    ranked = sorted((i for i in range(n) if scores[i] > 0), key=lambda i: (-scores[i], i))
    kept: set[int] = set()
    text: str | None = None

    def fits(candidate: set[int]) -> str | None:
        cut = focus_passage(passage, sorted(candidate)).text
        return cut if count_tokens(cut) <= max_tokens else None

    for i in ranked:
        if i in kept:
            continue
        wide = set(range(max(i - neighbours, 0), min(i + neighbours + 1, n)))
        for candidate in (kept | wide, kept | {i}):
            cut = fits(candidate)
            if cut is not None:
                kept, text = candidate, cut
                break
    if text is None:
        return None
    if 0 not in kept:
        text = fits(kept | {0}) or text
    return text


def focus_passages(
    question: str, passages: Sequence[Passage], keep: int, neighbours: int = NEIGHBOURS
) -> tuple[Passage, ...]:
    """Each of ``passages`` trimmed to what bears on ``question`` (:func:`kept_sentences`).

    The IDF weights are taken over the sentences of all ``passages`` together, so a word every
    passage repeats counts little.

    Args:
        question: the user's question.
        passages: the passages offered to the generator, best first.
        keep: sentences chosen per passage (``generation.reading_sentences``); 0 keeps every
            passage whole.
        neighbours: sentences kept on either side of a chosen one.

    Returns:
        The trimmed copies, in the same order (a passage kept whole is returned as is).
    """
    if keep <= 0:
        return tuple(passages)
    return tuple(
        focus_passage(passage, kept_sentences(scores, keep, neighbours))
        for passage, scores in zip(passages, passage_scores(question, passages), strict=True)
    )
