"""Figure questions: is the right figure written, and shown green (issue 39, item 9)?

A figure question (``models/data/figure_questions.jsonl``) asks for one figure of a PubMedQA
abstract that also states figures for neighbouring subjects (the other arm, the whole group,
another time point, another measure). Each question is asked through the real pipeline over
the PubMedQA collection (:func:`verifai_desktop.evaluate.pubmedqa.build_collection`), abstention
off, and scored by reading the answer's sentences:

* right written: a sentence states the right figure (:func:`states`);
* right green: such a sentence is shown supported;
* neighbour written / neighbour green: a sentence states a neighbouring subject's figure and
  not the right one (the neighbour stands in for the answer), and such a sentence is shown
  supported: the error the verifier must catch. A sentence that states both, as the passage
  does ("51.4% against 38.8%"), is a right answer;
* own abstract cited: the question's abstract among the answer's citations.

A figure is matched by its number (the first number of the figure as the abstract writes it,
``"3.1+/-0.5%"`` -> ``3.1``) as a whole number token of the sentence, so "45 %", "45%" and
"45 percent" all state ``45%``; a number that is both the right figure and a neighbour's counts
for neither.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.domain import Answer, Progress, SentenceLabel
from verifai_desktop.errors import Cancelled
from verifai_desktop.evaluate.pubmedqa import passage_pmid
from verifai_desktop.pipeline import AskSession
from verifai_desktop.store.collection import Collection

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CITATION = re.compile(r"\[\d+\]")


@dataclass(frozen=True, slots=True)
class FigureQuestion:
    """One figure question.

    Attributes:
        qid: ``"f-1"`` ...
        pmid: the abstract it is about.
        question: the question as a user types it.
        answer: the right figure, as the abstract writes it first, then equivalent spellings.
        sentence: the abstract's sentence that states it.
        neighbours: figures of neighbouring subjects in the abstract (wrong answers).
        kind: ``arm``, ``subgroup``, ``time``, ``measure`` or ``other``.
    """

    qid: str
    pmid: str
    question: str
    answer: tuple[str, ...]
    sentence: str
    neighbours: tuple[str, ...]
    kind: str


def load_figure_questions(path: Path) -> tuple[FigureQuestion, ...]:
    """Read a figure-question JSONL file (keys as :class:`FigureQuestion`, ``id`` for qid).

    Raises:
        OSError: the file cannot be read.
        ValueError: a line is not a figure question (names the file and line).
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    questions = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            questions.append(
                FigureQuestion(
                    str(row["id"]),
                    str(row["pmid"]),
                    str(row["question"]),
                    tuple(str(a) for a in row["answer"]),
                    str(row["sentence"]),
                    tuple(str(a) for a in row["neighbours"]),
                    str(row.get("kind", "other")),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}, line {n}: not a figure question ({exc})") from exc
    return tuple(questions)


def _number(figure: str) -> str | None:
    """The figure's first number with thousands separators dropped (``"1,234"`` -> ``1234``)."""
    match = _NUMBER.search(figure)
    return match.group(0).replace(",", "") if match else None


def states(text: str, figure: str) -> bool:
    """Whether ``text`` writes ``figure``'s number as a whole number token."""
    number = _number(figure)
    if number is None:
        return False
    return number in {m.group(0).replace(",", "") for m in _NUMBER.finditer(text)}


@dataclass(frozen=True, slots=True)
class FigureResult:
    """One question's answer, scored.

    Attributes:
        qid: the question.
        kind: the question's kind.
        right_written / right_green: a sentence states the right figure / and is supported.
        neighbour_written / neighbour_green: a sentence states a neighbouring subject's
            figure without the right one / and is supported.
        own_cited: the question's own abstract is cited.
        answer: the answer text.
        first_token_ms / total_ms: time to the first answer token / the whole answer.
    """

    qid: str
    kind: str
    right_written: bool
    right_green: bool
    neighbour_written: bool
    neighbour_green: bool
    own_cited: bool
    answer: str
    first_token_ms: float
    total_ms: float


def score(question: FigureQuestion, answer: Answer) -> FigureResult:
    """Score one answer to ``question`` (see the module docstring)."""
    right = question.answer[0]
    ambiguous = {_number(n) for n in question.neighbours} & {_number(right)}
    right_ok = not ambiguous
    right_written = right_green = neighbour_written = neighbour_green = False
    for sentence in answer.sentences:
        green = sentence.label is SentenceLabel.SUPPORTED
        text = _CITATION.sub(" ", sentence.text)
        if right_ok and states(text, right):
            right_written = True
            right_green = right_green or green
        wrong = [n for n in question.neighbours if _number(n) != _number(right) and states(text, n)]
        if wrong and not (right_ok and states(text, right)):
            neighbour_written = True
            neighbour_green = neighbour_green or green
    cited = {c for s in answer.sentences for c in s.citations}
    own_cited = any(
        passage_pmid(answer.passages[c - 1]) == question.pmid
        for c in cited
        if 0 < c <= len(answer.passages)
    )
    timings = answer.timings_ms
    return FigureResult(
        question.qid,
        question.kind,
        right_written,
        right_green,
        neighbour_written,
        neighbour_green,
        own_cited,
        answer.text,
        timings.get("first_token", 0.0),
        timings.get("total", 0.0),
    )


def ask_figure_questions(
    session: AskSession,
    collection_name: str,
    questions: Sequence[FigureQuestion],
    *,
    k: int = 5,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> tuple[FigureResult, ...]:
    """Ask every question through ``session`` over the collection and score the answers.

    Args:
        session: its settings decide the pipeline (switch abstention off for a full count).
        collection_name: a collection holding the questions' abstracts (PubMedQA keys).
        questions: the questions, asked in order.
        k: passages per question.
        progress: one report per question, stage ``"questions"``.
        cancel: set to stop between questions.

    Raises:
        Cancelled: ``cancel`` was set.
    """
    results = []
    with Collection.open(collection_name, settings=session.settings) as collection:
        for i, question in enumerate(questions, start=1):
            if cancel is not None and cancel.is_set():
                raise Cancelled("evaluation")
            answer = session.ask(collection, question.question, k=k)
            results.append(score(question, answer))
            if progress:
                progress(Progress("questions", i, len(questions), "questions", question.qid))
    return tuple(results)


@dataclass(frozen=True, slots=True)
class FigureSummary:
    """Shares over a set of scored answers (0..1), and mean seconds per answer."""

    n: int
    right_written: float
    right_green: float
    neighbour_written: float
    neighbour_green: float
    own_cited: float
    first_token_s: float
    total_s: float


def summarise(results: Sequence[FigureResult]) -> FigureSummary:
    """Shares of :class:`FigureResult` flags and mean times (zeros for no results)."""
    n = len(results)
    if not n:
        return FigureSummary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def share(flag: Callable[[FigureResult], bool]) -> float:
        return sum(flag(r) for r in results) / n

    return FigureSummary(
        n,
        share(lambda r: r.right_written),
        share(lambda r: r.right_green),
        share(lambda r: r.neighbour_written),
        share(lambda r: r.neighbour_green),
        share(lambda r: r.own_cited),
        sum(r.first_token_ms for r in results) / n / 1000,
        sum(r.total_ms for r in results) / n / 1000,
    )
