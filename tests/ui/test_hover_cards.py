"""Hover cards stay on screen (issue 42, item 4): inside the window, above the pointer near the
window's bottom, cut to the window and scrolling inside when longer; only over a sentence (no
stray one-word tooltips over empty answer space); closed when a citation is clicked.

The real window at the size it opens with on a 1366x768 screen, a hand-made answer whose last
sentence cites six long passages and has three conflicting ones (a card taller than the
window)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QSize, Qt
from PySide6.QtGui import QHelpEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot

from verifai_desktop.domain import (
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
    Verdict,
)
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.reading_layout import window_size

SCREEN_1366 = QSize(1366, 728)  # 1366x768 less a 40 px taskbar
FILLER = "This sentence only fills the answer so that the last one sits near the bottom."
EVIDENCE = "Heparin reduced the rate of deep vein thrombosis by half in the treated group."


def _passage(n: int) -> Passage:
    text = (
        "Background words about the trial and its many patients, their ages and their care. " * 4
        + EVIDENCE
        + " More words about the follow-up and the methods of the study afterwards." * 4
    )
    return Passage(
        ChunkId(100 + n),
        DocId(n),
        Path(f"/docs/trial_{n}.pdf"),
        f"Trial {n}",
        text,
        0,
        len(text),
        Location(LocationKind.PAGE, n),
        ((0, len(text)),),
    )


def long_card_answer(fillers: int = 24) -> Answer:
    """``fillers`` unreferenced sentences, then one citing six passages with three conflicts."""
    passages = tuple(_passage(n) for n in range(1, 7))
    start = passages[0].text.index(EVIDENCE)
    span = (start, start + len(EVIDENCE))
    verdicts = tuple(
        Verdict(n, NliLabel.SUPPORT, 0.9, 0.05, 0.05, EVIDENCE, span) for n in range(1, 7)
    )
    conflicts = tuple(
        Evidence(_passage(n), Verdict(0, NliLabel.CONTRADICT, 0.05, 0.9, 0.05, EVIDENCE, span))
        for n in range(7, 10)
    )
    text = ""
    sentences = []
    for _ in range(fillers):
        start_at = len(text)
        text += FILLER + " "
        sentences.append(
            AnswerSentence(
                FILLER, start_at, start_at + len(FILLER), (), (), SentenceLabel.UNREFERENCED
            )
        )
    last = "Heparin halved deep vein thrombosis [1][2][3][4][5][6]."
    start_at = len(text)
    text += last
    sentences.append(
        AnswerSentence(
            last,
            start_at,
            len(text),
            (1, 2, 3, 4, 5, 6),
            verdicts,
            SentenceLabel.SUPPORTED,
            conflicts=conflicts,
        )
    )
    return Answer("Does heparin prevent DVT?", text, tuple(sentences), passages)


def _window(qtbot: QtBot, answer: Answer) -> MainWindow:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.resize(window_size(SCREEN_1366))
    window.move(0, 0)
    window.show()
    qtbot.waitExposed(window)
    window.answer = answer
    window.answer_view.show_answer(answer)
    return window


def _inside(inner: QRect, outer: QRect) -> bool:
    return outer.contains(inner.topLeft()) and outer.contains(inner.bottomRight())


def test_card_geometry_flips_above_and_cuts_a_card_taller_than_the_room() -> None:
    from verifai_desktop.ui.evidence_popup import CARD_EDGE_PX, card_geometry

    area = QRect(0, 0, 1256, 669)
    edge = area.adjusted(CARD_EDGE_PX, CARD_EDGE_PX, -CARD_EDGE_PX, -CARD_EDGE_PX)
    # Room below: below the pointer.
    below = card_geometry(QSize(540, 200), QPoint(100, 100), area)
    assert below.top() > 100 and _inside(below, edge) and below.height() == 200
    # Near the bottom: above the pointer, whole.
    above = card_geometry(QSize(540, 300), QPoint(1200, 600), area)
    assert above.bottom() < 600 and _inside(above, edge) and above.height() == 300
    # Taller than the room on either side: on the larger side, cut to it.
    tall = card_geometry(QSize(540, 2000), QPoint(100, 600), area)
    assert tall.bottom() < 600 and _inside(tall, edge) and tall.height() < 600


def test_a_long_card_near_the_bottom_stays_inside_the_window_and_scrolls(
    qtbot: QtBot,
) -> None:
    answer = long_card_answer()
    window = _window(qtbot, answer)
    view = window.answer_view
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    last = len(answer.sentences) - 1
    point = view.sentence_point(last)
    assert point.y() > view.viewport().height() // 2  # the sentence is in the lower half
    with qtbot.waitSignal(view.sentence_hovered, timeout=2000) as blocker:
        qtbot.mouseMove(view.viewport(), point)
    assert blocker.args == [last]
    card = view.popup
    assert card.isVisible()
    assert card.label.text() == view.hover_html(last)
    pointer = view.viewport().mapToGlobal(point)
    assert _inside(card.frameGeometry(), window.frameGeometry())
    assert not card.frameGeometry().contains(pointer)  # never over the sentence read
    assert (
        card.label.heightForWidth(card.label.width()) > window.height()
    )  # the card is taller than the window
    assert card.scrolls  # so it scrolls inside
    # The wheel over the sentence scrolls the card, not the answer.
    bar = card.scroll_area.verticalScrollBar()
    answer_at = view.verticalScrollBar().value()
    wheel = QWheelEvent(
        QPointF(point), QPointF(pointer), QPoint(0, 0), QPoint(0, -120),
        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase, False,
    )  # fmt: skip
    QApplication.sendEvent(view.viewport(), wheel)
    assert bar.value() > 0 and card.isVisible()
    assert view.verticalScrollBar().value() == answer_at


def test_no_tooltip_over_empty_answer_space(qtbot: QtBot, hand_answer: Answer) -> None:
    window = _window(qtbot, hand_answer)
    view = window.answer_view
    viewport = view.viewport()
    # Below the answer's last line, where Qt's text control found the nearest character: the
    # last sentence's marker, "Unreferenced".
    end = view.sentence_point(len(hand_answer.sentences) - 1)
    empty = QPoint(viewport.width() - 8, end.y() + 3 * view.fontMetrics().height())
    assert empty.y() < viewport.height()
    assert view.sentence_at(empty) == -1
    event = QHelpEvent(QEvent.Type.ToolTip, empty, viewport.mapToGlobal(empty))
    QApplication.sendEvent(viewport, event)
    assert QToolTip.text() == ""
    assert not QToolTip.isVisible()


def test_a_click_on_a_citation_closes_the_card(qtbot: QtBot, hand_answer: Answer) -> None:
    answer = dataclasses.replace(hand_answer)
    window = _window(qtbot, answer)
    view = window.answer_view
    point = view.sentence_point(0)
    with qtbot.waitSignal(view.sentence_hovered, timeout=2000):
        qtbot.mouseMove(view.viewport(), point)
    assert view.popup.isVisible()
    with qtbot.waitSignal(view.citation_activated, timeout=2000):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert window.tabs.currentWidget() is window.document_view  # the passage opened
    assert not view.popup.isVisible()
