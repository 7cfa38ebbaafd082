"""The answer view: streamed text, then every sentence in its verification style.

Each rendered sentence carries its index and label in its ``QTextCharFormat`` properties, so a
hover or a test reads the label back from the document itself
(:meth:`AnswerView.rendered_sentences`)
rather than from the answer that was handed in. Styles come from
:data:`verifai_desktop.serialize.LABEL_STYLES`: colour plus an underline style plus a marker glyph,
so labels read without colour. A sentence that passages elsewhere in the documents contradict
gets the conflict marker (:data:`~verifai_desktop.serialize.CONFLICT_GLYPH`) after its glyph.

An answer refused by evidence (``Answer.abstain_reason == "unsupported"``) opens on
:data:`~verifai_desktop.serialize.UNSUPPORTED_TEXT` and the closest evidence for each of its
sentences; a link shows the generated answer, rendered like any other, and another hides it.

The view also shows the result of checking a claim across the documents
(:meth:`AnswerView.show_check`, built by :mod:`verifai_desktop.ui.claim_check`); its context
menu offers that check for the sentence under the mouse or the focused sentence.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QPointF, QRect, Qt, QUrl, Signal, Slot
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QFocusEvent,
    QFont,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocumentFragment,
    QTextFormat,
)
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu, QTextBrowser, QTextEdit, QWidget

from verifai_desktop.domain import Answer, AnswerSentence, NliLabel, SentenceLabel, Verdict
from verifai_desktop.serialize import (
    CONFLICT_COLOR,
    CONFLICT_GLYPH,
    CONFLICT_TITLE,
    LABEL_STYLES,
    NOT_FOUND_TEXT,
    UNSUPPORTED_TEXT,
    LabelStyle,
    claim_text,
    recitation_note,
)
from verifai_desktop.store.history import Feedback, FeedbackVerdict
from verifai_desktop.ui.claim_check import BACK_HREF, build_check_html, evidence_for_href
from verifai_desktop.ui.evidence_popup import LABEL_NAMES, EvidencePopup, build_evidence_html
from verifai_desktop.verify.conflicts import CheckResult

PROP_SENTENCE = int(QTextFormat.Property.UserProperty) + 1  # int: sentence index
PROP_LABEL = int(QTextFormat.Property.UserProperty) + 2  # str: SentenceLabel value
PROP_MARKER = int(QTextFormat.Property.UserProperty) + 3  # bool: the glyph after a sentence
PROP_CITATION = int(QTextFormat.Property.UserProperty) + 4  # int: cited passage number
PROP_RECITED = int(QTextFormat.Property.UserProperty) + 5  # bool: the re-cited sign
PROP_CONFLICT = int(QTextFormat.Property.UserProperty) + 6  # bool: the conflict marker
RECITED_SIGN = "\u21bb"  # ↻ after the corrected citations of a re-cited sentence
CONFLICT_DESCRIPTION = "passages elsewhere in your documents contradict the sentence"
CHECK_ACTION_TEXT = "Check across my documents"
CHECK_ACTION_TIP = (
    "Search every document of this collection for passages that support or contradict this sentence"
)
SHOW_GENERATED_HREF = "generated:show"
HIDE_GENERATED_HREF = "generated:hide"
SHOW_GENERATED_TEXT = "Show the generated answer"
HIDE_GENERATED_TEXT = "Hide the generated answer"
UNSUPPORTED_NOTE = (
    "An answer was written from the passages, but the verifier found no sentence of it that "
    "the passages support, so it is not given as an answer. The closest evidence:"
)
GENERATED_NOTE = (
    "The generated answer, shown as verified: none of its sentences is supported by the "
    "passages given."
)
FLAG_ACTION_TEXT = "Flag this sentence…"
CLEAR_FEEDBACK_TEXT = "Clear my marks on this sentence"
NOT_SURE_TEXT = "Not sure"
FEEDBACK_OFF_TIP = (
    "Marks are kept with the answer in the collection's history: turn on "
    "“Keep every verified answer” in Settings"
)
NO_VERDICT_NOTE = "No passage given supports it."
EVIDENCE_SENTENCES = 4  # sentences whose closest evidence an unsupported answer lists
CLOSEST_PASSAGES = 5  # passages listed when there is no verdict to show
ANSWER_HINT = "Ask a question about your documents; the verified answer appears here."
CHECK_HINT = (
    "Type a statement to check; what each of your documents says about it, with the "
    "passages that support or contradict it, appears here."
)

_UNDERLINES: dict[str, QTextCharFormat.UnderlineStyle] = {
    "solid": QTextCharFormat.UnderlineStyle.SingleUnderline,
    "dashed": QTextCharFormat.UnderlineStyle.DashUnderline,
    "wavy": QTextCharFormat.UnderlineStyle.WaveUnderline,
    "dotted": QTextCharFormat.UnderlineStyle.DotLine,
    "none": QTextCharFormat.UnderlineStyle.NoUnderline,
}
_CITATION_RE = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
CITATION_COLOR = "#1a4f9c"
FOCUS_BACKGROUND = "#dbe9fb"
HINT_FLAGS = int(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft) | int(
    Qt.TextFlag.TextWordWrap
)


def qt_underline(style: LabelStyle) -> QTextCharFormat.UnderlineStyle:
    """The Qt underline style used for a label style."""
    return _UNDERLINES[style.underline]


def sentence_char_format(label: SentenceLabel) -> QTextCharFormat:
    """Colour and underline of a sentence with ``label`` (no index properties)."""
    style = LABEL_STYLES[label]
    fmt = QTextCharFormat()
    color = QColor(style.color_hex)
    fmt.setForeground(color)
    fmt.setUnderlineStyle(qt_underline(style))
    fmt.setUnderlineColor(color)
    if label is SentenceLabel.CONTRADICTED:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    if label is SentenceLabel.NO_EVIDENCE:
        fmt.setFontItalic(True)
    return fmt


def refused_by_evidence(answer: Answer) -> bool:
    """Whether ``answer`` was refused because no sentence of it is supported (its generated
    sentences are kept), rather than because nothing close enough was retrieved."""
    return answer.abstained and answer.abstain_reason == "unsupported"


def closest_verdict(answer: Answer, sentence: AnswerSentence) -> Verdict | None:
    """The strongest verdict on ``sentence`` against a passage given to the generator.

    Candidates are the verdicts on its citations, on the generator's own citations when it was
    re-cited, and on the passages given that contradict it (``conflicts`` numbered in the
    answer); strength is ``max(P(SUPPORT), P(CONTRADICT))``, as
    :attr:`verifai_desktop.domain.Evidence.strength`.

    Returns:
        The verdict, or ``None`` when the sentence has none (it cites no passage).
    """
    candidates = [
        *sentence.verdicts,
        *sentence.generator_verdicts,
        *(ev.verdict for ev in sentence.conflicts),
    ]
    given = [v for v in candidates if 1 <= v.passage_number <= len(answer.passages)]
    return max(given, key=lambda v: max(v.p_support, v.p_contradict), default=None)


def verdict_phrase(verdict: Verdict) -> str:
    """What a passage does to a sentence, with the deciding probability:
    ``"contradicts it (contradict 0.88)"``."""
    if verdict.label is NliLabel.CONTRADICT:
        return f"contradicts it (contradict {verdict.p_contradict:.2f})"
    if verdict.label is NliLabel.SUPPORT:
        return f"comes closest to supporting it (support {verdict.p_support:.2f})"
    return f"neither supports nor contradicts it (no evidence {verdict.p_no_evidence:.2f})"


@dataclass(frozen=True, slots=True)
class RenderedSentence:
    """A sentence as read back from the rendered document.

    Attributes:
        index: sentence index stored in the format.
        text: concatenated text of the sentence's fragments (marker glyph excluded).
        label: label stored in the format.
        color_hex: foreground colour of the sentence's first fragment.
        underline: Qt underline style of its first fragment.
        marker: the glyph rendered after the sentence ("" if none).
        recited: the re-cited sign (:data:`RECITED_SIGN`) follows the sentence's citations.
        conflict: the conflict marker (:data:`~verifai_desktop.serialize.CONFLICT_GLYPH`)
            follows the label glyph.
    """

    index: int
    text: str
    label: SentenceLabel
    color_hex: str
    underline: QTextCharFormat.UnderlineStyle
    marker: str
    recited: bool = False
    conflict: bool = False


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
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, QTextCharFormat())
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

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
        if not self._streaming or (not self._pending and not self.document().isEmpty()):
            return
        self.clear()
        self._pending = True
        self._write_note(text)

    @property
    def progress_text(self) -> str:
        """The progress note on show (:meth:`show_progress`), or ``""``."""
        return self.toPlainText() if self._pending else ""

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
        self.setHtml(build_check_html(result, back=back))
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def show_answer(self, answer: Answer, *, show_generated: bool = False) -> None:
        """Render ``answer``: labelled sentences, or the abstention text with the closest
        passages (nothing retrieved was close enough) or the closest evidence (no sentence
        supported).

        Args:
            answer: the answer.
            show_generated: for an answer refused by evidence, render its generated sentences
                (as a normal answer, under the refusal) instead of the closest evidence.
        """
        self.clear_answer()
        self.answer = answer
        self.generated_shown = show_generated and refused_by_evidence(answer)
        cursor = QTextCursor(self.document())
        if refused_by_evidence(answer):
            if self.generated_shown:
                self._render_generated(cursor, answer)
            else:
                self._render_unsupported(cursor, answer)
        elif answer.abstained:
            self._render_abstention(cursor, answer)
        else:
            self._render_sentences(cursor, answer)
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def _insert_headline(self, cursor: QTextCursor, text: str) -> None:
        head = QTextCharFormat()
        head.setFontWeight(QFont.Weight.Bold)
        head.setFontPointSize(self.font().pointSizeF() * 1.25)
        cursor.insertText(text, head)

    def _insert_link(self, cursor: QTextCursor, text: str, href: str) -> None:
        link = QTextCharFormat()
        link.setAnchor(True)
        link.setAnchorHref(href)
        link.setForeground(QColor(CITATION_COLOR))
        link.setFontWeight(QFont.Weight.DemiBold)
        cursor.insertText(text, link)

    def _insert_closest_passages(self, cursor: QTextCursor, answer: Answer) -> None:
        for n, passage in enumerate(answer.passages[:CLOSEST_PASSAGES], start=1):
            cursor.insertBlock(QTextBlockFormat())
            self._insert_link(cursor, f"[{n}] {passage.source_label()}", f"cite:{n}")
            snippet = passage.text[:240] + ("…" if len(passage.text) > 240 else "")
            cursor.insertText(f" — {snippet}", QTextCharFormat())

    def _render_abstention(self, cursor: QTextCursor, answer: Answer) -> None:
        self._insert_headline(cursor, NOT_FOUND_TEXT)
        cursor.insertBlock()
        cursor.insertText(
            "No passage in this collection is close enough to the question to answer it. "
            "The closest passages were:",
            QTextCharFormat(),
        )
        self._insert_closest_passages(cursor, answer)

    def _render_unsupported(self, cursor: QTextCursor, answer: Answer) -> None:
        """The refusal, then per sentence (the first :data:`EVIDENCE_SENTENCES`) its
        strongest verdict's passage and deciding window, then the link to the answer."""
        self._insert_headline(cursor, UNSUPPORTED_TEXT)
        cursor.insertBlock()
        cursor.insertText(UNSUPPORTED_NOTE, QTextCharFormat())
        quote = QTextCharFormat()
        quote.setFontItalic(True)
        indent = QTextBlockFormat()
        indent.setIndent(1)
        spaced = QTextBlockFormat()
        spaced.setTopMargin(6)
        shown = answer.sentences[:EVIDENCE_SENTENCES]
        if not any(closest_verdict(answer, s) for s in shown):
            self._insert_closest_passages(cursor, answer)
        else:
            for sentence in shown:
                cursor.insertBlock(spaced)
                cursor.insertText(f"\u201c{claim_text(sentence)}\u201d", quote)
                cursor.insertBlock(indent)
                verdict = closest_verdict(answer, sentence)
                if verdict is None:
                    cursor.insertText(NO_VERDICT_NOTE, QTextCharFormat())
                    continue
                n = verdict.passage_number
                source = answer.passages[n - 1].source_label()
                self._insert_link(cursor, f"[{n}] {source}", f"cite:{n}")
                said = f" {verdict_phrase(verdict)}"
                if verdict.evidence.strip():
                    said += f": \u201c{verdict.evidence.strip()}\u201d"
                cursor.insertText(said, QTextCharFormat())
            more = len(answer.sentences) - len(shown)
            if more > 0:
                cursor.insertBlock(spaced)
                cursor.insertText(
                    f"and {more} more {'sentence' if more == 1 else 'sentences'}.",
                    QTextCharFormat(),
                )
        link_block = QTextBlockFormat()
        link_block.setTopMargin(12)
        cursor.insertBlock(link_block)
        self._insert_link(cursor, SHOW_GENERATED_TEXT, SHOW_GENERATED_HREF)

    def _render_generated(self, cursor: QTextCursor, answer: Answer) -> None:
        """The refusal, the link back to the closest evidence, then the generated answer."""
        self._insert_headline(cursor, UNSUPPORTED_TEXT)
        cursor.insertBlock()
        cursor.insertText(GENERATED_NOTE, QTextCharFormat())
        cursor.insertBlock(QTextBlockFormat())
        self._insert_link(cursor, HIDE_GENERATED_TEXT, HIDE_GENERATED_HREF)
        sentences = QTextBlockFormat()
        sentences.setTopMargin(10)
        cursor.insertBlock(sentences)
        self._render_sentences(cursor, answer)

    def _render_sentences(self, cursor: QTextCursor, answer: Answer) -> None:
        block = cursor.blockFormat()  # keeps the margins of a block made for the sentences
        block.setLineHeight(150.0, int(QTextBlockFormat.LineHeightTypes.ProportionalHeight.value))
        cursor.setBlockFormat(block)
        prev_end = 0
        for i, sentence in enumerate(answer.sentences):
            gap = (
                answer.text[prev_end : sentence.char_start]
                if sentence.char_start >= prev_end
                else " "
            )
            if gap:
                cursor.insertText(gap, QTextCharFormat())
            base = sentence_char_format(sentence.label)
            base.setProperty(PROP_SENTENCE, i)
            base.setProperty(PROP_LABEL, sentence.label.value)
            base.setAnchor(True)
            first = sentence.citations[0] if sentence.citations else 0
            base.setAnchorHref(f"sent:{i}:{first}")
            pos = 0
            for m in _CITATION_RE.finditer(sentence.text):
                cursor.insertText(sentence.text[pos : m.start()], base)
                self._insert_citation(cursor, base, m.group(0))
                pos = m.end()
            cursor.insertText(sentence.text[pos:], base)
            if sentence.recited:
                sign = QTextCharFormat()
                sign.setForeground(QColor(CITATION_COLOR))
                sign.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
                sign.setProperty(PROP_SENTENCE, i)
                sign.setProperty(PROP_LABEL, sentence.label.value)
                sign.setProperty(PROP_RECITED, True)
                sign.setToolTip(recitation_note(sentence))
                cursor.insertText(RECITED_SIGN, sign)
            style = LABEL_STYLES[sentence.label]
            marker = QTextCharFormat()
            marker.setForeground(QColor(style.color_hex))
            marker.setFontWeight(QFont.Weight.Bold)
            marker.setProperty(PROP_SENTENCE, i)
            marker.setProperty(PROP_LABEL, sentence.label.value)
            marker.setProperty(PROP_MARKER, True)
            marker.setToolTip(style.title)
            cursor.insertText("\u2009" + style.glyph, marker)
            if sentence.conflicts:
                flag = QTextCharFormat()
                flag.setForeground(QColor(CONFLICT_COLOR))
                flag.setFontWeight(QFont.Weight.Bold)
                flag.setProperty(PROP_SENTENCE, i)
                flag.setProperty(PROP_LABEL, sentence.label.value)
                flag.setProperty(PROP_CONFLICT, True)
                flag.setToolTip(CONFLICT_TITLE)
                cursor.insertText("\u2009" + CONFLICT_GLYPH, flag)
            prev_end = max(prev_end, sentence.char_end)
        tail = answer.text[prev_end:]
        if tail.strip():
            cursor.insertText(tail, QTextCharFormat())

    def _insert_citation(self, cursor: QTextCursor, base: QTextCharFormat, marker: str) -> None:
        """Insert ``[1, 2]`` with each number a link to its passage, inside the sentence."""
        plain = QTextCharFormat(base)
        plain.setAnchor(False)
        plain.setAnchorHref("")
        plain.setUnderlineStyle(QTextCharFormat.UnderlineStyle.NoUnderline)
        plain.setForeground(QColor(CITATION_COLOR))
        for piece in re.split(r"(\d+)", marker):
            if not piece:
                continue
            if piece.isdigit():
                link = QTextCharFormat(plain)
                link.setAnchor(True)
                link.setAnchorHref(f"cite:{int(piece)}")
                link.setProperty(PROP_CITATION, int(piece))
                link.setFontWeight(QFont.Weight.DemiBold)
                cursor.insertText(piece, link)
            else:
                cursor.insertText(piece, plain)

    # ----- reading back --------------------------------------------------------------------

    def _fragments(self) -> list[tuple[int, str, QTextCharFormat]]:
        out: list[tuple[int, str, QTextCharFormat]] = []
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                if frag.isValid():
                    out.append((frag.position(), frag.text(), frag.charFormat()))
                it += 1
            block = block.next()
        return out

    def rendered_sentences(self) -> list[RenderedSentence]:
        """Sentences as rendered, read back from the document's character formats, in order."""
        texts: dict[int, list[str]] = {}
        first: dict[int, QTextCharFormat] = {}
        markers: dict[int, str] = {}
        labels: dict[int, SentenceLabel] = {}
        recited: set[int] = set()
        conflict: set[int] = set()
        for _pos, text, fmt in self._fragments():
            if not fmt.hasProperty(PROP_SENTENCE):
                continue
            i = int(fmt.property(PROP_SENTENCE))
            labels.setdefault(i, SentenceLabel(str(fmt.property(PROP_LABEL))))
            if fmt.boolProperty(PROP_RECITED):
                recited.add(i)
                continue
            if fmt.boolProperty(PROP_CONFLICT):
                conflict.add(i)
                continue
            if fmt.boolProperty(PROP_MARKER):
                markers[i] = markers.get(i, "") + text.strip()
                continue
            texts.setdefault(i, []).append(text)
            if i not in first and not fmt.hasProperty(PROP_CITATION) and fmt.isAnchor():
                first[i] = fmt
        out = []
        for i in sorted(texts):
            fmt = first.get(i, QTextCharFormat())
            out.append(
                RenderedSentence(
                    index=i,
                    text="".join(texts[i]),
                    label=labels[i],
                    color_hex=fmt.foreground().color().name(),
                    underline=fmt.underlineStyle(),
                    marker=markers.get(i, ""),
                    recited=i in recited,
                    conflict=i in conflict,
                )
            )
        return out

    def sentence_labels(self) -> list[tuple[str, SentenceLabel]]:
        """``[(sentence_text, label)]`` read back from the rendered document."""
        return [(r.text, r.label) for r in self.rendered_sentences()]

    def _format_at(self, position: int) -> QTextCharFormat | None:
        for start, text, fmt in self._fragments():
            if start <= position < start + len(text):
                return fmt
        return None

    def sentence_at(self, pos: QPoint) -> int:
        """Index of the sentence under viewport point ``pos``, -1 when none (exact hit only)."""
        doc_pos = QPointF(
            pos.x() + self.horizontalScrollBar().value(), pos.y() + self.verticalScrollBar().value()
        )
        hit = self.document().documentLayout().hitTest(doc_pos, Qt.HitTestAccuracy.ExactHit)
        if hit < 0:
            return -1
        fmt = self._format_at(hit)
        if fmt is None or not fmt.hasProperty(PROP_SENTENCE):
            return -1
        return int(fmt.property(PROP_SENTENCE))

    def sentence_span(self, index: int) -> tuple[int, int]:
        """Half-open document positions covered by sentence ``index`` (marker included)."""
        positions = [
            (start, start + len(text))
            for start, text, fmt in self._fragments()
            if fmt.hasProperty(PROP_SENTENCE) and int(fmt.property(PROP_SENTENCE)) == index
        ]
        if not positions:
            raise IndexError(f"no rendered sentence {index}")
        return positions[0][0], positions[-1][1]

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
            self.popup.show_html(self.hover_html(index), self.popup.pos() - QPoint(12, 16))

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
        return build_evidence_html(
            self.answer,
            index,
            feedback=self.feedback,
            feedback_hint=self.history_id is not None,
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
                self.popup.hide()

    def leaveEvent(self, e: object) -> None:  # noqa: N802 (Qt override)
        if self.hovered_index >= 0:
            self.hovered_index = -1
            self.sentence_hovered.emit(-1)
        if self.focused_index < 0:
            self.popup.hide()
        super().leaveEvent(e)  # type: ignore[arg-type]

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
        """Show or hide the generated text of an answer refused by evidence."""
        if self.answer is not None and refused_by_evidence(self.answer):
            self.show_answer(self.answer, show_generated=shown)
            self.generated_toggled.emit(self.generated_shown)

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
        """The context menu at viewport point ``pos``: the standard text actions, led by
        "Check across my documents" when there is a sentence to check.

        Args:
            pos: viewport point; the sentence under it is checked.
            keyboard: the menu was opened from the keyboard; the focused sentence is checked.
        """
        scroll = QPoint(self.horizontalScrollBar().value(), self.verticalScrollBar().value())
        menu = self.createStandardContextMenu(pos + scroll)  # takes document coordinates
        index = self.focused_index if keyboard else self.sentence_at(pos)
        if index < 0:
            index = self.focused_index
        if self.answer is not None and refused_by_evidence(self.answer):
            shown = self.generated_shown
            toggle = QAction(HIDE_GENERATED_TEXT if shown else SHOW_GENERATED_TEXT, menu)
            toggle.setObjectName("toggleGeneratedAction")
            toggle.triggered.connect(lambda: self.set_generated_shown(not shown))
            if menu.actions():
                first = menu.actions()[0]
                menu.insertAction(first, toggle)
                menu.insertSeparator(first)
            else:
                menu.addAction(toggle)
        if self.answer is not None and 0 <= index < self.sentence_count():
            claim = claim_text(self.answer.sentences[index])
            action = QAction(CHECK_ACTION_TEXT, menu)
            action.setObjectName("checkSentenceAction")
            action.setToolTip(CHECK_ACTION_TIP)
            action.setStatusTip(CHECK_ACTION_TIP)
            action.triggered.connect(lambda: self.claim_check_requested.emit(claim))
            if menu.actions():
                first = menu.actions()[0]
                menu.insertAction(first, action)
                menu.insertSeparator(first)
            else:
                menu.addAction(action)
            self._add_feedback_actions(menu, index)
        return menu

    def _add_feedback_actions(self, menu: QMenu, index: int) -> None:
        """Put the feedback actions for sentence ``index`` after "Check across my documents"
        (the menu's first action): per cited verdict "[n] verdict is right" and "[n] verdict
        is wrong ▸ Should be: …", then "Flag this sentence…"; disabled when the answer is not
        kept in the history. The reader's current marks are checked."""
        assert self.answer is not None
        sentence = self.answer.sentences[index]
        after = menu.actions()[1] if len(menu.actions()) > 1 else None
        enabled = self.history_id is not None
        added: list[QAction] = []
        if after is None:
            menu.addSeparator()

        def add(action: QAction) -> None:
            action.setEnabled(enabled)
            if not enabled:
                action.setToolTip(FEEDBACK_OFF_TIP)
                action.setStatusTip(FEEDBACK_OFF_TIP)
            if after is not None:
                menu.insertAction(after, action)
            else:
                menu.addAction(action)
            added.append(action)

        for verdict in sentence.verdicts:
            n = verdict.passage_number
            mine = self.feedback_of(index, n)
            shown = verdict.label
            right = QAction(f"[{n}] verdict is right", menu)
            right.setObjectName(f"feedbackRight{n}")
            right.setCheckable(True)
            right.setChecked(mine is not None and mine.verdict == "right")
            right.triggered.connect(
                lambda _c=False, n=n, shown=shown: self._judge(index, n, shown.value, "right")
            )
            add(right)
            wrong_menu = QMenu(f"[{n}] verdict is wrong", menu)
            wrong_menu.setObjectName(f"feedbackWrong{n}")
            choices: list[tuple[str, NliLabel | None]] = [
                (f"Should be: {LABEL_NAMES[label]}", label) for label in NliLabel
            ]
            choices.append((NOT_SURE_TEXT, None))
            for text, label in choices:
                choice = QAction(text, wrong_menu)
                choice.setObjectName(f"feedbackWrong{n}_{label.value if label else 'unsure'}")
                choice.setCheckable(True)
                choice.setChecked(
                    mine is not None and mine.verdict == "wrong" and mine.label == label
                )
                choice.setEnabled(label is not shown)  # "wrong, should be what it is" is no mark
                choice.triggered.connect(
                    lambda _c=False, n=n, shown=shown, label=label: self._judge(
                        index, n, shown.value, "wrong", label
                    )
                )
                wrong_menu.addAction(choice)
            wrong_menu.menuAction().setObjectName(f"feedbackWrong{n}Action")
            add(wrong_menu.menuAction())
        flagged = self.feedback_of(index, 0)
        flag = QAction(FLAG_ACTION_TEXT, menu)
        flag.setObjectName("feedbackFlag")
        flag.setCheckable(True)
        flag.setChecked(flagged is not None and flagged.verdict == "flagged")
        flag.triggered.connect(lambda: self._flag(index))
        add(flag)
        if any(f.sentence == index for f in self.feedback):
            clear = QAction(CLEAR_FEEDBACK_TEXT, menu)
            clear.setObjectName("feedbackClear")
            clear.triggered.connect(lambda: self.feedback_withdrawn.emit(index, -1))
            add(clear)
        if after is not None:
            menu.insertSeparator(added[0])

    def _judge(
        self,
        index: int,
        passage: int,
        shown: str,
        verdict: FeedbackVerdict,
        label: NliLabel | None = None,
    ) -> None:
        if self.history_id is None:
            return
        mine = self.feedback_of(index, passage)
        if mine is not None and mine.verdict == verdict and mine.label == label:
            self.feedback_withdrawn.emit(index, passage)  # chosen again: taken back
            return
        self.feedback_given.emit(Feedback(self.history_id, index, passage, shown, verdict, label))

    def _flag(self, index: int) -> None:
        if self.history_id is None or self.answer is None:
            return
        note = self.ask_note(index)
        if note is None:
            return
        shown = self.answer.sentences[index].label.value
        self.feedback_given.emit(Feedback(self.history_id, index, 0, shown, "flagged", note=note))

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
        parts = href.split(":")
        if parts[0] == "cite" and len(parts) == 2 and parts[1].isdigit():
            self.citation_activated.emit(int(parts[1]))
        elif parts[0] == "sent" and len(parts) == 3 and parts[2].isdigit() and int(parts[2]) > 0:
            self.citation_activated.emit(int(parts[2]))


class LegendView(QTextBrowser):
    """One line naming each label in exactly the style the answer view uses."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("legend")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QTextBrowser.Shape.NoFrame)
        self.document().setDocumentMargin(4)
        cursor = QTextCursor(self.document())
        cursor.insertText("Legend:  ", QTextCharFormat())
        for style in LABEL_STYLES.values():
            fmt = sentence_char_format(style.label)
            fmt.setToolTip(style.description)
            # No-break spaces keep glyph and name together when the legend wraps.
            cursor.insertText(f"{style.glyph} {style.title}".replace(" ", "\u00a0"), fmt)
            cursor.insertText("   ", QTextCharFormat())
        conflict = QTextCharFormat()
        conflict.setForeground(QColor(CONFLICT_COLOR))
        conflict.setToolTip(CONFLICT_DESCRIPTION)
        cursor.insertText(f"{CONFLICT_GLYPH} Conflicting evidence".replace(" ", "\u00a0"), conflict)
        self.moveCursor(QTextCursor.MoveOperation.Start)
        self.setFixedHeight(int(self.fontMetrics().height() * 2.2))
        self.setToolTip(
            "<br>".join(
                f"<b>{s.glyph} {html.escape(s.title)}</b>: {html.escape(s.description)}"
                for s in LABEL_STYLES.values()
            )
            + f"<br><b>{CONFLICT_GLYPH} {html.escape(CONFLICT_TITLE)}</b>: {CONFLICT_DESCRIPTION}"
        )

    def resizeEvent(self, e: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """Fit the height to the text, which wraps onto a second line in narrow windows."""
        super().resizeEvent(e)
        self.document().setTextWidth(self.viewport().width())
        height = int(self.document().size().height()) + 2 * self.frameWidth() + 2
        if height != self.height():
            self.setFixedHeight(height)
