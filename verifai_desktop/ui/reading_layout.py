"""The window's reading layout: the answer and the cited page side by side.

A scientist reads an answer and its source page together, so the default layout gives the
middle panel (the answer) and the right panel (sources, the page, history) equal widths and
the library a narrow column; the window opens at a size that fits the screen. The library can
be hidden (View → Show library, Ctrl+Shift+L), which gives its width to the two reading panels,
and View → Reset panel widths returns to this layout. The user's own panel widths are
remembered with the settings (``ui.splitter_state``), the library's visibility too
(``ui.library_shown``).

Widths are in device-independent pixels.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

DEFAULT_WINDOW = QSize(1400, 860)
"""The window's size on first start when the screen has room for it (pixels)."""
SCREEN_SHARE = 0.92
"""The most of the screen's free width and height the window takes on first start."""
LIBRARY_SHARE = 0.18
"""The library's share of the window's width in the default layout ..."""
LIBRARY_MIN_PX = 250
LIBRARY_MAX_PX = 330
"""... between these widths (pixels): enough for the collection list and elided file names."""


def window_size(available: QSize) -> QSize:
    """The window's size on first start: :data:`DEFAULT_WINDOW`, shrunk to
    :data:`SCREEN_SHARE` of the screen's ``available`` size (pixels, taskbars excluded)."""
    return QSize(
        min(DEFAULT_WINDOW.width(), int(available.width() * SCREEN_SHARE)),
        min(DEFAULT_WINDOW.height(), int(available.height() * SCREEN_SHARE)),
    )


def panel_widths(total: int, *, library_shown: bool = True) -> list[int]:
    """[library, answer, page] widths (pixels) that share ``total`` pixels: the library
    :data:`LIBRARY_SHARE` of it, clamped to [:data:`LIBRARY_MIN_PX`, :data:`LIBRARY_MAX_PX`]
    (0 when hidden); the answer and the page halves of the rest, side by side."""
    library = 0
    if library_shown:
        library = max(LIBRARY_MIN_PX, min(LIBRARY_MAX_PX, round(total * LIBRARY_SHARE)))
        library = min(library, total // 3)
    rest = max(0, total - library)
    answer = rest // 2
    return [library, answer, rest - answer]


class ReadingLayout(QObject):
    """The View menu's layout actions over the window's three-panel ``splitter``.

    Attributes:
        show_library_action: checkable; hides or shows the library panel.
        reset_action: returns the panels to :func:`panel_widths`.
    """

    def __init__(self, window: QMainWindow, splitter: QSplitter, library: QWidget) -> None:
        super().__init__(window)
        self.splitter = splitter
        self.library = library
        self.show_library_action = QAction("Show &library", window)
        self.show_library_action.setObjectName("showLibraryAction")
        self.show_library_action.setCheckable(True)
        self.show_library_action.setChecked(True)
        self.show_library_action.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.show_library_action.setToolTip(
            "Hide the library to give the answer and the page more room"
        )
        self.reset_action = QAction("&Reset panel widths", window)
        self.reset_action.setObjectName("resetPanelsAction")
        self.reset_action.setToolTip(
            "The answer and the page side by side at equal widths, the library narrow"
        )
        menu = window.menuBar().addMenu("&View")
        menu.addAction(self.show_library_action)
        menu.addAction(self.reset_action)
        self.show_library_action.toggled.connect(self.on_show_library_toggled)
        self.reset_action.triggered.connect(self.reset)

    @property
    def library_shown(self) -> bool:
        return self.show_library_action.isChecked()

    def set_library_shown(self, shown: bool) -> None:
        """Show or hide the library (as the View menu does; its toggle does the work)."""
        self.show_library_action.setChecked(shown)

    @Slot()
    def reset(self) -> None:
        """Panel widths of :func:`panel_widths` for the splitter's present width."""
        self.splitter.setSizes(
            panel_widths(self.splitter.width(), library_shown=self.library_shown)
        )

    @Slot(bool)
    def on_show_library_toggled(self, shown: bool) -> None:
        if shown == self.library.isVisibleTo(self.splitter):
            return
        sizes = self.splitter.sizes()
        self.library.setVisible(shown)
        if shown:
            library = panel_widths(self.splitter.width())[0]
            # The library's width comes from the two reading panels, half from each.
            answer, page = sizes[1], sizes[2]
            self.splitter.setSizes(
                [library, answer - library // 2, page - (library - library // 2)]
            )
        else:
            # Its width goes to the two reading panels, half to each.
            freed = sizes[0]
            self.splitter.setSizes([0, sizes[1] + freed // 2, sizes[2] + freed - freed // 2])
