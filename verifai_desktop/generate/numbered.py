"""Sentences of the prompt's passages, numbered by passage (``"2.3"``: passage 2's third)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verifai_desktop.ingest.sentences import split_sentences


@dataclass(frozen=True, slots=True)
class NumberedSentence:
    """One sentence of a prompt's passages.

    Attributes:
        ref: its number, ``"<passage>.<sentence>"``, both 1-based (``"2.3"``).
        passage: the 1-based passage number it belongs to (its citation ``[n]``).
        text: the sentence (whitespace collapsed).
    """

    ref: str
    passage: int
    text: str


def number_sentences(texts: Sequence[str]) -> tuple[NumberedSentence, ...]:
    """Every sentence of ``texts`` (``texts[i]`` is passage ``i + 1``), numbered, in order.

    Sentences are split with :func:`~verifai_desktop.ingest.sentences.split_sentences` and
    their whitespace collapsed.
    """
    sentences: list[NumberedSentence] = []
    for p, text in enumerate(texts, start=1):
        for s, (start, end) in enumerate(split_sentences(text), start=1):
            sentence = " ".join(text[start:end].split())
            sentences.append(NumberedSentence(f"{p}.{s}", p, sentence))
    return tuple(sentences)
