"""Conflicting evidence in the app (issue 11): the conflict marker after a sentence, the
conflict section of its hover card, the sources panel's conflict list, "Check a claim" mode and
"Check across my documents" on an answer sentence (fake session: UI control flow only)."""

from __future__ import annotations

import threading

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from tests.ui.conftest import OTHER_TRIAL, contradiction
from verifai_desktop.domain import (
    Answer,
    CheckResult,
    DocId,
    DocumentVerdict,
    Evidence,
    NliLabel,
    SentenceLabel,
    Verdict,
)
from verifai_desktop.errors import ModelNotFound
from verifai_desktop.presentation import (
    CONFLICT_COLOR,
    CONFLICT_GLYPH,
    CONFLICT_TITLE,
    LABEL_STYLES,
)
from verifai_desktop.settings import VerifySettings
from verifai_desktop.ui.answer_menu import CHECK_ACTION_TEXT
from verifai_desktop.ui.answer_render import PROP_CONFLICT
from verifai_desktop.ui.answer_view import AnswerView
from verifai_desktop.ui.claim_check import BACK_HREF
from verifai_desktop.ui.evidence_popup import EVIDENCE_CLOSE, EVIDENCE_OPEN
from verifai_desktop.ui.legend import LegendView
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.window_base import CHECK_MODE


def _view(qtbot: QtBot, answer: Answer) -> AnswerView:
    view = AnswerView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    qtbot.waitExposed(view)
    view.show_answer(answer)
    return view


def _char_format_at(view: AnswerView, text: str) -> tuple[str, bool, str]:
    """(colour, conflict property, tooltip) of the first character of ``text`` in the view."""
    found = view.document().find(text)
    assert not found.isNull(), text
    cursor = QTextCursor(view.document())
    cursor.setPosition(found.selectionStart() + 1)  # the format of the character before
    fmt = cursor.charFormat()
    return fmt.foreground().color().name(), fmt.boolProperty(PROP_CONFLICT), fmt.toolTip()


# ----- answer view and hover card ------------------------------------------------------------


def test_conflict_marker_follows_the_label_glyph_of_contradicted_sentences(
    qtbot: QtBot, conflict_answer: Answer
) -> None:
    view = _view(qtbot, conflict_answer)
    rendered = view.rendered_sentences()
    assert [r.conflict for r in rendered] == [False, True, False, True, False]
    # The sentence text and the label glyph are unchanged by the marker.
    assert [(r.text, r.marker) for r in rendered] == [
        (s.text, LABEL_STYLES[s.label].glyph) for s in conflict_answer.sentences
    ]
    plain = view.toPlainText()
    glyph = LABEL_STYLES[conflict_answer.sentences[1].label].glyph
    assert f"Heparin reduced DVT [2].\u2009{glyph}\u2009{CONFLICT_GLYPH}" in plain
    assert plain.count(CONFLICT_GLYPH) == 2
    assert _char_format_at(view, CONFLICT_GLYPH) == (CONFLICT_COLOR, True, CONFLICT_TITLE)
    assert CONFLICT_COLOR not in {s.color_hex for s in LABEL_STYLES.values()}
    # Hovering the marker belongs to its sentence.
    assert view.sentence_span(1)[1] == view.document().find(CONFLICT_GLYPH).selectionEnd()
    # The legend explains the marker in the same colour.
    legend = LegendView()
    qtbot.addWidget(legend)
    assert (
        f"   {CONFLICT_GLYPH} Conflicting evidence   " in legend.toPlainText()
    )  # nbsp read as spaces
    found = legend.document().find(CONFLICT_GLYPH)
    assert found.charFormat().foreground().color().name() == CONFLICT_COLOR


def test_hover_card_lists_conflicts_with_their_contradicting_sentence(
    qtbot: QtBot, conflict_answer: Answer
) -> None:
    view = _view(qtbot, conflict_answer)
    card = view.hover_html(1)
    text = view.hover_text(1)
    assert f"{CONFLICT_GLYPH} {CONFLICT_TITLE}" in text
    cited, conflicts = text.split(CONFLICT_TITLE)
    assert "[2] bmc_trauma.pdf, p. 3" in cited and "other_trial" not in cited
    # Strongest first: the trial elsewhere (no citation number), then given passage [1].
    assert conflicts.index("other_trial.pdf, p. 7\n") < conflicts.index(
        "[1] deep_rules_09_overfitting.md, Overfitting\n"
    )
    assert "A randomised trial of heparin\n" in conflicts
    assert "support 0.04 · contradict 0.91 · no evidence 0.04" in conflicts
    assert f"{EVIDENCE_OPEN}Heparin did not reduce DVT in this trial.{EVIDENCE_CLOSE}" in card
    assert (
        f"{EVIDENCE_OPEN}A model that memorises the training data fails on new data."
        f"{EVIDENCE_CLOSE}" in card.split(CONFLICT_TITLE)[1]
    )
    # A sentence without conflicts has no such section.
    assert CONFLICT_TITLE not in view.hover_text(0)
    assert QColor(CONFLICT_COLOR).isValid() and CONFLICT_COLOR in card


# ----- sources panel -------------------------------------------------------------------------


def test_sources_panel_lists_conflicts_from_elsewhere_and_opens_them(
    qtbot: QtBot, conflict_answer: Answer, hand_answer: Answer
) -> None:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    sources = window.sources
    window.on_answer_ready(hand_answer)
    assert sources.conflict_texts() == [] and not sources.conflict_table.isVisible()

    window.on_answer_ready(conflict_answer)
    # The trial contradicts two sentences: listed once, with its strongest verdict; passage
    # [1] (given to the generator) is not repeated here, it is a source above.
    assert sources.conflict_texts() == [
        (
            "A randomised trial of heparin\nother_trial.pdf, p. 7\n"
            "Heparin did not reduce DVT in this trial.",
            "0.91",
        )
    ]
    assert len(sources.row_texts()) == 2
    assert sources.conflict_table.isVisible() and sources.conflict_heading.isVisible()
    assert CONFLICT_TITLE in sources.conflict_heading.text()
    tip = sources.conflict_table.item(0, 0).toolTip()
    assert "Contradicts sentence 2 of the answer: “Heparin reduced DVT.”" in tip
    assert "Contradicts sentence 4 of the answer: “Mechanical methods cure everything.”" in tip

    table = sources.conflict_table
    cell = table.visualRect(table.model().index(0, 0)).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert window.tabs.currentWidget() is window.document_view
    assert window.document_view.passage == OTHER_TRIAL
    assert window.document_view.evidence == "Heparin did not reduce DVT in this trial."
    assert window.document_view.highlight_count == 1

    window.ask_task = None
    sources.clear()
    assert sources.conflict_texts() == [] and not sources.conflict_table.isVisible()


# ----- checking a claim ----------------------------------------------------------------------


def _check_result(answer: Answer, claim: str) -> CheckResult:
    md, pdf = answer.passages
    supports = Evidence(
        pdf,
        Verdict(0, NliLabel.SUPPORT, 0.92, 0.03, 0.05, pdf.text[:41], (0, 41)),
    )
    contradicts = contradiction(OTHER_TRIAL, 0.91)
    silent = Evidence(
        md, Verdict(0, NliLabel.NO_EVIDENCE, 0.1, 0.1, 0.8, "Use a held-out test set.", (89, 113))
    )
    return CheckResult(
        claim,
        (supports,),
        (contradicts,),
        (
            DocumentVerdict(DocId(2), pdf.path, pdf.title, "SUPPORT", supports),
            DocumentVerdict(
                DocId(7), OTHER_TRIAL.path, OTHER_TRIAL.title, "CONTRADICT", contradicts
            ),
            DocumentVerdict(DocId(1), md.path, md.title, "NO_EVIDENCE", silent),
        ),
        12,
    )


class _HeldChecks:
    """Stands in for AskSession (control flow only): checks a claim once released."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.release = threading.Event()
        self.claims: list[str] = []
        self.error: Exception | None = None

    def check_claim(self, collection: object, claim: str, **_kwargs: object) -> CheckResult:
        self.claims.append(claim)
        self.release.wait(30)
        if self.error is not None:
            raise self.error
        return _check_result(self.answer, claim)

    def thresholds(self) -> VerifySettings:
        return VerifySettings()


def _window_with_collection(qtbot: QtBot, session: _HeldChecks) -> MainWindow:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window._session = session  # type: ignore[assignment]
    window._models_ready = True
    window.library.create_collection("papers")
    qtbot.waitUntil(
        lambda: window.library.current == "papers" and not window.runner.running, timeout=30_000
    )
    return window


def _click_text(qtbot: QtBot, view: AnswerView, text: str) -> None:
    found = view.document().find(text)
    assert not found.isNull(), text
    cursor = QTextCursor(view.document())
    cursor.setPosition(found.selectionStart() + 2)
    point = view.cursorRect(cursor).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


def _format_of(view: AnswerView, text: str) -> str:
    found = view.document().find(text)
    assert not found.isNull(), text
    return found.charFormat().foreground().color().name()


def test_check_mode_checks_the_typed_claim_and_shows_each_documents_verdict(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    session = _HeldChecks(hand_answer)
    window = _window_with_collection(qtbot, session)
    view = window.answer_view
    window.set_mode(CHECK_MODE)
    assert window.ask_button.text() == "Check"
    assert window.question.placeholderText() == (
        "Type a statement to check against the documents in “papers”…"
    )
    window.question.setText("Heparin reduces DVT [2].")
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    task = window.check_task
    assert task is not None and task.is_running and window.ask_task is None
    assert not window.ask_button.isEnabled() and window.stop_button.isEnabled()
    assert view.toPlainText() == "Checking “Heparin reduces DVT.” across your documents…"
    session.release.set()
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    assert session.claims == ["Heparin reduces DVT."]  # citation markers removed
    assert window.ask_button.isEnabled() and not window.stop_button.isEnabled()

    result = view.check
    assert result is not None and window.check_result is result and window.answer is None
    text = view.toPlainText()
    assert "“Heparin reduces DVT.”" in text and "12 passages checked in 3 documents." in text
    # One verdict per document, coloured like the sentence labels.
    green = LABEL_STYLES[SentenceLabel.SUPPORTED].color_hex
    red = LABEL_STYLES[SentenceLabel.CONTRADICTED].color_hex
    purple = LABEL_STYLES[SentenceLabel.NO_EVIDENCE].color_hex
    assert _format_of(view, "✓ supports") == green
    assert _format_of(view, "✗ contradicts") == red
    assert _format_of(view, "? no evidence") == purple
    assert text.index("DVT prophylaxis review") < text.index("A randomised trial of heparin")
    assert "bmc_trauma.pdf, p. 3 · probability 0.92" in text
    assert "other_trial.pdf, p. 7 · probability 0.91" in text
    assert "deep_rules_09_overfitting.md, Overfitting · probability 0.80" in text
    # Then the passages, each with its source, probabilities and highlighted evidence.
    assert _format_of(view, "Supporting passages (1)") == green
    assert _format_of(view, "Contradicting passages (1)") == red
    contra = text[text.index("Contradicting passages (1)") :]
    assert "other_trial.pdf, p. 7 — A randomised trial of heparin" in contra
    assert "support 0.04 · contradict 0.91 · no evidence 0.04" in contra
    highlight = view.document().find("Heparin did not reduce DVT in this trial.")
    assert highlight.charFormat().background().color().name() == "#fff176"
    assert window.answer_info.text() == (
        "1 document supports, 1 contradicts, 1 without evidence · 12 passages checked"
    )
    assert window.copy_button.isEnabled()  # a claim check is copied like an answer
    assert BACK_HREF not in view.toHtml()

    # Clicking the contradicting passage opens its document at its page.
    _click_text(qtbot, view, "other_trial.pdf, p. 7 — A")
    assert window.tabs.currentWidget() is window.document_view
    assert window.document_view.passage == OTHER_TRIAL
    assert window.document_view.evidence == "Heparin did not reduce DVT in this trial."


def test_check_failures_go_to_the_error_box_and_stop_drops_the_result(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    session = _HeldChecks(hand_answer)
    window = _window_with_collection(qtbot, session)
    window.set_mode(CHECK_MODE)
    session.error = ModelNotFound("verifai-minilm-nli")
    session.release.set()
    task = window.check("Heparin reduces DVT.")
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    boxes = [b for b in window.findChildren(QMessageBox, "errorBox") if b.isVisible()]
    assert len(boxes) == 1 and boxes[0].text().startswith("Checking the claim: ")
    assert "verifai-minilm-nli" in boxes[0].text()
    boxes[0].close()
    assert window.answer_view.check is None and window.answer_view.toPlainText() == ""
    assert window.ask_button.isEnabled()

    session.error = None
    session.release.clear()
    stopped = window.check("Heparin reduces DVT.")
    assert stopped is not None
    window.stop_button.click()
    session.release.set()
    qtbot.waitUntil(lambda: not stopped.is_running, timeout=30_000)
    assert stopped.outcome == "cancelled" and window.check_result is None
    assert window.answer_view.check is None and window.answer_view.showing_hint
    # Nothing to check: nothing starts.
    assert window.check(" [1] ") is None


def test_check_across_my_documents_on_an_answer_sentence(
    qtbot: QtBot, conflict_answer: Answer
) -> None:
    session = _HeldChecks(conflict_answer)
    window = _window_with_collection(qtbot, session)
    view = window.answer_view
    window.on_answer_ready(conflict_answer)

    def check_action(menu_pos: QPoint, *, keyboard: bool = False) -> list[str]:
        menu = view.context_menu(menu_pos, keyboard=keyboard)
        found = [a.text() for a in menu.actions() if a.objectName() == "checkSentenceAction"]
        if found:
            assert menu.actions()[0].objectName() == "checkSentenceAction"
            menu.actions()[0].trigger()
        menu.deleteLater()
        return found

    # Blank space below the answer: no sentence to check, only the text actions.
    assert check_action(view.viewport().rect().bottomRight() - QPoint(5, 5)) == []
    session.release.set()
    assert check_action(view.sentence_point(1)) == [CHECK_ACTION_TEXT]
    task = window.check_task
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    assert session.claims == ["Heparin reduced DVT."]
    assert view.check is not None and view.check.claim == "Heparin reduced DVT."
    # The answer and its sources stay; the check links back to the answer.
    assert window.answer == conflict_answer and len(window.sources.row_texts()) == 2
    assert view.toPlainText().startswith("← Back to the answer")
    _click_text(qtbot, view, "Back to the answer")
    assert view.check is None and view.answer == conflict_answer
    assert [r.conflict for r in view.rendered_sentences()] == [False, True, False, True, False]
    assert window.copy_button.isEnabled()

    # From the keyboard: the focused sentence is checked.
    view.focus_sentence(3)
    assert check_action(QPoint(0, 0), keyboard=True) == [CHECK_ACTION_TEXT]
    second = window.check_task
    assert second is not None and second is not task
    qtbot.waitUntil(lambda: not second.is_running, timeout=30_000)
    assert session.claims[-1] == "Mechanical methods cure everything."
