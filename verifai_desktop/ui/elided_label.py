"""A one-line label whose text never widens its column: cut with "…" to the width it is given.

A plain :class:`~PySide6.QtWidgets.QLabel` asks its layout for the width of its whole text, so
a long status line ("Reading a_very_long_file_name.pdf", "Checking 32 of 190 pairs…") pushes
the library column wider in steps while a job runs, squeezing the answer beside it (issue 42,
item 2). :class:`ElidedLabel` asks for almost no width, paints the text elided to the width its
column gives it, and holds the whole text in its tooltip while it is cut.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MIN_CHARS = 4
"""The label asks for the width of this many "x" at least (it shows "a…" at worst)."""


class ElidedLabel(QLabel):
    """A single-line label that elides its text instead of asking for more width.

    Args:
        text: the text.
        mode: where the text is cut (the end for status lines, the middle for file names).
        parent: the parent widget.
    """

    def __init__(
        self,
        text: str = "",
        *,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(text, parent)
        self.mode = mode
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        # Preferred: as wide as the whole text when there is room, down to the minimum.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._own_tip = ""  # a tooltip set by the caller, kept when the text is not cut

    def setText(self, text: str) -> None:  # noqa: N802 (Qt override)
        super().setText(text)
        self._update_tip()
        self.update()

    def setToolTip(self, tip: str) -> None:  # noqa: N802 (Qt override)
        self._own_tip = tip
        self._update_tip()

    def shown_text(self) -> str:
        """The text as painted: elided to the label's present width."""
        width = self.contentsRect().width()
        return self.fontMetrics().elidedText(self.text(), self.mode, max(0, width))

    @property
    def elided(self) -> bool:
        """True while the text is cut."""
        return self.shown_text() != self.text()

    def _update_tip(self) -> None:
        tip = self.text() if self.elided else ""
        if self._own_tip:
            tip = f"{tip}\n{self._own_tip}" if tip else self._own_tip
        super().setToolTip(tip)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        fm = self.fontMetrics()
        margins = self.contentsMargins()
        return QSize(
            fm.horizontalAdvance("x" * MIN_CHARS) + margins.left() + margins.right(),
            fm.height() + margins.top() + margins.bottom(),
        )

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        margins = self.contentsMargins()
        hint = self.minimumSizeHint()
        full = self.fontMetrics().horizontalAdvance(self.text()) + margins.left() + margins.right()
        return QSize(max(hint.width(), full), hint.height())

    def resizeEvent(self, e: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(e)
        self._update_tip()

    def paintEvent(self, e: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        flags = int(self.alignment()) | int(Qt.TextFlag.TextSingleLine)
        painter.drawText(self.contentsRect(), flags, self.shown_text())
        painter.end()


def keep_column_width(*labels: QLabel) -> None:
    """Let word-wrapped ``labels`` never widen their column: a wrapped label asks for the width
    of its longest word (a folder path, a file name), which would push the column wider; with
    this, such a word is cut at the column's edge instead (their tooltips give the whole
    text). Their height still follows their width."""
    for label in labels:
        policy = label.sizePolicy()  # keeps the height-for-width flag of a wrapped label
        policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
        label.setSizePolicy(policy)
