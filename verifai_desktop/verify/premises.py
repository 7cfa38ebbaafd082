"""Premises for the verifier: the whole passage, or windows of 1 to 3 consecutive sentences.

Sentence-level premises surface contradictions that a whole-passage premise hides: the
contradiction-aware BioGen work (Gao et al. 2024) found sentence-level inference 4.8 times
better at it. Windows are scored separately and the most decisive one is kept (aggregation by
maximum, see :func:`verifai_desktop.verify.check.verify_pairs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.settings import PremiseGranularity

GRANULARITIES: tuple[PremiseGranularity, ...] = get_args(PremiseGranularity)
"""Every premise granularity, ``("passage", "sentences")``."""
MAX_WINDOW_SENTENCES = 3


def sentence_windows(
    text: str,
    spans: Sequence[tuple[int, int]] | None = None,
    *,
    max_sentences: int = MAX_WINDOW_SENTENCES,
) -> tuple[tuple[int, int], ...]:
    """Windows of 1..``max_sentences`` consecutive sentences, as offsets into ``text``.

    Args:
        text: the passage text.
        spans: its sentence offsets (e.g. ``Passage.sentence_spans``); split here with the
            ingest splitter (sentencex) when None.
        max_sentences: the largest window, in sentences.

    Returns:
        Half-open ``(char_start, char_end)`` offsets into ``text``, every window of size 1 first,
        then size 2, and so on; ``((0, len(text)),)`` when ``text`` has no sentence but is not
        blank; ``()`` for a blank text.
    """
    spans = tuple(spans) if spans is not None else split_sentences(text)
    if not spans:
        return ((0, len(text)),) if text.strip() else ()
    out: list[tuple[int, int]] = []
    for size in range(1, max(1, max_sentences) + 1):
        if size > len(spans):
            break
        for i in range(len(spans) - size + 1):
            out.append((spans[i][0], spans[i + size - 1][1]))
    return tuple(out)
