"""Conflicting evidence in the app (issue 11): the conflict marker after a sentence, the
conflict section of its hover card, the sources panel's conflict list, "Check a claim" mode and
"Check across my documents" on an answer sentence (fake session: UI control flow only)."""

from __future__ import annotations

import threading

from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QTextCursor
from pytestqt.qtbot import QtBot

from tests.ui.conftest import OTHER_TRIAL
from verifai_desktop.domain import Answer
from verifai_desktop.serialize import CONFLICT_COLOR, CONFLICT_GLYPH, CONFLICT_TITLE, LABEL_STYLES
from verifai_desktop.ui.answer_view import PROP_CONFLICT, AnswerView
from verifai_desktop.ui.evidence_popup import EVIDENCE_CLOSE, EVIDENCE_OPEN


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


_ = (threading, QPoint, OTHER_TRIAL)
