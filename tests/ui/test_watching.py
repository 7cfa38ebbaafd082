"""Folder watching in the app: the library panel lists the folders a collection follows with
their last sync or why they cannot be reached; a sync through the single writer deletes
nothing under a vanished folder; the follower syncs each batch of a real watcher, after any
running write, and stops with the collection and the window."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import threading
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from verifai_desktop.settings import Settings, WatchSettings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.roots import remember_roots, roots_of
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.tasks import TaskContext, TaskRunner
from verifai_desktop.ui.watched_roots import NOT_WATCHING_TITLE, WATCHING_TITLE, sync_time
from verifai_desktop.ui.watching import FolderFollower

TIMEOUT_MS = 15_000
MISSING = "missing (a disk or share not connected, or the folder moved?)"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """Collection "papers" built from two (empty) folders, the second since gone."""
    here, gone = tmp_path / "here", tmp_path / "usb"
    here.mkdir()
    gone.mkdir()
    with Collection.open("papers", create=True) as col:
        remember_roots(col, [here, gone])
    gone.rmdir()
    return here.resolve(), gone.resolve()


def _panel(qtbot: QtBot, settings: Settings) -> LibraryPanel:
    panel = LibraryPanel(TaskRunner(), lambda: settings, offer_sample=False)
    qtbot.addWidget(panel)
    return panel


def test_sync_time_is_local_and_short_today() -> None:
    now = dt.datetime.now().astimezone()
    assert sync_time(now.astimezone(dt.UTC).isoformat()) == now.strftime("%H:%M")
    old = dt.datetime(2020, 1, 2, 10, 0).astimezone()
    assert sync_time(old.astimezone(dt.UTC).isoformat()) == "2020-01-02 10:00"
    assert sync_time("") == "" and sync_time("not a time") == ""


def test_panel_lists_folders_with_last_sync_and_a_vanished_one_loses_nothing(
    qtbot: QtBot, folders: tuple[Path, Path]
) -> None:
    here, gone = folders
    settings = Settings()
    panel = _panel(qtbot, settings)
    roots_seen: list[tuple[str, list[Path]]] = []
    panel.roots_changed.connect(
        lambda name, roots: roots_seen.append((name, [r.root.path for r in roots]))
    )
    panel.refresh_collections(select="papers")
    qtbot.waitUntil(lambda: len(panel.roots_text()) == 3, timeout=TIMEOUT_MS)
    with Collection.open("papers") as col:
        synced = {r.path: sync_time(r.last_sync) for r in roots_of(col)}
    assert panel.roots_text() == [
        WATCHING_TITLE,
        f"{here} (synced {synced[here]})",
        f"{gone}: {MISSING}",
    ]
    assert re.fullmatch(r"\d\d:\d\d", synced[here])
    assert roots_seen == [("papers", [here, gone])]
    assert panel.roots_label.isVisibleTo(panel)

    # A rescan through the single writer: the vanished folder is reported, nothing removed.
    task = panel.sync(None)
    assert panel.busy
    qtbot.waitUntil(lambda: not task.is_running and not panel.busy, timeout=TIMEOUT_MS)
    report = task.result
    assert report is not None and report.unavailable == ((gone, MISSING),)
    assert report.removed == ()
    qtbot.waitUntil(lambda: len(roots_seen) == 2, timeout=TIMEOUT_MS)  # read again after it
    assert panel.roots_text()[-1] == (
        f"Last sync {sync_time(report.finished)}: 0 added or changed, 0 removed; {gone}: {MISSING}"
    )
    with Collection.open("papers") as col:
        status = {r.path: r.status for r in roots_of(col)}
    assert status == {here: "ok", gone: MISSING}

    # Watching switched off: the folders are still listed, under another title.
    settings_off = dataclasses.replace(settings, watch=WatchSettings(enabled=False))
    panel._settings = lambda: settings_off
    panel.show_roots()
    assert panel.roots_text()[0] == NOT_WATCHING_TITLE
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=TIMEOUT_MS)


def test_follower_syncs_batches_after_the_running_write_and_stops(
    qtbot: QtBot, folders: tuple[Path, Path]
) -> None:
    here, _gone = folders
    settings = Settings(watch=WatchSettings(enabled=True, debounce_s=0.1))
    panel = _panel(qtbot, settings)
    follower = FolderFollower(panel, lambda: settings)
    synced: list[tuple[list[Path] | None, str | None]] = []

    def sync(changed: object, name: str | None = None) -> None:  # control flow only
        synced.append((None if changed is None else sorted(changed), name))  # type: ignore[call-overload]

    panel.sync = sync  # type: ignore[assignment,method-assign]
    panel.refresh_collections(select="papers")
    # Opening the collection: its folders are watched and caught up with once.
    qtbot.waitUntil(lambda: follower.watcher is not None, timeout=TIMEOUT_MS)
    assert synced == [(None, "papers")]
    qtbot.waitUntil(lambda: follower.watching == [here], timeout=TIMEOUT_MS)

    (here / "new.md").write_text("# New\n\nText.", encoding="utf-8")
    qtbot.waitUntil(lambda: len(synced) == 2, timeout=TIMEOUT_MS)
    # watchdog also reports the folder itself as modified.
    assert synced[1][1] == "papers" and here / "new.md" in (synced[1][0] or [])
    assert set(synced[1][0] or []) <= {here, here / "new.md"}

    # An ingest is running (a write held on the single writer): the batch waits for it.
    release = threading.Event()

    def held(col: Collection, ctx: TaskContext) -> None:
        release.wait(30)

    write = panel._write(panel.host.collection_op("held", "papers", held), context="held")
    assert panel.busy
    (here / "other.md").write_text("# Other\n\nText.", encoding="utf-8")
    qtbot.waitUntil(lambda: here / "other.md" in follower.pending, timeout=TIMEOUT_MS)
    assert len(synced) == 2
    release.set()
    qtbot.waitUntil(lambda: not write.is_running and len(synced) == 3, timeout=TIMEOUT_MS)
    assert synced[2][1] == "papers" and here / "other.md" in (synced[2][0] or [])
    assert set(synced[2][0] or []) <= {here, here / "other.md"}
    assert follower.pending == set()

    # Another collection: the watcher stops; switching watching off keeps it stopped.
    panel.collection_changed.emit("other")
    assert follower.watcher is None and follower.collection == ""
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=TIMEOUT_MS)


def test_window_watches_the_collection_and_stops_on_close(
    qtbot: QtBot, folders: tuple[Path, Path]
) -> None:
    here, _gone = folders
    window = MainWindow(Settings(), offer_sample=False)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.follower.watching == [here], timeout=TIMEOUT_MS)
    # The catch-up rescan ran through the library's writer and the panel shows its outcome.
    qtbot.waitUntil(
        lambda: (
            window.library.roots_text()[-1:] != []
            and window.library.roots_text()[-1].startswith("Last sync")
        ),
        timeout=TIMEOUT_MS,
    )
    watcher = window.follower.watcher
    assert watcher is not None
    off = dataclasses.replace(window.settings, watch=WatchSettings(enabled=False))
    window.apply_settings(off)
    assert window.follower.watcher is None
    assert window.library.roots_text()[0] == NOT_WATCHING_TITLE
    window.apply_settings(Settings())
    assert window.follower.watcher is not None and window.follower.watcher is not watcher
    qtbot.waitUntil(lambda: window.follower.watching == [here], timeout=TIMEOUT_MS)
    window.close()
    assert window.follower.watcher is None


def test_a_file_added_on_its_own_is_listed_by_name_with_its_path_in_the_tooltip(
    qtbot: QtBot,
) -> None:
    from verifai_desktop.store.roots import Root
    from verifai_desktop.ui.watched_roots import RootsLabel, WatchedRoot

    label = RootsLabel()
    qtbot.addWidget(label)
    paper = Path("/data/papers/2024/acl2020_specter.pdf")
    folder = Path("/data/notes")
    roots = [
        WatchedRoot(Root(paper, is_folder=False, last_sync="")),
        WatchedRoot(Root(folder, is_folder=True, last_sync="")),
    ]
    label.show_roots(roots, watching=True, note="")
    assert label.lines() == [
        WATCHING_TITLE,
        "acl2020_specter.pdf (not synced yet)",
        "/data/notes (not synced yet)",
    ]
    assert label.toolTip().splitlines() == [
        f"{paper} (not synced yet)",
        f"{folder} (not synced yet)",
    ]


def test_folders_read_after_the_panel_is_closed_go_nowhere(
    qtbot: QtBot, folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A panel deleted while its folders are being read: the read's end touches no deleted
    widget (it raised 'Internal C++ object (RootsLabel) already deleted' in a later test)."""
    import shiboken6

    from verifai_desktop.ui import library_folders

    started, release = threading.Event(), threading.Event()
    read = library_folders.watched_roots

    def slow(col: Collection, ctx: TaskContext) -> object:
        started.set()
        release.wait(TIMEOUT_MS / 1000)
        return read(col, ctx)

    monkeypatch.setattr(library_folders, "watched_roots", slow)
    runner = TaskRunner()
    panel = LibraryPanel(runner, lambda: Settings(), offer_sample=False)
    panel.refresh_collections(select="papers")
    qtbot.waitUntil(started.is_set, timeout=TIMEOUT_MS)
    label = panel.roots_label
    shiboken6.delete(panel)
    assert not shiboken6.isValid(label)
    release.set()
    qtbot.waitUntil(lambda: not runner.running, timeout=TIMEOUT_MS)
    qtbot.wait(50)  # the read's end is delivered to the deleted panel's folders, if at all
