"""The collections part of the library panel: the list of collections by display name, the
buttons acting on the current one (new, rename, repair, delete) and, on a first start, the
offer of a sample collection.

The list only shows and picks; :class:`~verifai_desktop.ui.library_panel.LibraryPanel` runs
what the buttons ask on the collection's writer.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.store.folders import list_collections
from verifai_desktop.store.naming import CollectionName, list_names
from verifai_desktop.ui.resources import sample_files, tool_button


class CollectionList(QWidget):
    """Collections by display name, with their actions.

    Signals:
        chosen(str): the user picked a collection in the list (its folder name).
    """

    chosen = Signal(str)

    def __init__(self, *, offer_sample: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names: list[CollectionName] = []
        title = QLabel("Collections")
        title.setObjectName("sectionTitle")
        self.list_widget = QListWidget()
        self.list_widget.setObjectName("collectionList")
        self.list_widget.setMaximumHeight(150)
        self.new_button = tool_button("new-collection", "New collection")
        self.rename_button = tool_button("rename", "Rename collection")
        self.delete_button = tool_button("delete", "Delete collection")
        self.repair_button = tool_button(
            "repair", "Repair collection (rebuild it from its source files)"
        )
        bar = QHBoxLayout()
        for b in (self.new_button, self.rename_button, self.repair_button, self.delete_button):
            bar.addWidget(b)
        bar.addStretch(1)

        self.sample_banner = QFrame()
        self.sample_banner.setObjectName("sampleBanner")
        banner_text = QLabel(
            "New here? Load a small sample collection of open-licence papers and ask a "
            "question within a minute."
        )
        banner_text.setWordWrap(True)
        self.sample_button = QPushButton("Load sample collection")
        banner_layout = QVBoxLayout(self.sample_banner)
        banner_layout.addWidget(banner_text)
        banner_layout.addWidget(self.sample_button)
        self.sample_banner.setVisible(
            offer_sample and not list_collections() and bool(sample_files())
        )

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.list_widget)
        layout.addLayout(bar)
        layout.addWidget(self.sample_banner)
        self.list_widget.currentRowChanged.connect(self._on_row_changed)

    def refresh(self, select: str) -> str:
        """Re-read the collections and select ``select`` (a folder or display name), else the
        first; the sample offer goes once there is a collection.

        Returns:
            The folder name of the selected collection, '' when there is none. :attr:`chosen`
            is not emitted: the caller reads the collection once.
        """
        self.names = list_names()
        self.list_widget.blockSignals(True)
        self.list_widget.clear()
        for entry in self.names:
            self.list_widget.addItem(entry.display)
            item = self.list_widget.item(self.list_widget.count() - 1)
            item.setData(Qt.ItemDataRole.UserRole, entry.folder)
            if entry.display != entry.folder:
                item.setToolTip(f"{entry.display}\nfolder: {entry.folder}")
        row = self.row_of(select)
        if row is not None:
            self.list_widget.setCurrentRow(row)
        elif self.names:
            self.list_widget.setCurrentRow(0)
        self.list_widget.blockSignals(False)
        if self.names:
            self.sample_banner.setVisible(False)
        current = self.list_widget.currentRow()
        return self.names[current].folder if 0 <= current < len(self.names) else ""

    def row_of(self, name: str) -> int | None:
        """Row of the collection with this folder name, else with this display name."""
        folders = [entry.folder for entry in self.names]
        if name in folders:
            return folders.index(name)
        displays = [entry.display for entry in self.names]
        return displays.index(name) if name in displays else None

    def display_name(self, folder: str) -> str:
        """The display name of the collection in ``folder`` (``folder`` when not listed)."""
        for entry in self.names:
            if entry.folder == folder:
                return entry.display
        return folder

    def set_actions_enabled(self, enabled: bool) -> None:
        """Enable or disable the actions on the current collection (rename, repair, delete)."""
        for button in (self.rename_button, self.delete_button, self.repair_button):
            button.setEnabled(enabled)

    @Slot(int)
    def _on_row_changed(self, row: int) -> None:
        if 0 <= row < len(self.names):
            self.chosen.emit(self.names[row].folder)
