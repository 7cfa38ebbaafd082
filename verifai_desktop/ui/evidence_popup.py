"""The hover card of an answer sentence: its label and probability (for an unsure sentence, the
verifier's best guess), the cited source, the checks that held its verdict back, and the
evidence window that decided the verdict highlighted inside its passage; then the passages
elsewhere in the documents that contradict it."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QHideEvent
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from verifai_desktop.domain import Answer, Evidence, NliLabel, Passage, Verdict
from verifai_desktop.presentation import (
    CHECK_VERDICT_TEXT,
    CONFLICT_COLOR,
    CONFLICT_GLYPH,
    CONFLICT_TITLE,
    LABEL_STYLES,
    flag_lines,
    injection_warning,
    ocr_note,
    recitation_note,
    sentence_probability,
    unsure_guess,
    verdict_summary,
)
from verifai_desktop.store.history import Feedback

SourceName = Callable[[Passage], str]
"""How a card names a passage's source (:meth:`Passage.source_label` or ``Citer.label``)."""

EVIDENCE_OPEN = '<span style="background-color:#fff176;font-weight:600;">'
"""Opening tag around the evidence sentence in the hover HTML (tests look for it)."""
EVIDENCE_CLOSE = "</span>"
CITATION_NOTE_COLOR = "#1a5fb4"  # the re-citation note
FLAG_COLOR = "#6b4e00"  # a check that held a verdict back: dark amber, no label's hue
CONTEXT_CHARS = 260  # passage characters kept on each side of the evidence sentence
CONFLICT_CONTEXT_CHARS = 140  # less around a conflict's sentence: the card lists several
CARD_CONFLICTS = 3  # conflicts shown in full in a card; the sources panel lists them all
FEEDBACK_COLOR = "#5a3d8a"  # the reader's own marks on a card
FEEDBACK_HINT = "Right-click to mark a verdict right or wrong, or to flag the sentence."
"""The card's last line when the shown answer is kept in the history (feedback possible)."""
LABEL_NAMES: dict[NliLabel, str] = {
    NliLabel(label): text.capitalize()
    for label, text in CHECK_VERDICT_TEXT.items()
    if label in tuple(NliLabel)  # a claim check's UNSURE is no verifier label
}
"""How a verdict label is named in feedback menus and on the card ("Supports"): the words of
a claim check's document verdicts."""


def feedback_line(feedback: Feedback) -> str:
    """One reader's judgement in words: ``"You marked [2] wrong: should be Supports"``,
    ``"You marked [1] right"``, ``"You flagged this sentence: the dose is wrong"``."""
    if feedback.verdict == "flagged":
        text = "You flagged this sentence"
    elif feedback.verdict == "right":
        text = f"You marked [{feedback.passage}] right"
    elif feedback.label is not None:
        text = f"You marked [{feedback.passage}] wrong: should be {LABEL_NAMES[feedback.label]}"
    else:
        text = f"You marked [{feedback.passage}] wrong (not sure what it should be)"
    if feedback.note:
        text += f" — “{feedback.note}”" if feedback.verdict != "flagged" else f": {feedback.note}"
    return text


def excerpt_with_evidence(
    text: str, span: tuple[int, int], *, context_chars: int = CONTEXT_CHARS
) -> str:
    """``text`` as escaped HTML, ``text[span[0]:span[1]]`` wrapped in
    :data:`EVIDENCE_OPEN`/:data:`EVIDENCE_CLOSE`, cut to ``context_chars`` characters on each
    side ("…" where cut); without a valid span, the start of ``text``."""
    start, end = span
    if not (0 <= start < end <= len(text)):
        short = text[: 2 * context_chars]
        return html.escape(short) + ("…" if len(text) > len(short) else "")
    lo = max(0, start - context_chars)
    hi = min(len(text), end + context_chars)
    return (
        ("…" if lo > 0 else "")
        + html.escape(text[lo:start])
        + EVIDENCE_OPEN
        + html.escape(text[start:end])
        + EVIDENCE_CLOSE
        + html.escape(text[end:hi])
        + ("…" if hi < len(text) else "")
    )


def _verdict_html(answer: Answer, verdict: Verdict, name: SourceName) -> str:
    n = verdict.passage_number
    if not 1 <= n <= len(answer.passages):
        return f"<p>[{n}] cites a passage that was not retrieved.</p>"
    passage = answer.passages[n - 1]
    head = (
        f"<p style='margin:6px 0 2px 0'><b>[{n}] {html.escape(name(passage))}</b>"
        f"<br><span style='color:#555'>{html.escape(passage.title)}</span>"
        f"{_ocr_line(passage)}"
        f"<br><span style='color:#333'>{html.escape(verdict_summary(verdict))}</span></p>"
    )
    if passage.instruction_cues:
        head += (
            "<p style='margin:0 0 4px 10px;color:#a15c00'>⚠ "
            f"{html.escape(injection_warning(passage))}</p>"
        )
    head += flags_html(verdict)
    body = excerpt_with_evidence(passage.text, evidence_span(passage, verdict))
    return head + f"<p style='margin:0 0 4px 10px'>{body}</p>"


def _ocr_line(passage: Passage) -> str:
    """A line saying the passage was read from a page image (engine, confidence); ``""``
    for text from the document's text layer."""
    note = ocr_note(passage)
    return f"<br><span style='color:#555'><i>{html.escape(note)}</i></span>" if note else ""


def flags_html(verdict: Verdict) -> str:
    """The checks that held ``verdict`` back (:func:`~verifai_desktop.presentation.
    flag_lines`), one per line in :data:`FLAG_COLOR`; ``""`` when none did."""
    lines = flag_lines(verdict)
    if not lines:
        return ""
    return (
        f"<p style='margin:0 0 4px 10px;color:{FLAG_COLOR}'>"
        + "<br>".join(html.escape(line) for line in lines)
        + "</p>"
    )


def evidence_span(passage: Passage, verdict: Verdict) -> tuple[int, int]:
    """Offsets of ``verdict.evidence`` into ``passage.text``: ``verdict.evidence_span``, or
    where the evidence text is found when the span was not recorded; ``(0, 0)`` if neither."""
    span = verdict.evidence_span
    if span == (0, 0) and verdict.evidence:
        found = passage.text.find(verdict.evidence)
        span = (found, found + len(verdict.evidence)) if found >= 0 else span
    return span


def conflict_html(evidence: Evidence, name: SourceName = Passage.source_label) -> str:
    """One contradicting passage of a card: its source (with its citation number when it was
    given to the generator; named by ``name``), title, verdict and the contradicting window
    highlighted."""
    passage, verdict = evidence.passage, evidence.verdict
    number = f"[{verdict.passage_number}] " if verdict.passage_number > 0 else ""
    body = excerpt_with_evidence(
        passage.text, evidence_span(passage, verdict), context_chars=CONFLICT_CONTEXT_CHARS
    )
    return (
        f"<p style='margin:6px 0 2px 0'><b>{number}{html.escape(name(passage))}</b>"
        f"<br><span style='color:#555'>{html.escape(passage.title)}</span>"
        f"{_ocr_line(passage)}"
        f"<br><span style='color:#333'>{html.escape(verdict_summary(verdict))}</span></p>"
        f"{flags_html(verdict)}<p style='margin:0 0 4px 10px'>{body}</p>"
    )


def build_evidence_html(
    answer: Answer,
    index: int,
    *,
    feedback: Sequence[Feedback] = (),
    feedback_hint: bool = False,
    name: SourceName = Passage.source_label,
) -> str:
    """Rich text for the hover card of ``answer.sentences[index]``.

    Shows the label with its glyph and probability (the strongest verdict's; for an unsure
    sentence, "Unsure" with the best guess of its deciding verdict,
    :func:`~verifai_desktop.presentation.unsure_guess`); for a re-cited
    sentence, which passages the generator named (with their verdicts) and which hold the
    evidence; then per citation the source (file, page/slide/chapter), the verdict and the
    passage with the deciding evidence window wrapped in
    :data:`EVIDENCE_OPEN`/:data:`EVIDENCE_CLOSE`, and every check that held the verdict back
    (:func:`flags_html`); last, under :data:`CONFLICT_TITLE`, the
    passages that contradict the sentence (``sentence.conflicts``, the first
    :data:`CARD_CONFLICTS` in full), each with its contradicting window highlighted. Last,
    the reader's own judgements of this sentence (:func:`feedback_line`) and, with
    ``feedback_hint``, :data:`FEEDBACK_HINT`.

    Args:
        answer: the answer.
        index: 0-based sentence index.
        feedback: judgements of the answer kept in its history (those of other sentences
            are ignored).
        feedback_hint: the answer is kept in the history, so its verdicts can be judged.
        name: how a passage's source is named (``Citer.label``: "Cohan et al., 2020, p. 3"
            for a library document in the author-year style; the file and page by default).

    Raises:
        IndexError: ``index`` is not a sentence of ``answer``.
    """
    sentence = answer.sentences[index]
    style = LABEL_STYLES[sentence.label]
    p = sentence_probability(sentence)
    prob = f" — probability {p:.2f}" if p is not None else ""
    if unsure_guess(sentence):
        prob = f" — {html.escape(unsure_guess(sentence))}"
    parts = [
        f"<p style='margin:0'><b style='color:{style.color_hex}'>{style.glyph} "
        f"{html.escape(style.title)}</b>{prob}</p>"
    ]
    if sentence.recited:
        parts.append(
            f"<p style='margin:4px 0;color:{CITATION_NOTE_COLOR}'>\u21bb "
            f"{html.escape(recitation_note(sentence))}</p>"
        )
        for verdict in sentence.generator_verdicts:
            parts.append(_named_html(answer, verdict, name))
    if not sentence.verdicts:
        parts.append("<p>This sentence cites no passage, so it was not checked.</p>")
    for verdict in sentence.verdicts:
        parts.append(_verdict_html(answer, verdict, name))
    if sentence.conflicts:
        parts.append(
            f"<p style='margin:10px 0 0 0;color:{CONFLICT_COLOR}'><b>{CONFLICT_GLYPH} "
            f"{html.escape(CONFLICT_TITLE)}</b></p>"
        )
        parts += [conflict_html(ev, name) for ev in sentence.conflicts[:CARD_CONFLICTS]]
        more = len(sentence.conflicts) - CARD_CONFLICTS
        if more > 0:
            parts.append(
                f"<p style='margin:0 0 4px 10px;color:#555'>and {more} more "
                f"{'passage' if more == 1 else 'passages'}.</p>"
            )
    mine = [fb for fb in feedback if fb.sentence == index]
    if mine:
        parts.append(
            f"<p style='margin:8px 0 0 0;color:{FEEDBACK_COLOR}'>"
            + "<br>".join(html.escape(feedback_line(fb)) for fb in mine)
            + "</p>"
        )
    if feedback_hint:
        parts.append(
            f"<p style='margin:6px 0 0 0;color:#777'><i>{html.escape(FEEDBACK_HINT)}</i></p>"
        )
    return "".join(parts)


def _named_html(answer: Answer, verdict: Verdict, name: SourceName) -> str:
    """One line for a passage the generator cited but that does not hold the evidence."""
    n = verdict.passage_number
    where = name(answer.passages[n - 1]) if 1 <= n <= len(answer.passages) else "?"
    return (
        f"<p style='margin:0 0 4px 10px;color:#555'>Named by the generator: [{n}] "
        f"{html.escape(where)} — {html.escape(verdict_summary(verdict))}</p>"
    )


CARD_WIDTH_PX = 520  # the card's text width
CARD_GAP_BELOW_PX = 16  # between the pointer and a card shown below it
CARD_GAP_ABOVE_PX = 8  # between the pointer and a card shown above it
CARD_EDGE_PX = 4  # kept free between a card and the window's edge
MIN_CARD_HEIGHT_PX = 120  # a card squeezed by the window still shows this much, scrolling
HIDE_DELAY_MS = 300  # the pointer may travel this long from a sentence onto its card


def card_geometry(size: QSize, pointer: QPoint, area: QRect) -> QRect:
    """Where a card of natural ``size`` goes for a pointer at ``pointer``, inside ``area``
    (global pixels): below the pointer when it fits, else above it, else on the side with
    more room with its height cut to that room (the card scrolls inside); never over the
    pointer, and shifted left to stay inside ``area``.

    Returns:
        The card's rectangle, global pixels; its height may be less than ``size``'s.
    """
    inner = area.adjusted(CARD_EDGE_PX, CARD_EDGE_PX, -CARD_EDGE_PX, -CARD_EDGE_PX)
    height = min(size.height(), inner.height())
    below_top = pointer.y() + CARD_GAP_BELOW_PX
    room_below = inner.bottom() + 1 - below_top
    room_above = pointer.y() - CARD_GAP_ABOVE_PX - inner.top()
    if height <= room_below:
        top = below_top
    elif height <= room_above:
        top = pointer.y() - CARD_GAP_ABOVE_PX - height
    elif room_below >= room_above:
        height = max(min(height, MIN_CARD_HEIGHT_PX), room_below)
        top = below_top
    else:
        height = max(min(height, MIN_CARD_HEIGHT_PX), room_above)
        top = pointer.y() - CARD_GAP_ABOVE_PX - height
    top = max(inner.top(), min(top, inner.bottom() + 1 - height))
    width = min(size.width(), inner.width())
    left = max(inner.left(), min(pointer.x() + 12, inner.right() + 1 - width))
    return QRect(left, top, width, height)


class EvidencePopup(QFrame):
    """A tooltip-like frame that shows the hover card; it never takes focus.

    It stays inside the window it belongs to (:func:`card_geometry`): below the pointer, or
    above it near the window's bottom, and a card taller than the window scrolls inside: the
    mouse wheel over its sentence scrolls it (:meth:`AnswerView.wheelEvent
    <verifai_desktop.ui.answer_view.AnswerView.wheelEvent>`), or the pointer moves onto it
    within :data:`HIDE_DELAY_MS`; the card hides when the pointer leaves it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.ToolTip | Qt.WindowType.FramelessWindowHint)
        self.setObjectName("evidencePopup")
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setFixedWidth(CARD_WIDTH_PX)
        self.label.setContentsMargins(10, 8, 10, 8)
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setObjectName("evidenceScroll")
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self.label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(1, 1, 1, 1)
        layout.addWidget(self.scroll_area)
        self._hide_timer = QTimer(self)
        self._hide_timer.setSingleShot(True)
        self._hide_timer.setInterval(HIDE_DELAY_MS)
        self._hide_timer.timeout.connect(self._hide_unless_hovered)
        self.pointer = QPoint()  # where the card was last shown for (global pixels)

    @property
    def scrolls(self) -> bool:
        """True when the card is cut to the window and scrolls inside."""
        return self.label.height() > self.scroll_area.viewport().height()

    def natural_size(self) -> QSize:
        """The card's size with all of its text shown (pixels)."""
        height = self.label.heightForWidth(CARD_WIDTH_PX)
        self.label.resize(CARD_WIDTH_PX, height)
        frame = 2 * (self.frameWidth() + 1)
        bar = self.scroll_area.verticalScrollBar().sizeHint().width()
        return QSize(CARD_WIDTH_PX + frame + bar, height + frame)

    def show_html(self, rich_text: str, global_pos: QPoint, area: QRect | None = None) -> None:
        """Show ``rich_text`` next to the pointer at ``global_pos`` (:func:`card_geometry`),
        inside ``area`` (global pixels; default: the parent's window, within its screen)."""
        self._hide_timer.stop()
        self.pointer = QPoint(global_pos)
        self.label.setText(rich_text)
        self.scroll_area.verticalScrollBar().setValue(0)
        rect = card_geometry(self.natural_size(), global_pos, area or self.allowed_area(global_pos))
        self.setGeometry(rect)
        self.show()

    def allowed_area(self, global_pos: QPoint) -> QRect:
        """The parent's window (its frame) within the screen at ``global_pos``, global pixels;
        the screen alone without a parent."""
        screen = QGuiApplication.screenAt(global_pos) or QGuiApplication.primaryScreen()
        screen_rect = screen.availableGeometry() if screen is not None else QRect()
        parent = self.parentWidget()
        if parent is None:
            return screen_rect
        window = parent.window()
        area = window.frameGeometry() if window.isWindow() else window.geometry()
        return area.intersected(screen_rect) if screen_rect.isValid() else area

    def hide_soon(self) -> None:
        """Hide after :data:`HIDE_DELAY_MS` unless the pointer is on the card by then."""
        if self.isVisible():
            self._hide_timer.start()

    def _hide_unless_hovered(self) -> None:
        if not self.underMouse():
            self.hide()

    def hideEvent(self, e: QHideEvent) -> None:  # noqa: N802 (Qt override)
        self._hide_timer.stop()
        super().hideEvent(e)

    def leaveEvent(self, e: QEvent) -> None:  # noqa: N802 (Qt override)
        self.hide_soon()
        super().leaveEvent(e)
