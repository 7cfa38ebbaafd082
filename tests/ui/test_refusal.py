"""Abstention by evidence in the app (issue 11): an answer none of whose sentences is supported
opens on the refusal and the closest evidence; a link shows the generated answer, rendered and
navigable like any other, and another hides it; status bar, summary line and sources panel say
why the app declined. The refused answer is kept in the history, and its withheld sentences take
the reader's marks like any other's (issue 39)."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from tests.ui.conftest import (
    OTHER_TRIAL,
    UNSURE_FLAG,
    contradiction,
    make_answer,
    make_unsupported_answer,
    make_unsure_answer,
)
from tests.ui.test_conflicts import _HeldChecks as HeldChecks
from tests.ui.test_conflicts import _window_with_collection as window_with_collection
from tests.ui.test_history import _action as menu_action
from tests.ui.test_history import _Session as AnswersAtOnce
from verifai_desktop.domain import AbstainReason, Answer, ChunkId, NliLabel, SentenceLabel
from verifai_desktop.presentation import LABEL_STYLES, NOT_FOUND_TEXT, UNSUPPORTED_TEXT
from verifai_desktop.store.folders import existing_path
from verifai_desktop.store.history import History
from verifai_desktop.ui.answer_menu import CHECK_ACTION_TEXT
from verifai_desktop.ui.answer_render import (
    HIDE_GENERATED_TEXT,
    HIDE_PASSAGES_TEXT,
    NOT_CLOSE_TEXT,
    SHOW_GENERATED_TEXT,
    UNSUPPORTED_NOTE,
    qt_underline,
    show_passages_text,
)
from verifai_desktop.ui.answer_view import AnswerView
from verifai_desktop.ui.asking import answer_status, answer_summary
from verifai_desktop.ui.evidence_popup import FEEDBACK_HINT
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.sources_panel import SourcesPanel

OWN_ACTIONS = ("checkSentenceAction", "toggleGeneratedAction")  # the view's, not Qt's
TIMINGS_MS = {"retrieve": 210.0, "generate": 9100.0, "verify": 1300.0}


def _view(qtbot: QtBot, answer: Answer) -> AnswerView:
    view = AnswerView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    qtbot.waitExposed(view)
    view.show_answer(answer)
    return view


def _text_point(view: AnswerView, text: str) -> QPoint:
    """A viewport point on the third character of ``text`` in the view."""
    found = view.document().find(text)
    assert not found.isNull(), text
    cursor = QTextCursor(view.document())
    cursor.setPosition(found.selectionStart() + 2)
    return view.cursorRect(cursor).center()


def _click(qtbot: QtBot, view: AnswerView, text: str) -> None:
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_text_point(view, text))


def _retrieval_refusal() -> Answer:
    return dataclasses.replace(
        make_answer(),
        text="",
        sentences=(),
        abstained=True,
        abstain_reason=AbstainReason.RETRIEVAL,
        timings_ms={"retrieve": 210.0},
    )


# ----- answer view ---------------------------------------------------------------------------


def test_a_refused_unsure_answer_says_what_held_its_closest_evidence_back(qtbot: QtBot) -> None:
    """Issue 26: an unsure sentence is no support, so an answer of it alone is refused; its
    closest evidence is listed with the check that held the verdict back."""
    unsure = make_unsure_answer().sentences[-1]
    answer = dataclasses.replace(
        make_unsupported_answer(),
        text=unsure.text,
        sentences=(dataclasses.replace(unsure, char_start=0, char_end=len(unsure.text)),),
    )
    view = _view(qtbot, answer)
    assert view.toPlainText().split("\n")[2:] == [
        "\u201cA memorising model fails on 12% of new data.\u201d",
        "[1] deep_rules_09_overfitting.md, Overfitting comes closest to supporting it "
        "(support 0.72): \u201cA model that memorises the training data fails on new data.\u201d",
        f"Held back: {UNSURE_FLAG}",
        SHOW_GENERATED_TEXT,
    ]


def test_unsupported_answer_shows_the_refusal_and_the_closest_evidence(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    view = _view(qtbot, unsupported_answer)
    assert view.toPlainText().split("\n") == [
        UNSUPPORTED_TEXT,
        UNSUPPORTED_NOTE,
        "\u201cHeparin increased DVT.\u201d",
        "[2] bmc_trauma.pdf, p. 3 contradicts it (contradict 0.88): "
        "\u201cLow molecular weight heparin reduced DVT.\u201d",
        "\u201cMechanical methods cure everything.\u201d",
        "[2] bmc_trauma.pdf, p. 3 neither supports nor contradicts it (no evidence 0.70): "
        "\u201cMechanical methods were less studied.\u201d",
        "\u201cThis is a summary.\u201d",
        "No passage given supports it.",
        SHOW_GENERATED_TEXT,
    ]
    # The headline is styled like the not-found headline: bold and larger.
    head = view.document().begin().begin().fragment().charFormat()
    assert head.fontWeight() == 700 and head.fontPointSize() > view.font().pointSizeF()
    assert view.rendered_sentences() == [] and view.sentence_count() == 0
    assert not view.generated_shown
    # The source is a citation link; the evidence lines are no sentences to hover.
    with qtbot.waitSignal(view.citation_activated, timeout=2000) as blocker:
        _click(qtbot, view, "[2] bmc_trauma.pdf, p. 3 contradicts")
    assert blocker.args == [2]
    qtbot.mouseMove(view.viewport(), _text_point(view, "Heparin increased DVT."))
    assert view.hovered_index == -1 and not view.popup.isVisible()


def test_show_the_generated_answer_renders_its_sentences_and_hide_goes_back(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    view = _view(qtbot, unsupported_answer)
    with qtbot.waitSignal(view.generated_toggled, timeout=2000) as shown:
        _click(qtbot, view, SHOW_GENERATED_TEXT)
    assert shown.args == [True] and view.generated_shown
    expected = [(s.text, s.label) for s in unsupported_answer.sentences]
    assert view.sentence_labels() == expected
    assert [label for _text, label in expected] == [
        SentenceLabel.CONTRADICTED,
        SentenceLabel.NO_EVIDENCE,
        SentenceLabel.UNREFERENCED,
    ]
    for r in view.rendered_sentences():
        style = LABEL_STYLES[r.label]
        assert (r.color_hex, r.underline, r.marker) == (
            style.color_hex,
            qt_underline(style),
            style.glyph,
        )
    text = view.toPlainText()
    assert text.startswith(UNSUPPORTED_TEXT + "\n") and HIDE_GENERATED_TEXT in text
    assert "contradicts it" not in text  # the evidence list made way for the answer
    assert view.sentence_count() == 3

    # Hover cards, Tab and Enter work as on any answer.
    with qtbot.waitSignal(view.sentence_hovered, timeout=2000) as hovered:
        qtbot.mouseMove(view.viewport(), view.sentence_point(1))
    assert hovered.args == [1] and view.popup.label.text() == view.hover_html(1)
    assert "Mechanical methods were less studied." in view.hover_text(1)
    view.activateWindow()
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=2000)
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert view.focused_index == 0
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert view.focused_index == 1 and view.popup.label.text() == view.hover_html(1)
    with qtbot.waitSignal(view.citation_activated, timeout=1000) as cited:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert cited.args == [1]  # sentence 1 cites [1][2]

    with qtbot.waitSignal(view.generated_toggled, timeout=2000) as hidden:
        _click(qtbot, view, HIDE_GENERATED_TEXT)
    assert hidden.args == [False] and not view.generated_shown
    assert view.rendered_sentences() == [] and view.sentence_count() == 0
    assert view.focused_index == -1 and not view.popup.isVisible()
    assert view.toPlainText().split("\n")[-1] == SHOW_GENERATED_TEXT
    # Collapsed, Tab focuses no sentence.
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=2000)
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert view.focused_index == -1


def test_context_menu_shows_and_hides_the_generated_answer(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    view = _view(qtbot, unsupported_answer)

    def actions(pos: QPoint) -> list[str]:
        menu = view.context_menu(pos)
        names = [a.text() for a in menu.actions() if a.objectName() in OWN_ACTIONS]
        toggle = next(a for a in menu.actions() if a.objectName() == "toggleGeneratedAction")
        toggle.trigger()
        menu.deleteLater()
        return names

    # Collapsed there is no sentence to check, only the way to the answer.
    assert actions(_text_point(view, "Heparin increased DVT.")) == [SHOW_GENERATED_TEXT]
    assert view.generated_shown
    assert actions(view.sentence_point(0)) == [CHECK_ACTION_TEXT, HIDE_GENERATED_TEXT]
    assert not view.generated_shown


def test_unsupported_answer_without_verdicts_lists_the_closest_passages(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    unreferenced = tuple(
        dataclasses.replace(s, citations=(), verdicts=(), label=SentenceLabel.UNREFERENCED)
        for s in unsupported_answer.sentences
    )
    answer = dataclasses.replace(unsupported_answer, sentences=unreferenced)
    view = _view(qtbot, answer)
    # Folded (issue 42): a link unfolds the nearest passages.
    assert view.toPlainText().split("\n") == [
        UNSUPPORTED_TEXT,
        UNSUPPORTED_NOTE,
        show_passages_text(2),
        SHOW_GENERATED_TEXT,
    ]
    _click(qtbot, view, show_passages_text(2))
    lines = view.toPlainText().split("\n")
    assert lines[:3] == [UNSUPPORTED_TEXT, UNSUPPORTED_NOTE, HIDE_PASSAGES_TEXT]
    assert lines[3].startswith(
        "[1] deep_rules_09_overfitting.md, Overfitting — Overfitting is a major risk."
    )
    assert lines[4].startswith("[2] bmc_trauma.pdf, p. 3 — Low molecular weight heparin")
    assert lines[5:] == [SHOW_GENERATED_TEXT]


def test_a_sentence_contradicted_only_by_an_uncited_passage_shows_that_passage(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    sentences = list(unsupported_answer.sentences)
    # The unreferenced sentence: passage [1], given but not cited, contradicts it (0.7);
    # OTHER_TRIAL, from elsewhere in the collection, is not one of the passages given.
    sentences[2] = dataclasses.replace(
        sentences[2],
        conflicts=(
            contradiction(OTHER_TRIAL, 0.95),
            contradiction(unsupported_answer.passages[0], 0.7, 1),
        ),
    )
    view = _view(qtbot, dataclasses.replace(unsupported_answer, sentences=tuple(sentences)))
    lines = view.toPlainText().split("\n")
    assert lines[lines.index("\u201cThis is a summary.\u201d") + 1] == (
        "[1] deep_rules_09_overfitting.md, Overfitting contradicts it (contradict 0.70): "
        "\u201cA model that memorises the training data fails on new data.\u201d"
    )


def test_a_retrieval_refusal_has_no_generated_answer_to_show(qtbot: QtBot) -> None:
    view = _view(qtbot, _retrieval_refusal())
    view.show_answer(_retrieval_refusal(), show_generated=True)
    text = view.toPlainText()
    assert text.startswith(NOT_FOUND_TEXT + "\n") and SHOW_GENERATED_TEXT not in text
    assert not view.generated_shown and view.sentence_count() == 0
    menu = view.context_menu(QPoint(5, 5))
    assert [a.objectName() for a in menu.actions() if a.objectName() in OWN_ACTIONS] == []
    assert "edit-copy" in [a.objectName() for a in menu.actions()]  # copy stays on offer
    menu.deleteLater()


# ----- main window and sources panel ---------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "status", "summary"),
    [
        (
            "verified",
            "Answer verified. Hover or Tab through sentences for evidence.",
            "1 supported, 1 partially supported, 1 contradicted, 1 no evidence, 1 unreferenced"
            " · 2 passages given · retrieve 0.2 s · generate 9.1 s · verify 1.3 s",
        ),
        (
            "retrieval",
            "Not found in your documents.",
            "Not found in your documents · retrieve 0.2 s",
        ),
        (
            "unsupported",
            "Your documents do not support an answer: "
            "no sentence of the generated answer is supported.",
            "Not supported: 1 contradicted, 1 no evidence, 1 unreferenced"
            " · 2 passages given · retrieve 0.2 s · generate 9.1 s · verify 1.3 s",
        ),
    ],
)
def test_status_and_summary_say_why_per_reason(
    qtbot: QtBot, kind: str, status: str, summary: str
) -> None:
    answer = {
        "verified": dataclasses.replace(make_answer(), timings_ms=TIMINGS_MS),
        "retrieval": _retrieval_refusal(),
        "unsupported": dataclasses.replace(make_unsupported_answer(), timings_ms=TIMINGS_MS),
    }[kind]
    assert (answer_status(answer), answer_summary(answer)) == (status, summary)
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.on_answer_ready(answer)
    assert window.statusBar().currentMessage() == status
    assert window.answer_info.text() == summary
    assert window.copy_button.isEnabled()


def test_sources_panel_words_and_conflicts_per_reason(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    panel = SourcesPanel()
    qtbot.addWidget(panel)
    panel.show()
    sentences = list(unsupported_answer.sentences)
    sentences[0] = dataclasses.replace(sentences[0], conflicts=(contradiction(OTHER_TRIAL, 0.91),))
    refused = dataclasses.replace(unsupported_answer, sentences=tuple(sentences))
    panel.set_answer(refused)
    assert panel.caption.text() == (
        "2 passages given to the generator; none supports a sentence of its answer. "
        "Click one to open it."
    )
    assert [row[0] for row in panel.row_texts()] == ["[1]", "[2]"]
    assert panel.conflict_texts() == [
        (
            "A randomised trial of heparin\nother_trial.pdf, p. 7\n"
            "Heparin did not reduce DVT in this trial.",
            "0.91",
        )
    ]
    assert panel.conflict_table.isVisible()

    panel.set_answer(_retrieval_refusal())
    assert panel.caption.text() == (
        "The 2 nearest passages; none is close enough to the question to answer it. "
        "Click one to open it."
    )
    assert panel.conflict_texts() == [] and not panel.conflict_table.isVisible()
    panel.set_answer(make_answer())
    assert panel.caption.text() == "2 passages given to the generator. Click one to open it."


def test_back_from_a_sentence_check_keeps_the_generated_answer_shown(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    session = HeldChecks(unsupported_answer)
    session.release.set()
    window = window_with_collection(qtbot, session)
    window.on_answer_ready(unsupported_answer)
    view = window.answer_view
    assert not view.generated_shown
    view.set_generated_shown(True)
    menu = view.context_menu(view.sentence_point(0))
    assert menu.actions()[0].objectName() == "checkSentenceAction"
    menu.actions()[0].trigger()
    menu.deleteLater()
    task = window.check_task
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    assert session.claims == ["Heparin increased DVT."] and view.check is not None
    _click(qtbot, view, "Back to the answer")
    assert view.check is None and view.generated_shown
    assert view.sentence_labels() == [(s.text, s.label) for s in unsupported_answer.sentences]
    assert window.answer_info.text().startswith("Not supported: 1 contradicted")


def _marks_kept(answer_id: int) -> list[tuple[int, int, str, str, NliLabel | None, str]]:
    with History(existing_path("papers")) as history:
        return [
            (f.sentence, f.passage, f.shown, f.verdict, f.label, f.note)
            for f in history.feedback(answer_id)
        ]


def test_withheld_sentences_take_marks_that_are_kept_and_shown_again_when_reopened(
    qtbot: QtBot, unsupported_answer: Answer
) -> None:
    """Issue 39: a refused answer is kept in the history like any other; with its generated
    text shown, every sentence offers the feedback actions enabled, the marks given are
    stored, and they come back when the answer is reopened from History."""
    window = window_with_collection(qtbot, HeldChecks(unsupported_answer))
    window._session = AnswersAtOnce(unsupported_answer)  # type: ignore[assignment]
    task = window.ask("What prevents DVT?")
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    with History(existing_path("papers")) as history:
        (saved,) = history.answers()
    refused = dataclasses.replace(unsupported_answer, question="What prevents DVT?")
    assert saved.answer() == refused and window.answer == refused
    assert window.history_ref == ("papers", saved.answer_id)
    view = window.answer_view
    assert view.history_id == saved.answer_id

    # Hidden, nothing changes: no sentence on screen, no feedback on offer.
    menu = view.context_menu(_text_point(view, "Heparin increased DVT."))
    assert [a.objectName() for a in menu.actions() if a.objectName().startswith("feedback")] == []
    menu.deleteLater()

    with qtbot.waitSignal(view.generated_toggled, timeout=2000) as shown:
        _click(qtbot, view, SHOW_GENERATED_TEXT)
    assert shown.args == [True] and view.history_id == saved.answer_id
    assert view.hover_text(0).endswith(FEEDBACK_HINT)
    menu = view.context_menu(view.sentence_point(0))  # contradicted by [2]
    feedback = [a for a in menu.actions() if a.objectName().startswith("feedback")]
    assert [(a.objectName(), a.isEnabled()) for a in feedback] == [
        ("feedbackRight2", True),
        ("feedbackWrong2Action", True),
        ("feedbackFlag", True),
    ]
    support = menu_action(menu, "feedbackWrong2_SUPPORT")
    assert support.isEnabled()  # type: ignore[attr-defined]
    support.trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: len(view.feedback) == 1, timeout=30_000)
    menu.deleteLater()
    # The unreferenced sentence has no verdict to judge; it can be flagged.
    view.ask_note = lambda index: "no source says so"  # type: ignore[method-assign]
    menu = view.context_menu(view.sentence_point(2))
    assert [a.objectName() for a in menu.actions() if a.objectName().startswith("feedback")] == [
        "feedbackFlag"
    ]
    menu_action(menu, "feedbackFlag").trigger()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: len(view.feedback) == 2, timeout=30_000)
    menu.deleteLater()
    assert _marks_kept(saved.answer_id) == [
        (0, 2, "CONTRADICT", "wrong", NliLabel.SUPPORT, ""),
        (2, 0, "unreferenced", "flagged", None, "no source says so"),
    ]

    # Reopened from History: withheld again, and the marks are back once it is shown.
    qtbot.waitUntil(lambda: len(window.history.row_texts()) == 1, timeout=30_000)
    window.history.list.setCurrentRow(-1)
    window.history.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.reopened_note.isVisibleTo(window), timeout=30_000)
    assert window.answer == refused and not view.generated_shown
    assert view.sentence_count() == 0
    with qtbot.waitSignal(view.generated_toggled, timeout=2000) as shown:
        _click(qtbot, view, SHOW_GENERATED_TEXT)
    assert shown.args == [True] and view.history_id == saved.answer_id
    assert "You marked [2] wrong: should be Supports" in view.hover_text(0)
    assert "You flagged this sentence: no source says so" in view.hover_text(2)
    menu = view.context_menu(view.sentence_point(0))
    assert menu_action(menu, "feedbackWrong2_SUPPORT").isChecked()  # type: ignore[attr-defined]
    menu.deleteLater()


def test_not_found_lists_only_the_nearest_passages_folded(qtbot: QtBot) -> None:
    # Ten passages found, none close enough (issue 42: Alice in Wonderland for a drug
    # question): the three nearest, folded under a link, and only they in the sources panel.
    base = make_answer().passages[0]
    found = tuple(
        dataclasses.replace(
            base,
            chunk_id=ChunkId(100 + i),
            title=f"Far passage {i}",
            text=f"Unrelated text number {i}. " * 40,
            semantic_score=0.2 - i / 100,
        )
        for i in range(10)
    )
    refusal = dataclasses.replace(_retrieval_refusal(), passages=found)
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    qtbot.waitExposed(window)
    window.on_answer_ready(refusal)
    view = window.answer_view
    assert view.toPlainText().split("\n") == [NOT_FOUND_TEXT, NOT_CLOSE_TEXT, show_passages_text(3)]
    assert "Unrelated text" not in view.toPlainText()
    sources = window.sources
    assert sources.passages == found[:3]
    assert [r[0] for r in sources.row_texts()] == ["[1]", "[2]", "[3]"]
    assert sources.caption.text() == (
        "The 3 nearest passages; none is close enough to the question to answer it. "
        "Click one to open it."
    )

    # Unfolded: the three nearest, each with the start of its text; folded again.
    _click(qtbot, view, show_passages_text(3))
    lines = view.toPlainText().split("\n")
    assert lines[:3] == [NOT_FOUND_TEXT, NOT_CLOSE_TEXT, HIDE_PASSAGES_TEXT]
    assert [line.split(" — ")[0] for line in lines[3:]] == [
        f"[{n}] {p.source_label()}" for n, p in enumerate(found[:3], start=1)
    ]
    assert all(line.endswith("…") for line in lines[3:])  # 240 characters of 1,000
    _click(qtbot, view, HIDE_PASSAGES_TEXT)
    assert view.toPlainText().split("\n")[2:] == [show_passages_text(3)]
