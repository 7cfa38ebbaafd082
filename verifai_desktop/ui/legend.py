"""The legend under the answer: each sentence label, the conflict marker and the re-citation
sign, in exactly the style :mod:`verifai_desktop.ui.answer_render` gives them in the answer
view."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QUrl, Signal, Slot
from PySide6.QtGui import QColor, QResizeEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextBrowser, QWidget

from verifai_desktop.presentation import (
    CONFLICT_COLOR,
    CONFLICT_GLYPH,
    CONFLICT_TITLE,
    LABEL_STYLES,
)
from verifai_desktop.ui.answer_render import CITATION_COLOR, RECITED_SIGN, sentence_char_format

CONFLICT_DESCRIPTION = "passages elsewhere in your documents contradict the sentence"
RECITED_TITLE = "Re-cited"
RECITED_DESCRIPTION = (
    "the citation was moved to the passage that supports the sentence; hover the sign to see "
    "what the generator cited"
)


WORD_JOINER = "\u2060"
"""No line break on either side: keeps "Re-cited" whole after its hyphen."""
HELP_HREF = "help:colours"
HELP_LINK_TEXT = "What do the colours mean?"
HELP_TIP = "What each colour and mark means, how often it is right, and what to do when it is not"


def unbroken(text: str) -> str:
    """``text`` that never wraps inside: no-break spaces, and no break after a hyphen (the
    legend wraps between its entries only, never as "Re-/cited")."""
    return text.replace(" ", "\u00a0").replace("-", "-" + WORD_JOINER)


class LegendView(QTextBrowser):
    """One line naming each label in exactly the style the answer view uses, and a link to
    the colours' help page.

    Signals:
        help_requested(): the link to the help page was clicked.
    """

    help_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("legend")
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_anchor_clicked)
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
            cursor.insertText(unbroken(f"{style.glyph} {style.title}"), fmt)
            cursor.insertText("   ", QTextCharFormat())
        conflict = QTextCharFormat()
        conflict.setForeground(QColor(CONFLICT_COLOR))
        conflict.setToolTip(CONFLICT_DESCRIPTION)
        cursor.insertText(unbroken(f"{CONFLICT_GLYPH} Conflicting evidence"), conflict)
        cursor.insertText("   ", QTextCharFormat())
        recited = QTextCharFormat()
        recited.setForeground(QColor(CITATION_COLOR))
        recited.setToolTip(RECITED_DESCRIPTION)
        cursor.insertText(unbroken(f"{RECITED_SIGN} {RECITED_TITLE}"), recited)
        cursor.insertText("   ", QTextCharFormat())
        link = QTextCharFormat()
        link.setAnchor(True)
        link.setAnchorHref(HELP_HREF)
        link.setForeground(self.palette().link())
        link.setFontUnderline(True)
        link.setToolTip(HELP_TIP)
        cursor.insertText(unbroken(HELP_LINK_TEXT), link)
        self.moveCursor(QTextCursor.MoveOperation.Start)
        self.setFixedHeight(int(self.fontMetrics().height() * 2.2))
        self.setToolTip(
            "<br>".join(
                f"<b>{s.glyph} {html.escape(s.title)}</b>: {html.escape(s.description)}"
                for s in LABEL_STYLES.values()
            )
            + f"<br><b>{CONFLICT_GLYPH} {html.escape(CONFLICT_TITLE)}</b>: {CONFLICT_DESCRIPTION}"
            + f"<br><b>{RECITED_SIGN} {RECITED_TITLE}</b>: {html.escape(RECITED_DESCRIPTION)}"
        )

    @Slot(QUrl)
    def _on_anchor_clicked(self, url: QUrl) -> None:
        if url.toString() == HELP_HREF:
            self.help_requested.emit()

    def resizeEvent(self, e: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        """Fit the height to the text, which wraps onto a second line in narrow windows."""
        super().resizeEvent(e)
        self.document().setTextWidth(self.viewport().width())
        height = int(self.document().size().height()) + 2 * self.frameWidth() + 2
        if height != self.height():
            self.setFixedHeight(height)
