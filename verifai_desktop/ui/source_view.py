"""A text file (TXT, Markdown) shown whole in the document view, as written, scrolled to a
passage with its evidence highlighted (issue 42, item 10); the passage is found in the file by
:mod:`verifai_desktop.ingest.source_text`."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QFont, QTextCursor, QTextFormat
from PySide6.QtWidgets import QTextBrowser, QTextEdit

from verifai_desktop.domain import Passage
from verifai_desktop.ingest.source_text import SourceText, read_source

HIGHLIGHT_COLOR = "#fff176"  # as the hover card's and the passage text's evidence
VIEW_CONTEXT = 1 / 3  # the evidence's top sits this far down the view, as on a PDF page


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """Where a passage's evidence is in its text file.

    Attributes:
        source: the file as written.
        start: offset into ``source.text`` where the highlight starts.
        end: where it ends (exclusive).
        line: 1-based line of ``start``.
    """

    source: SourceText
    start: int
    end: int
    line: int


def locate_passage(passage: Passage, evidence: tuple[int, int]) -> SourceSpan | None:
    """The evidence at ``evidence`` (offsets into ``passage.text``; the passage's start when
    empty) in the passage's file as written, or None when the file is not shown whole or the
    passage is not found in it."""
    source = read_source(passage.path)
    if source is None:
        return None
    whole = source.locate(passage.text)
    if whole is None:
        return None
    start, end = evidence
    found = None
    if start < end:
        found = source.locate(passage.text[start:end], after=whole[0])
        if found is not None and found[0] > whole[1]:
            found = None  # the same words later in the file: not this passage's
    span = found or whole
    return SourceSpan(source, span[0], span[1], source.line_of(span[0]))


def show_source(view: QTextBrowser, at: SourceSpan) -> None:
    """Show ``at.source`` whole in ``view`` (plain text, scrollable), highlight
    ``[at.start, at.end)`` and scroll it into view."""
    view.setPlainText(at.source.text)
    highlight = QTextEdit.ExtraSelection()
    highlight.cursor = QTextCursor(view.document())
    highlight.cursor.setPosition(at.start)
    highlight.cursor.setPosition(at.end, QTextCursor.MoveMode.KeepAnchor)
    highlight.format.setBackground(QColor(HIGHLIGHT_COLOR))
    highlight.format.setFontWeight(QFont.Weight.DemiBold)
    highlight.format.setProperty(QTextFormat.Property.FullWidthSelection, False)
    view.setExtraSelections([highlight])
    QTimer.singleShot(0, view, lambda: scroll_to(view, at.start))  # dropped with the view


def scroll_to(view: QTextBrowser, offset: int) -> None:
    """Scroll ``view`` so that document offset ``offset`` sits :data:`VIEW_CONTEXT` down it."""
    cursor = QTextCursor(view.document())
    cursor.setPosition(min(offset, view.document().characterCount() - 1))
    bar = view.verticalScrollBar()
    top = view.cursorRect(cursor).top() + bar.value()
    bar.setValue(max(0, int(top - view.viewport().height() * VIEW_CONTEXT)))
