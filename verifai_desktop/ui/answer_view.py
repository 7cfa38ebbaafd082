"""The answer view: streamed text, then every sentence in its verification style.

What the view shows is written by :mod:`verifai_desktop.ui.answer_render` (an answer) or
:mod:`verifai_desktop.ui.claim_check` (the result of checking a claim across the documents,
:meth:`AnswerView.show_check`), and read back by :mod:`verifai_desktop.ui.answer_readback`: a
hover or a test takes a sentence's label from the document itself
(:meth:`AnswerView.rendered_sentences`), not from the answer that was handed in. Hover or
keyboard focus on a sentence shows its evidence card (:mod:`verifai_desktop.ui.evidence_popup`);
the context menu (:mod:`verifai_desktop.ui.answer_menu`) offers the claim check and the
reader's feedback for the sentence under the mouse or the focused sentence. The legend under
the view is :mod:`verifai_desktop.ui.legend`.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, Qt, QUrl, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFocusEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocumentFragment,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QInputDialog,
    QLineEdit,
    QMenu,
    QTextBrowser,
    QTextEdit,
    QToolTip,
    QWidget,
)

from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.domain import Answer, CheckResult, Passage, SentenceLabel
from verifai_desktop.store.history import Feedback
from verifai_desktop.ui import answer_readback
from verifai_desktop.ui.answer_menu import LINK_COPY_ACTION as LINK_COPY_ACTION
from verifai_desktop.ui.answer_menu import sentence_menu
from verifai_desktop.ui.answer_readback import RenderedSentence
from verifai_desktop.ui.answer_render import (
    HIDE_GENERATED_HREF,
    HIDE_PASSAGES_HREF,
    SHOW_GENERATED_HREF,
    SHOW_PASSAGES_HREF,
    citer_for,
    render_answer,
)
from verifai_desktop.ui.claim_check import BACK_HREF, build_check_html, evidence_for_href
from verifai_desktop.ui.evidence_popup import EvidencePopup, build_evidence_html

ANSWER_HINT = "Ask a question about your documents; the verified answer appears here."
CHECK_HINT = (
    "Type a statement to check; what each of your documents says about it, with the "
    "passages that support or contradict it, appears here."
)
FOCUS_BACKGROUND = "#dbe9fb"
DIM_COLOR = "#9a9fa6"
"""The text colour of an answer being replaced (:meth:`AnswerView.dim`)."""
HINT_FLAGS = int(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft) | int(
    Qt.TextFlag.TextWordWrap
)


class AnswerView(QTextBrowser):
    """Shows an answer; hover or keyboard focus on a sentence shows its evidence card.

    Signals:
        sentence_hovered(int): the sentence under the mouse changed (-1: none).
        sentence_focused(int): keyboard focus moved to a sentence (-1: none).
        citation_activated(int): a citation marker or a sentence was clicked, or Enter was
            pressed on a focused sentence; the 1-based passage number.
        claim_check_requested(str): "Check across my documents" was chosen on a sentence;
            its claim (the text without citation markers).
        evidence_activated(Evidence): a passage of a shown claim check was clicked.
        back_requested(): the link back from a claim check to the answer was clicked.
        generated_toggled(bool): the generated text of an answer refused by evidence was
            shown (True) or hidden (False).
        feedback_given(Feedback): the reader judged a verdict or flagged a sentence of the
            shown answer (kept in the history as :attr:`history_id`).
        feedback_withdrawn(int, int): the reader withdrew their judgements of a sentence:
            its index, and the citation number (-1: every judgement of the sentence).
    """

    sentence_hovered = Signal(int)
    sentence_focused = Signal(int)
    citation_activated = Signal(int)
    claim_check_requested = Signal(str)
    evidence_activated = Signal(object)
    back_requested = Signal()
    generated_toggled = Signal(bool)
    feedback_given = Signal(object)
    feedback_withdrawn = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("answerView")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.viewport().setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.document().setDocumentMargin(12)
        self.popup = EvidencePopup(self)
        self.answer: Answer | None = None
        self.check: CheckResult | None = None
        self.hovered_index = -1
        self.focused_index = -1
        self._streaming = False
        self._pending = False  # the view holds a progress note that the first piece replaces
        self.generated_shown = False  # the generated text of a refused answer is on show
        self.citations = CitationSettings()  # how sources are cited (the window's settings)
        self.passages_shown = False  # the nearest passages of an answer without verdicts
        self.dimmed = False  # the answer on show is being replaced (dim)
        # The shown answer's id in its collection's history (None: not kept, no feedback)
        # and the reader's judgements of it.
        self.history_id: int | None = None
        self.feedback: tuple[Feedback, ...] = ()
        self.anchorClicked.connect(self.on_anchor_clicked)
        # Painted by paintEvent, word-wrapped: Qt clips a QTextEdit placeholder to one line.
        self.hint_text = ANSWER_HINT

    def hint_rect(self) -> QRect:
        """Where the hint is painted in the empty view: the viewport less the document margin."""
        margin = int(self.document().documentMargin())
        return self.viewport().rect().adjusted(margin, margin, -margin, -margin)

    @property
    def showing_hint(self) -> bool:
        """True while the view is empty and not waiting for a streamed answer."""
        return (
            not self._streaming
            and self.answer is None
            and self.check is None
            and self.document().isEmpty()
        )

    def paintEvent(self, e: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        super().paintEvent(e)
        if self.showing_hint and self.hint_text:
            painter = QPainter(self.viewport())
            painter.setFont(self.font())
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(self.hint_rect(), HINT_FLAGS, self.hint_text)
            painter.end()

    # ----- content -------------------------------------------------------------------------

    def clear_answer(self) -> None:
        """Empty the view and forget the answer or claim check."""
        self.answer = None
        self.check = None
        self.generated_shown = False
        self.passages_shown = False
        self.dimmed = False
        self.history_id = None
        self.feedback = ()
        self._streaming = False
        self._pending = False
        self._set_focus_index(-1)
        self.hovered_index = -1
        self.popup.hide()
        self.clear()

    def begin_stream(self) -> None:
        """Start showing a new answer as it is generated."""
        self.clear_answer()
        self._streaming = True

    def append_stream(self, text: str) -> None:
        """Append streamed text in the neutral style (the first piece replaces a progress
        note, :meth:`show_progress`)."""
        if not self._streaming:
            self.begin_stream()
        if self._pending:
            self.clear()
            self._pending = False
            self.dimmed = False
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, QTextCharFormat())
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def dim(self) -> None:
        """Grey out what is on show, for a new question whose passages the sources panel
        already lists: its labels, citation links and sentences' cards are detached (they
        would point at the new passages), its text stays readable until the new answer's
        first piece replaces it (:meth:`append_stream`), or the window shows it again
        (a question stopped or failed before its answer began)."""
        if self.document().isEmpty():
            return
        self.popup.hide()
        self._set_focus_index(-1)
        self.hovered_index = -1
        self.answer = None
        self.check = None
        self.history_id = None
        self.feedback = ()
        grey = QTextCharFormat()
        grey.setForeground(QColor(DIM_COLOR))
        cursor = QTextCursor(self.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.setCharFormat(grey)  # replaces every format: no anchor, label or sentence left
        self.dimmed = True
        self._streaming = True
        self._pending = True  # the first streamed piece replaces it

    def show_pending(self, text: str) -> None:
        """Empty the view and show ``text`` (what is being worked on) in a quiet style."""
        self.clear_answer()
        self._streaming = True
        self._write_note(text)

    def show_progress(self, text: str) -> None:
        """Show ``text`` (e.g. ``Reading the passages… 512 of 1,830 tokens``) in a quiet
        style while a streamed answer (:meth:`begin_stream`) has not begun; each call
        replaces the last, and the first streamed piece replaces it. Does nothing outside a
        stream or once its text has begun."""
        if (
            not self._streaming
            or self.dimmed
            or (not self._pending and not self.document().isEmpty())
        ):
            return
        self.clear()
        self._pending = True
        self._write_note(text)

    @property
    def progress_text(self) -> str:
        """The progress note on show (:meth:`show_progress`), or ``""``."""
        return self.toPlainText() if self._pending and not self.dimmed else ""

    def _write_note(self, text: str) -> None:
        fmt = QTextCharFormat()
        fmt.setForeground(self.palette().color(QPalette.ColorRole.PlaceholderText))
        fmt.setFontItalic(True)
        QTextCursor(self.document()).insertText(text, fmt)

    def show_check(self, result: CheckResult, *, back: bool = False) -> None:
        """Render a claim check (:func:`~verifai_desktop.ui.claim_check.build_check_html`).

        Args:
            result: the check.
            back: offer a link back to the answer (the claim is one of its sentences).
        """
        self.clear_answer()
        self.check = result
        self.setHtml(build_check_html(result, back=back, citations=self.citations))
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def show_answer(
        self, answer: Answer, *, show_generated: bool = False, show_passages: bool = False
    ) -> None:
        """Render ``answer``: labelled sentences, or the abstention text with the closest
        passages (nothing retrieved was close enough) or the closest evidence (no sentence
        supported).

        Args:
            answer: the answer.
            show_generated: for an answer refused by evidence, render its generated sentences
                (as a normal answer, under the refusal) instead of the closest evidence.
            show_passages: unfold the nearest passages listed when there is no verdict to
                show (folded by default: a link unfolds them).
        """
        self.clear_answer()
        self.answer = answer
        self.generated_shown = show_generated and answer.refused_by_evidence
        self.passages_shown = show_passages
        render_answer(
            QTextCursor(self.document()),
            answer,
            show_generated=self.generated_shown,
            point_size=self.font().pointSizeF(),
            citer=citer_for(answer, self.citations),
            show_passages=show_passages,
        )
        self.moveCursor(QTextCursor.MoveOperation.Start)

    # ----- reading back --------------------------------------------------------------------

    def rendered_sentences(self) -> list[RenderedSentence]:
        """Sentences as rendered, read back from the document's character formats, in order."""
        return answer_readback.rendered_sentences(self.document())

    def sentence_labels(self) -> list[tuple[str, SentenceLabel]]:
        """``[(sentence_text, label)]`` read back from the rendered document."""
        return [(r.text, r.label) for r in self.rendered_sentences()]

    def sentence_at(self, pos: QPoint) -> int:
        """Index of the sentence under viewport point ``pos``, -1 when none (exact hit only)."""
        doc_pos = QPointF(
            pos.x() + self.horizontalScrollBar().value(), pos.y() + self.verticalScrollBar().value()
        )
        hit = self.document().documentLayout().hitTest(doc_pos, Qt.HitTestAccuracy.ExactHit)
        return answer_readback.sentence_at(self.document(), hit) if hit >= 0 else -1

    def sentence_span(self, index: int) -> tuple[int, int]:
        """Half-open document positions covered by sentence ``index`` (marker included)."""
        return answer_readback.sentence_span(self.document(), index)

    def sentence_point(self, index: int) -> QPoint:
        """A viewport point inside the first character run of sentence ``index``."""
        start, end = self.sentence_span(index)
        cursor = QTextCursor(self.document())
        cursor.setPosition(start + min(2, max(0, end - start - 1)))
        rect = self.cursorRect(cursor)
        return QPoint(rect.right() + 2, rect.center().y())

    def set_history(self, history_id: int | None, feedback: Sequence[Feedback] = ()) -> None:
        """Say whether the shown answer is kept in the history (its id, or None) and what the
        reader said of its verdicts; a card on show is redrawn with them."""
        self.history_id = history_id
        self.feedback = tuple(feedback) if history_id is not None else ()
        index = self.focused_index if self.focused_index >= 0 else self.hovered_index
        if (
            self.popup.isVisible()
            and self.answer is not None
            and 0 <= index < len(self.answer.sentences)
        ):
            self.popup.show_html(self.hover_html(index), self.popup.pointer)

    def feedback_of(self, index: int, passage: int) -> Feedback | None:
        """The reader's judgement of sentence ``index``'s verdict on passage ``passage``
        (0: the sentence as a whole, a flag), or None."""
        return next(
            (f for f in self.feedback if f.sentence == index and f.passage == passage), None
        )

    def hover_html(self, index: int) -> str:
        """Rich text of the hover card for sentence ``index`` of the shown answer."""
        if self.answer is None:
            raise IndexError("no answer shown")
        citer = citer_for(self.answer, self.citations)
        return build_evidence_html(
            self.answer,
            index,
            feedback=self.feedback,
            feedback_hint=self.history_id is not None,
            name=Passage.source_label if citer is None else citer.label,
        )

    def hover_text(self, index: int) -> str:
        """The hover card as plain text."""
        return QTextDocumentFragment.fromHtml(self.hover_html(index)).toPlainText()

    # ----- interaction ---------------------------------------------------------------------

    def mouseMoveEvent(self, e: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        super().mouseMoveEvent(e)
        index = self.sentence_at(e.position().toPoint()) if self.answer else -1
        if index != self.hovered_index:
            self.hovered_index = index
            self.sentence_hovered.emit(index)
            if index >= 0:
                self.popup.show_html(self.hover_html(index), e.globalPosition().toPoint())
            elif self.focused_index < 0:
                self.popup.hide_soon()  # unless the pointer is on its way onto the card

    def wheelEvent(self, e: QWheelEvent) -> None:  # noqa: N802 (Qt override)
        """Over the sentence whose card is cut to the window, the wheel scrolls the card (the
        pointer cannot reach it without crossing other sentences); elsewhere, the answer."""
        card = self.popup
        here = self.sentence_at(e.position().toPoint()) if self.answer else -1
        if card.isVisible() and card.scrolls and here >= 0 and here == self.hovered_index:
            bar = card.scroll_area.verticalScrollBar()
            bar.setValue(bar.value() - e.angleDelta().y() // 120 * bar.singleStep() * 3)
            e.accept()
            return
        super().wheelEvent(e)

    def leaveEvent(self, e: object) -> None:  # noqa: N802 (Qt override)
        if self.hovered_index >= 0:
            self.hovered_index = -1
            self.sentence_hovered.emit(-1)
        if self.focused_index < 0:
            self.popup.hide_soon()
        super().leaveEvent(e)  # type: ignore[arg-type]

    def viewportEvent(self, e: QEvent) -> bool:  # noqa: N802 (Qt override)
        """Tooltips only over text and never over a sentence: Qt's text control shows the
        nearest character's tooltip, so a sentence's label ("Supported") appeared over empty
        space beside it; over a sentence its card says it all."""
        if (
            isinstance(e, QHelpEvent)
            and e.type() == QEvent.Type.ToolTip
            and not self.tooltip_allowed(e.pos())
        ):
            QToolTip.hideText()
            e.accept()  # handled: an ignored one goes on to the view, which shows it
            return True
        return super().viewportEvent(e)

    def tooltip_allowed(self, pos: QPoint) -> bool:
        """Whether a tooltip may show at viewport point ``pos``: over a character (exact hit)
        that belongs to no sentence with a card."""
        doc_pos = QPointF(
            pos.x() + self.horizontalScrollBar().value(), pos.y() + self.verticalScrollBar().value()
        )
        hit = self.document().documentLayout().hitTest(doc_pos, Qt.HitTestAccuracy.ExactHit)
        return hit >= 0 and (self.answer is None or self.sentence_at(pos) < 0)

    def focusOutEvent(self, e: QFocusEvent) -> None:  # noqa: N802 (Qt override)
        self.popup.hide()
        super().focusOutEvent(e)

    def sentence_count(self) -> int:
        """Sentences rendered for hover, Tab and Enter: the answer's, or 0 while an abstention
        is shown (a refused answer's count once its generated text is shown)."""
        if self.answer is None or (self.answer.abstained and not self.generated_shown):
            return 0
        return len(self.answer.sentences)

    def set_generated_shown(self, shown: bool) -> None:
        """Show or hide the generated text of an answer refused by evidence; it stays the
        same kept answer, so its sentences take the reader's marks (:attr:`history_id`)."""
        if self.answer is not None and self.answer.refused_by_evidence:
            # show_answer starts afresh (clear_answer): it would forget the history id.
            history_id, feedback = self.history_id, self.feedback
            self.show_answer(self.answer, show_generated=shown)
            self.set_history(history_id, feedback)
            self.generated_toggled.emit(self.generated_shown)

    def set_passages_shown(self, shown: bool) -> None:
        """Unfold or fold the nearest passages of an answer without verdicts; it stays the
        same kept answer (:attr:`history_id`, the reader's marks)."""
        if self.answer is not None:
            history_id, feedback = self.history_id, self.feedback
            self.show_answer(self.answer, show_generated=self.generated_shown, show_passages=shown)
            self.set_history(history_id, feedback)

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: N802 (Qt override)
        """Tab and Shift+Tab step through the sentences, then leave the view."""
        n = self.sentence_count()
        if n and self.hasFocus():
            target = self.focused_index + (1 if next else -1)
            if self.focused_index < 0 and not next:
                target = n - 1
            if 0 <= target < n:
                self.focus_sentence(target)
                return True
            self._set_focus_index(-1)
            self.popup.hide()
        return super().focusNextPrevChild(next)

    def keyPressEvent(self, e: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        n = self.sentence_count()
        key = e.key()
        if n and key in (Qt.Key.Key_Down, Qt.Key.Key_Right):
            self.focus_sentence(min(n - 1, self.focused_index + 1))
            return
        if n and key in (Qt.Key.Key_Up, Qt.Key.Key_Left):
            self.focus_sentence(max(0, self.focused_index - 1))
            return
        if n and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.focused_index >= 0:
            assert self.answer is not None
            cites = self.answer.sentences[self.focused_index].citations
            if cites:
                self.citation_activated.emit(cites[0])
            return
        if key == Qt.Key.Key_F10 and e.modifiers() == Qt.KeyboardModifier.ShiftModifier:
            self._show_context_menu(self._menu_point(), keyboard=True)
            return
        if key == Qt.Key.Key_Escape:
            self._set_focus_index(-1)
            self.popup.hide()
            return
        super().keyPressEvent(e)

    def focus_sentence(self, index: int) -> None:
        """Give keyboard focus to sentence ``index``: highlight it and show its card below it."""
        self._set_focus_index(index)
        _start, end = self.sentence_span(index)
        cursor = QTextCursor(self.document())
        cursor.setPosition(end)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()
        rect = self.cursorRect(cursor)
        self.popup.show_html(self.hover_html(index), self.viewport().mapToGlobal(rect.bottomLeft()))

    def _set_focus_index(self, index: int) -> None:
        if index == self.focused_index:
            return
        self.focused_index = index
        selections: list[QTextEdit.ExtraSelection] = []
        if index >= 0:
            start, end = self.sentence_span(index)
            sel = QTextEdit.ExtraSelection()
            cursor = QTextCursor(self.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(FOCUS_BACKGROUND))
            sel.format = fmt
            selections.append(sel)
        self.setExtraSelections(selections)
        self.sentence_focused.emit(index)

    def _menu_point(self) -> QPoint:
        """Where a keyboard-opened menu goes: below the focused sentence, else the text cursor."""
        if self.focused_index >= 0:
            _start, end = self.sentence_span(self.focused_index)
            cursor = QTextCursor(self.document())
            cursor.setPosition(end)
            return self.cursorRect(cursor).bottomLeft()
        return self.cursorRect().bottomLeft()

    def context_menu(self, pos: QPoint, *, keyboard: bool = False) -> QMenu:
        """The context menu at viewport point ``pos`` (:func:`~verifai_desktop.ui.
        answer_menu.sentence_menu`; ``keyboard``: the focused sentence is the one)."""
        return sentence_menu(self, pos, keyboard=keyboard)

    def ask_note(self, index: int) -> str | None:
        """Ask for an optional note when flagging sentence ``index``; None when cancelled
        (a dialog; tests replace this method)."""
        current = self.feedback_of(index, 0)
        value, ok = QInputDialog.getText(
            self,
            "Flag this sentence",
            "What is wrong with it? (optional)",
            QLineEdit.EchoMode.Normal,
            current.note if current is not None else "",
        )
        return value.strip() if ok else None

    def _show_context_menu(self, pos: QPoint, *, keyboard: bool) -> None:
        menu = self.context_menu(pos, keyboard=keyboard)
        self.popup.hide()  # the card would cover the menu
        menu.exec(self.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def contextMenuEvent(self, e: QContextMenuEvent) -> None:  # noqa: N802 (Qt override)
        keyboard = e.reason() == QContextMenuEvent.Reason.Keyboard
        pos = self._menu_point() if keyboard and self.focused_index >= 0 else e.pos()
        self._show_context_menu(pos, keyboard=keyboard)

    @Slot(QUrl)
    def on_anchor_clicked(self, url: QUrl) -> None:
        """``cite:N`` and ``sent:I:N`` links open passage N (when the sentence cites one);
        :data:`SHOW_GENERATED_HREF` and :data:`HIDE_GENERATED_HREF` show and hide the
        generated text of a refused answer; in a claim check, ``evidence:`` links open their
        passage and :data:`BACK_HREF` asks for the answer back."""
        self.popup.hide()  # it would cover the passage being opened
        href = url.toString()
        if self.check is not None:
            if href == BACK_HREF:
                self.back_requested.emit()
            elif (evidence := evidence_for_href(self.check, href)) is not None:
                self.evidence_activated.emit(evidence)
            return
        if href in (SHOW_GENERATED_HREF, HIDE_GENERATED_HREF):
            self.set_generated_shown(href == SHOW_GENERATED_HREF)
            return
        if href in (SHOW_PASSAGES_HREF, HIDE_PASSAGES_HREF):
            self.set_passages_shown(href == SHOW_PASSAGES_HREF)
            return
        parts = href.split(":")
        if parts[0] == "cite" and len(parts) == 2 and parts[1].isdigit():
            self.citation_activated.emit(int(parts[1]))
        elif parts[0] == "sent" and len(parts) == 3 and parts[2].isdigit() and int(parts[2]) > 0:
            self.citation_activated.emit(int(parts[2]))
