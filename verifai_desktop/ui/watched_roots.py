"""The folders (and files) a collection was built from, as the library panel lists them under
its documents: watched or not (the setting), each with its last sync time or why it cannot be
reached now, then the outcome of the last sync.

The library panel (:class:`~verifai_desktop.ui.library_panel.LibraryPanel`) reads them on the
collection's writer (:func:`watched_roots`) after every change of its documents;
:class:`~verifai_desktop.ui.watching.FolderFollower` watches them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from verifai_desktop.store.collection import Collection
from verifai_desktop.store.roots import Root, unavailable_reason
from verifai_desktop.store.watch import watched_roots as followed_roots
from verifai_desktop.ui.operations import OpenCollection
from verifai_desktop.ui.tasks import TaskContext

MAX_LISTED_ROOTS = 3  # folders listed under the documents; the tooltip has them all
WATCHING_TITLE = "Watching for changes:"
NOT_WATCHING_TITLE = "Built from (watching is off in Settings):"


@dataclass(frozen=True, slots=True)
class WatchedRoot:
    """A folder or file the current collection was built from, as the panel lists it.

    Attributes:
        root: the root as the collection remembers it (path, last sync, last status).
        unavailable: why it cannot be reached now ('' when it can), from
            :func:`~verifai_desktop.store.roots.unavailable_reason`.
    """

    root: Root
    unavailable: str = ""


def sync_time(iso: str, *, today: dt.date | None = None) -> str:
    """Local time of an ISO 8601 stamp: ``"14:03"`` today, else ``"2026-11-25 14:03"``;
    ``""`` when empty or unreadable."""
    try:
        moment = dt.datetime.fromisoformat(iso).astimezone()
    except ValueError:
        return ""
    if moment.date() == (today or dt.date.today()):
        return moment.strftime("%H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")


def root_line(watched: WatchedRoot, *, short: bool = False) -> str:
    """One line of the folders list: ``"/docs (synced 14:03)"``, ``"/docs (not synced yet)"``
    or ``"/mnt/usb: missing (a disk or share not connected, or the folder moved?)"``. With
    ``short``, a file added on its own is named by its file name (the panel's list; its
    tooltip has the full paths), so a few files do not fill the library column."""
    root = watched.root
    name = root.path.name if short and not root.is_folder and root.path.name else root.path
    reason = watched.unavailable or (root.status if root.status != "ok" else "")
    if reason:
        return f"{name}: {reason}"
    when = sync_time(root.last_sync)
    return f"{name} (synced {when})" if when else f"{name} (not synced yet)"


def watched_roots(col: OpenCollection, ctx: TaskContext) -> list[WatchedRoot]:
    """The roots of ``col`` (the reference libraries it follows included) and whether each
    can be reached now (run on its writer); none for a team collection, whose folders are on
    the desktop that ingested them."""
    if not isinstance(col, Collection):
        return []
    return [WatchedRoot(r, unavailable_reason(r) or "") for r in followed_roots(col)]


class RootsLabel(QLabel):
    """The folders list under the documents; hidden while the collection has none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setObjectName("watchedRoots")
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setVisible(False)

    def show_roots(self, roots: Sequence[WatchedRoot], *, watching: bool, note: str) -> None:
        """List ``roots`` (the first :data:`MAX_LISTED_ROOTS`; the tooltip has them all)
        under the title saying whether they are ``watching``, then ``note`` (the last sync's
        outcome, '' for none)."""
        if not roots:
            self.setText("")
            self.setVisible(False)
            return
        lines = [root_line(r) for r in roots]
        shown = [root_line(r, short=True) for r in roots[:MAX_LISTED_ROOTS]]
        if len(lines) > len(shown):
            shown.append(f"and {len(lines) - len(shown)} more")
        if note:
            shown.append(note)
        title = WATCHING_TITLE if watching else NOT_WATCHING_TITLE
        self.setText("\n".join([title, *shown]))
        self.setToolTip("\n".join(lines))
        self.setVisible(True)

    def lines(self) -> list[str]:
        """The list's lines as shown (title first)."""
        text = self.text()
        return text.split("\n") if text else []
