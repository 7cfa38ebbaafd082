"""The collections part of the library panel: the list of collections by display name, the
buttons acting on the current one (new, rename, repair, delete), the entry adding a team
collection (a PostgreSQL store, :mod:`verifai_desktop.ui.team_dialog`) and, on a first start,
the offer of a sample collection.

Team collections (:mod:`verifai_desktop.store.pg.team`) follow the collections on this
machine, each marked ``[team]`` with its server and ``sslmode``; their "folder" is their key.

The list only shows and picks; :class:`~verifai_desktop.ui.library_panel.LibraryPanel` runs
what the buttons ask on the collection's writer.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.errors import VerifaiError
from verifai_desktop.store.folders import list_collections
from verifai_desktop.store.naming import CollectionName, list_names
from verifai_desktop.store.pg.team import TeamCollection, is_team_key, load_teams
from verifai_desktop.ui.resources import sample_files, tool_button
from verifai_desktop.ui.tasks import TaskRunner
from verifai_desktop.ui.team_dialog import TeamDialog

log = logging.getLogger(__name__)

TEAM_MARK = "[team]"
"""After the name of a team collection (a PostgreSQL store) in the list."""


MIN_LIST_ROWS = 2  # the collection list's height, in rows, at least ...
MAX_LIST_ROWS = 6  # ... and at most (it scrolls beyond)


def team_label(team: TeamCollection) -> tuple[str, str]:
    """``(display name, list text)`` of a team collection: the name marked :data:`TEAM_MARK`;
    under it, the server and the ``sslmode``."""
    try:
        server = team.server()
    except VerifaiError:  # psycopg missing: using it will say so
        server = urlsplit(team.url).hostname or team.url
    display = f"{team.name} {TEAM_MARK}"
    return display, f"{display}\n{server} · sslmode={team.sslmode}"


def delete_question(shown: str, team: bool) -> tuple[str, str]:
    """The title and question confirming the deletion of collection ``shown``; a team
    collection is only taken off the list."""
    if team:
        return "Remove team collection", (
            f"Remove “{shown}” from the library? Nothing on its server is deleted."
        )
    return "Delete collection", (
        f"Delete the collection “{shown}” and its index? Your files are not touched."
    )


class CollectionList(QWidget):
    """Collections by display name, with their actions.

    Signals:
        chosen(str): the user picked a collection in the list (its folder name).
        team_saved(str): a team collection was added in the Team collection dialog (its key).
    """

    chosen = Signal(str)
    team_saved = Signal(str)

    def __init__(
        self, runner: TaskRunner, *, offer_sample: bool = True, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.runner = runner  # runs the Team collection dialog's connection test
        self.team_dialog: TeamDialog | None = None
        self.names: list[CollectionName] = []
        title = QLabel("Collections")
        title.setObjectName("sectionTitle")
        self.list_widget = QListWidget()
        self.list_widget.setObjectName("collectionList")
        self._fit_height()
        self.new_button = tool_button("new-collection", "New collection")
        self.rename_button = tool_button("rename", "Rename collection")
        self.delete_button = tool_button("delete", "Delete collection")
        self.repair_button = tool_button(
            "repair", "Repair collection (rebuild it from its source files)"
        )
        self.team_button = QToolButton()
        self.team_button.setText("Team…")
        self.team_button.setAccessibleName("Team collection…")
        self.team_button.setToolTip(
            "Team collection…: add a shared collection on a PostgreSQL server"
        )
        bar = QHBoxLayout()
        for b in (self.new_button, self.rename_button, self.repair_button, self.delete_button):
            bar.addWidget(b)
        bar.addWidget(self.team_button)
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
        self.team_button.clicked.connect(self.on_team_clicked)

    @Slot()
    def on_team_clicked(self) -> TeamDialog:
        """Open the Team collection dialog (window-modal, not blocking); what it saves is
        announced by :attr:`team_saved`."""
        dialog = self.team_dialog = TeamDialog(self.runner, self)
        dialog.saved.connect(self.team_saved)
        dialog.open()
        return dialog

    def refresh(self, select: str) -> str:
        """Re-read the collections, those on this machine then the team collections, and select
        ``select`` (a folder, key or display name), else the first; the sample offer goes once
        there is a collection.

        Returns:
            The folder name of the selected collection, '' when there is none. :attr:`chosen`
            is not emitted: the caller reads the collection once.
        """
        self.names = list_names()
        texts = [entry.display for entry in self.names]
        tips = [
            f"{e.display}\nfolder: {e.folder}" if e.display != e.folder else "" for e in self.names
        ]
        for team in _teams():
            display, text = team_label(team)
            self.names.append(CollectionName(team.key, display))
            texts.append(text)
            tips.append(f"{text}\nshared on a PostgreSQL server; the password is never kept here")
        self.list_widget.blockSignals(True)
        self.list_widget.clear()
        for entry, text, tip in zip(self.names, texts, tips, strict=True):
            self.list_widget.addItem(text)
            item = self.list_widget.item(self.list_widget.count() - 1)
            item.setData(Qt.ItemDataRole.UserRole, entry.folder)
            if tip:
                item.setToolTip(tip)
        row = self.row_of(select)
        if row is not None:
            self.list_widget.setCurrentRow(row)
        elif self.names:
            self.list_widget.setCurrentRow(0)
        self.list_widget.blockSignals(False)
        self._fit_height()
        if self.names:
            self.sample_banner.setVisible(False)
        current = self.list_widget.currentRow()
        return self.names[current].folder if 0 <= current < len(self.names) else ""

    def _fit_height(self) -> None:
        """As tall as its collections, between :data:`MIN_LIST_ROWS` and
        :data:`MAX_LIST_ROWS` rows: the room left goes to the documents table."""
        rows = max(MIN_LIST_ROWS, min(MAX_LIST_ROWS, self.list_widget.count()))
        row_px = self.list_widget.sizeHintForRow(0) if self.list_widget.count() else 0
        row_px = max(row_px, self.list_widget.fontMetrics().height() + 6)
        self.list_widget.setFixedHeight(rows * row_px + 2 * self.list_widget.frameWidth() + 2)

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

    def set_actions_enabled(self, enabled: bool, current: str = "") -> None:
        """Enable or disable the actions on the current collection (rename, repair, delete);
        a team collection (``current`` its key) is renamed and repaired on its server, not
        here."""
        local = not is_team_key(current)
        self.delete_button.setEnabled(enabled)
        for button in (self.rename_button, self.repair_button):
            button.setEnabled(enabled and local)

    @Slot(int)
    def _on_row_changed(self, row: int) -> None:
        if 0 <= row < len(self.names):
            self.chosen.emit(self.names[row].folder)


def _teams() -> list[TeamCollection]:
    try:
        return load_teams()
    except VerifaiError as exc:  # a damaged list: the collections on this machine still show
        log.warning("cannot read the team collections: %s", exc)
        return []
