"""Quote before paraphrasing: for a question that asks for a figure, the sentences that bear
most on it, quoted before the question, with the instruction to keep their figures as written
(issue 39, item 9).

A small generator asked to answer from whole passages often writes the neighbouring figure:
the control arm's value for the treated arm, the total for a sub-group. With
``generation.quote_first`` the prompt quotes, after the passages, the :data:`QUOTED` sentences
of the given passages that share the most rare words with the question (:func:`rank_sentences`),
each with its passage number, and asks for every figure as written there with the group, time
point or measure it belongs to.

Tried first, as the issue proposed: the generator chooses the sentences by their numbers under
a grammar, then writes from them in a second turn. The bundled 0.5B chose sentence ``1.1`` (the
first shown) for each of the first 3 figure questions whatever the question, and when asked
to choose among ranked candidates its writing turn went on listing numbers; so the choice is
made here, by the question's words, and the generator writes in one turn
(``benchmarks/quote_first.py`` has the measurements).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from verifai_desktop.generate.numbered import NumberedSentence
from verifai_desktop.words import STOP_WORDS as STOP_WORDS

QUOTED = 3
"""Sentences quoted before the question."""

QUOTE_HEAD = "The sentences of the passages that bear most on the question:"

KEEP_FIGURES = (
    "Keep every figure exactly as the passages write it, with the group, time point or "
    "measure it belongs to."
)

_WORD = re.compile(r"[a-z][a-z0-9-]+")


FIGURE_QUESTION = re.compile(
    r"\b(how (many|much|long|often|large|high|low|old|big|far)"
    r"|(what|which) (was |were |is |are )?(the )?([\w'-]+ ){0,8}?"
    r"(percentage|percent|proportion|share|fraction|number|rate|rates|ratio|dose|mean|median"
    r"|average|incidence|prevalence|frequency|odds|score|sensitivity|specificity|survival"
    r"|mortality|duration|count|level|levels|value|size|age|risk|yield|accuracy|area"
    r"|concordance|volume|weight|length|time|concentration|amount))\b",
    re.IGNORECASE,
)
"""A question that asks for a quantity ("how many ...", "what was the 5-year survival ...").
It matches all 50 dev figure questions and none of PubMedQA PQA-L questions 41-400 (yes/no
questions), where quoting cost green sentences (``benchmarks/quote_first.py --general``)."""


def asks_for_figure(question: str) -> bool:
    """Whether ``question`` asks for a figure (:data:`FIGURE_QUESTION`); only then are the
    sentences quoted."""
    return FIGURE_QUESTION.search(question) is not None


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def sentence_scores(question: str, texts: Sequence[str]) -> list[float]:
    """How much each of ``texts`` (sentences) bears on ``question``: the sum over the
    question's words it contains of ``log(1 + n / (1 + df))``, ``n`` the number of sentences
    and ``df`` how many contain the word (an IDF over these sentences, so a word every passage
    repeats counts little). Words are lower-cased runs of letters, digits and hyphens starting
    with a letter, without :data:`STOP_WORDS`.

    Returns:
        One score per text, in order; 0.0 for a text sharing no word with the question.
    """
    question_words = _words(question)
    words = [_words(t) for t in texts]
    n = len(texts)
    df = {w: sum(w in ws for ws in words) for w in question_words}
    return [sum(math.log(1 + n / (1 + df[w])) for w in question_words & ws) for ws in words]


def rank_sentences(
    question: str, sentences: Sequence[NumberedSentence]
) -> tuple[NumberedSentence, ...]:
    """``sentences`` ordered by the rare words they share with ``question``, best first
    (:func:`sentence_scores`). Ties keep the prompt's order.

    Returns:
        Every sentence, reordered; sentences sharing no word come last, in prompt order.
    """
    scores = sentence_scores(question, [s.text for s in sentences])
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    return tuple(sentences[i] for i in order)


def quote_block(question: str, sentences: Sequence[NumberedSentence]) -> str:
    """The quoted sentences for the prompt: :data:`QUOTE_HEAD`, then the best
    :data:`QUOTED` of :func:`rank_sentences`, one a line, each ending with its passage number
    (``"... 45% in the treated arm. [2]"``), in the order they rank. Empty without sentences."""
    best = rank_sentences(question, sentences)[:QUOTED]
    if not best:
        return ""
    lines = "\n".join(f'"{s.text}" [{s.passage}]' for s in best)
    return f"{QUOTE_HEAD}\n{lines}\n"
