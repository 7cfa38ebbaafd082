"""Which retrieved passages the generator reads: near-duplicates dropped, a token budget filled.

Every passage in the prompt costs prompt-reading time before the first token (about 20-50
tokens/s for the bundled 0.5B model on 2 CPU cores), so the prompt holds no text twice and no
more text than :class:`~verifai_desktop.settings.GenerationSettings` allows.

Near-duplicates (the better-ranked one is kept):

- two chunks of the same document whose character ranges overlap by at least
  :data:`SAME_DOCUMENT_OVERLAP` of the shorter one (chunk windows over the same text), or
- any two passages of which at least :data:`SHARED_SHINGLES` of the shorter one's word
  3-grams occur in the other (the same file ingested twice, a passage quoted whole in another,
  a publisher's boilerplate repeated in every paper).

Chunks of one document that share only the sentence of chunk overlap are not duplicates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from verifai_desktop.domain import Passage

SAME_DOCUMENT_OVERLAP = 0.5
"""Share of the shorter chunk's characters two chunks of one document must share."""

SHARED_SHINGLES = 0.8
"""Share of the shorter passage's word 3-grams that must occur in the other passage."""

MIN_PART_TOKENS = 64
"""A passage that crosses the budget is cut to the budget left only when at least this many
tokens are left (a few sentences); otherwise it is left out. The first passage is always given."""

ELLIPSIS = " …"

_WORD = re.compile(r"\w+")


def _shingles(text: str) -> frozenset[tuple[str, ...]]:
    """Lower-cased word 3-grams of ``text`` (the words themselves when fewer than three)."""
    words = _WORD.findall(text.lower())
    if len(words) < 3:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(zip(words, words[1:], words[2:], strict=False))


def near_duplicates(a: Passage, b: Passage) -> bool:
    """Whether two passages hold the same or nearly the same text (see the module docstring)."""
    if a.doc_id == b.doc_id:
        shared = min(a.char_end, b.char_end) - max(a.char_start, b.char_start)
        shorter = min(a.char_end - a.char_start, b.char_end - b.char_start)
        if shared > 0 and shared >= SAME_DOCUMENT_OVERLAP * shorter:
            return True
    sa, sb = _shingles(a.text), _shingles(b.text)
    if not sa or not sb:
        return a.text.strip() == b.text.strip()
    return len(sa & sb) >= SHARED_SHINGLES * min(len(sa), len(sb))


def dedupe_passages(passages: Sequence[Passage]) -> tuple[Passage, ...]:
    """The passages without near-duplicates, in their order; of two duplicates the earlier
    (better-ranked) one is kept.

    Args:
        passages: retrieved passages, best first.

    Returns:
        The kept passages, best first.
    """
    kept: list[Passage] = []
    for passage in passages:
        if not any(near_duplicates(passage, other) for other in kept):
            kept.append(passage)
    return tuple(kept)


def truncate_passage(passage: Passage, max_tokens: int, count_tokens: Callable[[str], int]) -> str:
    """The passage's leading whole sentences that fit ``max_tokens`` (at least a prefix), with
    an ellipsis when anything was cut.

    Args:
        passage: the passage (its ``sentence_spans`` give the cut points).
        max_tokens: tokens the kept text plus the ellipsis may take.
        count_tokens: the generator's tokenizer, ``text -> number of tokens``.
    """
    text = passage.text
    if count_tokens(text) <= max_tokens:
        return text
    kept_end = 0
    for _start, end in passage.sentence_spans:
        if count_tokens(text[:end]) + 2 > max_tokens:
            break
        kept_end = end
    if kept_end == 0:  # the first sentence alone is too long: cut it by characters
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count_tokens(text[:mid]) + 2 <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        kept_end = lo
    return text[:kept_end].rstrip() + ELLIPSIS
