"""Premises for the verifier: the whole passage, or windows of 1 to 3 consecutive sentences.

Sentence-level premises surface contradictions that a whole-passage premise hides: the
contradiction-aware BioGen work (Gao et al. 2024) found sentence-level inference 4.8 times
better at it. Windows are scored separately and the verifier keeps the most decisive one
(aggregation by maximum, see :func:`verifai_desktop.verify.nli.aggregate_windows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Granularity = Literal["passage", "sentences"]
GRANULARITIES: tuple[Granularity, ...] = ("passage", "sentences")
MAX_WINDOW_SENTENCES = 3


def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Sentence offsets ``(start, end)`` into ``text`` (the shared ingest splitter, sentencex)."""
    from verifai_desktop.ingest.sentences import split_sentences

    return split_sentences(text)


def sentence_windows(
    text: str,
    spans: Sequence[tuple[int, int]] | None = None,
    *,
    max_sentences: int = MAX_WINDOW_SENTENCES,
) -> tuple[tuple[int, int], ...]:
    """Windows of 1..``max_sentences`` consecutive sentences, as offsets into ``text``.

    Args:
        text: the passage text.
        spans: its sentence offsets (e.g. ``Passage.sentence_spans``); split here when None.
        max_sentences: the largest window, in sentences.

    Returns:
        Half-open ``(char_start, char_end)`` offsets into ``text``, every window of size 1 first,
        then size 2, and so on; ``((0, len(text)),)`` when ``text`` has no sentence.
    """
    spans = tuple(spans) if spans is not None else sentence_spans(text)
    if not spans:
        return ((0, len(text)),) if text.strip() else ()
    out: list[tuple[int, int]] = []
    for size in range(1, max(1, max_sentences) + 1):
        if size > len(spans):
            break
        for i in range(len(spans) - size + 1):
            out.append((spans[i][0], spans[i + size - 1][1]))
    return tuple(out)
