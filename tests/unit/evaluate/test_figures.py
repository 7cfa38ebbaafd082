"""Scoring figure questions: the right figure written, a neighbour's figure standing in for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    ChunkId,
    DocId,
    Location,
    LocationKind,
    Passage,
    SentenceLabel,
)
from verifai_desktop.evaluate.figures import (
    FigureQuestion,
    load_figure_questions,
    score,
    states,
    summarise,
)

QUESTIONS = Path(__file__).resolve().parents[3] / "models/data/figure_questions.jsonl"

QUESTION = FigureQuestion(
    "f-1",
    "21979183",
    "What percentage of the ileorectal anastomosis group needed surgery for desmoid tumors?",
    ("51.4%", "51.4 %"),
    "38.8% of the restorative proctocolectomy group and 51.4% the ileorectal group had surgery",
    ("38.8%",),
    "arm",
)


def _passage(pmid: str) -> Passage:
    return Passage(
        ChunkId(1),
        DocId(1),
        Path(f"pubmedqa:{pmid}"),
        "t",
        "text",
        0,
        4,
        Location(LocationKind.PAGE, 1, ""),
        (),
    )


def _answer(*sentences: tuple[str, SentenceLabel], pmid: str = "21979183") -> Answer:
    built, pos = [], 0
    for text, label in sentences:
        built.append(AnswerSentence(text, pos, pos + len(text), (1,), (), label))
        pos += len(text) + 1
    return Answer(
        "q",
        " ".join(t for t, _ in sentences),
        tuple(built),
        (_passage(pmid),),
        timings_ms={"first_token": 2000.0, "total": 5000.0},
    )


@pytest.mark.parametrize(
    ("text", "figure", "expected"),
    [
        ("surgery in 51.4 % of them", "51.4%", True),
        ("surgery in 51.4 percent", "51.4 per cent", True),
        ("in 1,234 patients", "1234", True),
        ("surgery in 51.45% of them", "51.4%", False),
        ("surgery in 151.4%", "51.4%", False),
        ("no figure here", "51.4%", False),
    ],
)
def test_a_figure_is_stated_by_its_whole_number(text: str, figure: str, expected: bool) -> None:
    assert states(text, figure) is expected


def test_the_neighbours_figure_standing_in_for_the_answer_is_the_error() -> None:
    wrong = score(
        QUESTION, _answer(("The ileorectal group: 38.8% had surgery. [1]", SentenceLabel.SUPPORTED))
    )
    assert (wrong.right_written, wrong.neighbour_written, wrong.neighbour_green) == (
        False,
        True,
        True,
    )
    both = score(
        QUESTION,
        _answer(
            ("51.4% of the ileorectal and 38.8% of the other group. [1]", SentenceLabel.UNSURE)
        ),
    )
    assert (both.right_written, both.right_green, both.neighbour_written) == (True, False, False)
    assert both.own_cited


def test_a_citation_number_is_not_a_figure_and_another_abstract_is_not_own() -> None:
    result = score(
        QUESTION, _answer(("Most needed surgery. [1]", SentenceLabel.SUPPORTED), pmid="1")
    )
    assert not result.right_written and not result.own_cited


def test_summary_shares_and_seconds() -> None:
    right = score(QUESTION, _answer(("It was 51.4%. [1]", SentenceLabel.SUPPORTED)))
    wrong = score(QUESTION, _answer(("It was 38.8%. [1]", SentenceLabel.CONTRADICTED)))
    s = summarise([right, wrong])
    assert (s.n, s.right_written, s.right_green, s.neighbour_written, s.neighbour_green) == (
        2,
        0.5,
        0.5,
        0.5,
        0.0,
    )
    assert (s.first_token_s, s.total_s) == (2.0, 5.0)


def test_the_dev_questions_load_and_each_states_its_answer() -> None:
    questions = load_figure_questions(QUESTIONS)
    assert len(questions) == 50
    for q in questions:
        assert states(q.sentence, q.answer[0]), q.qid
        assert q.neighbours and q.kind in {"arm", "subgroup", "time", "measure", "other"}
