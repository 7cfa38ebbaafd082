"""UI test set-up: offscreen Qt, Qt warnings fail tests, a hand-built Answer for control flow."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from verifai_desktop.domain import (
    AbstainReason,
    Answer,
    AnswerSentence,
    ChunkId,
    DocId,
    Evidence,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    SentenceLabel,
    ShownLabel,
    Verdict,
)

UI_DIR = Path(__file__).resolve().parent
# The offscreen platform plugin warns about window-manager hints it cannot honour.
IGNORED_QT_MESSAGES = (r"This plugin does not support (propagateSizeHints|raise|setParent)\(\)",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Make Qt warnings fail every test in tests/ui (STYLE.md)."""
    for item in items:
        if UI_DIR in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*IGNORED_QT_MESSAGES))


def make_answer() -> Answer:
    """An answer with one sentence of every label, citing two passages (a .md and a PDF page)."""
    md = Passage(
        ChunkId(11),
        DocId(1),
        Path("/docs/deep_rules_09_overfitting.md"),
        "Deep rules: overfitting",
        "Overfitting is a major risk. A model that memorises the training data fails on new data. "
        "Use a held-out test set.",
        0,
        113,
        Location(LocationKind.SECTION, None, "Overfitting"),
        ((0, 28), (29, 88), (89, 113)),
        0.9,
        0.8,
        0.87,
    )
    pdf = Passage(
        ChunkId(12),
        DocId(2),
        Path("/docs/bmc_trauma.pdf"),
        "DVT prophylaxis review",
        "Low molecular weight heparin reduced DVT. Mechanical methods were less studied.",
        0,
        79,
        Location(LocationKind.PAGE, 3),
        ((0, 41), (42, 79)),
        0.5,
        0.6,
        0.53,
    )
    spec = [
        (
            "Overfitting means memorising the training data [1].",
            SentenceLabel.SUPPORTED,
            (1,),
            (
                Verdict(
                    1,
                    NliLabel.SUPPORT,
                    0.93,
                    0.02,
                    0.05,
                    "A model that memorises the training data fails on new data.",
                    (29, 88),
                ),
            ),
        ),
        (
            "Heparin reduced DVT [2].",
            SentenceLabel.PARTIALLY_SUPPORTED,
            (2,),
            (
                Verdict(
                    2,
                    NliLabel.SUPPORT,
                    0.61,
                    0.1,
                    0.29,
                    "Low molecular weight heparin reduced DVT.",
                    (0, 41),
                ),
            ),
        ),
        (
            "Heparin increased DVT [2].",
            SentenceLabel.CONTRADICTED,
            (2,),
            (
                Verdict(
                    2,
                    NliLabel.CONTRADICT,
                    0.05,
                    0.88,
                    0.07,
                    "Low molecular weight heparin reduced DVT.",
                    (0, 41),
                ),
            ),
        ),
        (
            "Mechanical methods cure everything [1][2].",
            SentenceLabel.NO_EVIDENCE,
            (1, 2),
            (
                Verdict(
                    1, NliLabel.NO_EVIDENCE, 0.1, 0.1, 0.8, "Use a held-out test set.", (89, 113)
                ),
                Verdict(
                    2,
                    NliLabel.NO_EVIDENCE,
                    0.1,
                    0.2,
                    0.7,
                    "Mechanical methods were less studied.",
                    (42, 79),
                ),
            ),
        ),
        ("This is a summary.", SentenceLabel.UNREFERENCED, (), ()),
    ]
    text = ""
    sentences = []
    for sentence_text, label, cites, verdicts in spec:
        if text:
            text += " "
        start = len(text)
        text += sentence_text
        sentences.append(AnswerSentence(sentence_text, start, len(text), cites, verdicts, label))
    return Answer("What is overfitting?", text, tuple(sentences), (md, pdf))


@pytest.fixture
def hand_answer() -> Answer:
    """See :func:`make_answer`."""
    return make_answer()


UNSURE_FLAG = "the figure 12% is not stated for the same subject in the evidence"
"""Why the unsure sentence of :func:`make_unsure_answer` was held back."""


def make_unsure_answer() -> Answer:
    """:func:`make_answer` with a sixth sentence, unsure: the verifier's best guess is
    supported (p 0.72) but a check held it back (:data:`UNSURE_FLAG`); every label has a
    sentence."""
    answer = make_answer()
    verdict = Verdict(
        1,
        NliLabel.SUPPORT,
        0.72,
        0.06,
        0.22,
        "A model that memorises the training data fails on new data.",
        (29, 88),
        ShownLabel.UNSURE,
        (UNSURE_FLAG,),
    )
    claim = "A memorising model fails on 12% of new data [1]."
    text = f"{answer.text} {claim}"
    sentence = AnswerSentence(
        claim, len(text) - len(claim), len(text), (1,), (verdict,), SentenceLabel.UNSURE
    )
    return dataclasses.replace(answer, text=text, sentences=(*answer.sentences, sentence))


def make_unsupported_answer() -> Answer:
    """:func:`make_answer` refused by evidence: its contradicted, no-evidence and
    unreferenced sentences (none supported), generated text and sentences kept."""
    answer = make_answer()
    text = ""
    sentences = []
    for sentence in answer.sentences[2:]:
        if text:
            text += " "
        start = len(text)
        text += sentence.text
        sentences.append(dataclasses.replace(sentence, char_start=start, char_end=len(text)))
    return dataclasses.replace(
        answer,
        text=text,
        sentences=tuple(sentences),
        abstained=True,
        abstain_reason=AbstainReason.UNSUPPORTED,
    )


@pytest.fixture
def unsupported_answer() -> Answer:
    """See :func:`make_unsupported_answer`."""
    return make_unsupported_answer()


OTHER_TRIAL = Passage(
    ChunkId(40),
    DocId(7),
    Path("/docs/other_trial.pdf"),
    "A randomised trial of heparin",
    "Patients were followed for a year. Heparin did not reduce DVT in this trial. "
    "Bleeding was rare.",
    1200,
    1295,
    Location(LocationKind.PAGE, 7),
    ((0, 34), (35, 76), (77, 95)),
)
"""A passage outside the answer's sources that contradicts its heparin sentence."""


def contradiction(passage: Passage, p_contradict: float, number: int = 0) -> Evidence:
    """``passage``'s second sentence contradicting a claim with ``p_contradict``."""
    s, e = passage.sentence_spans[1]
    rest = round((1.0 - p_contradict) / 2, 4)
    verdict = Verdict(
        number, NliLabel.CONTRADICT, rest, p_contradict, rest, passage.text[s:e], (s, e)
    )
    return Evidence(passage, verdict)


def make_conflict_answer() -> Answer:
    """:func:`make_answer` where OTHER_TRIAL (not given to the generator) contradicts
    sentence 1 (0.91) and sentence 3 (0.62), and passage [1], given but not cited, sentence 1."""
    answer = make_answer()
    sentences = list(answer.sentences)
    sentences[1] = dataclasses.replace(
        sentences[1],
        conflicts=(contradiction(OTHER_TRIAL, 0.91), contradiction(answer.passages[0], 0.7, 1)),
    )
    sentences[3] = dataclasses.replace(sentences[3], conflicts=(contradiction(OTHER_TRIAL, 0.62),))
    return dataclasses.replace(answer, sentences=tuple(sentences))


@pytest.fixture
def conflict_answer() -> Answer:
    """See :func:`make_conflict_answer`."""
    return make_conflict_answer()
