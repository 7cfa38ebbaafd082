"""store/watch.py: a collection follows its folders (real files, real watchdog observer, the
bundled embedder); a vanished folder deletes nothing."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from verifai_desktop.cli import main
from verifai_desktop.domain import DocStatus
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.roots import Root, roots_of, unavailable_reason
from verifai_desktop.store.watch import FolderWatcher, SyncReport, sync_changes
from verifai_desktop.store.writer import Outcome

INTRO = "Aspirin lowers the risk of stroke in women over fifty, a large trial found.\n"
METHODS = "Heparin was compared with placebo in trauma patients for six months.\n"


def _wait_for(check: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("the collection did not follow in time")
        time.sleep(0.1)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "intro.md").write_text(INTRO, encoding="utf-8")
    (docs / "methods.txt").write_text(METHODS, encoding="utf-8")
    return docs.resolve()


@pytest.fixture
def collection(folder: Path) -> Iterator[Collection]:
    with Collection.open("watched", create=True) as c:
        c.add_paths([folder])
        yield c


def _sources(c: Collection) -> dict[str, str]:
    return {d.source: d.sha256 for d in c.documents()}


def test_an_ingest_remembers_its_folders_and_files(collection: Collection, tmp_path: Path) -> None:
    single = tmp_path / "single.txt"
    single.write_text("One file on its own.\n", encoding="utf-8")
    collection.add_paths([single, collection_folder(collection)])
    roots = roots_of(collection)
    assert [(r.path.name, r.is_folder) for r in roots] == [("docs", True), ("single.txt", False)]
    assert all(r.device and r.added and r.status == "ok" for r in roots)
    assert collection.remove(single) is True
    assert [r.path.name for r in roots_of(collection)] == ["docs"]


def collection_folder(c: Collection) -> Path:
    return roots_of(c)[0].path


@contextlib.contextmanager
def _following(collection: Collection, **options: Any) -> Iterator[list[SyncReport]]:
    """A real watcher on the collection's roots syncing each batch; yields the sync reports."""
    lock = threading.Lock()
    reports: list[SyncReport] = []

    def on_batch(paths: set[Path]) -> None:
        with lock:
            reports.append(sync_changes(collection, sorted(paths), **options))

    watcher = FolderWatcher(roots_of(collection), on_batch, debounce_s=0.3)
    watcher.start()
    try:
        assert watcher.watched == sorted(r.path for r in roots_of(collection))
        yield reports
    finally:
        watcher.stop()


def test_the_collection_follows_added_changed_and_deleted_files(
    collection: Collection, folder: Path
) -> None:
    with _following(collection) as reports:
        added = folder / "sub" / "results.md"
        added.parent.mkdir()
        added.write_text("Results: stroke risk fell by a quarter.\n", encoding="utf-8")
        (folder / ".~lock.intro.md#").write_text("editor lock file", encoding="utf-8")
        _wait_for(lambda: str(added) in _sources(collection))
        before = _sources(collection)[str(folder / "intro.md")]
        (folder / "intro.md").write_text(INTRO + "It was published in 2005.\n", encoding="utf-8")
        _wait_for(lambda: _sources(collection)[str(folder / "intro.md")] != before)
        (folder / "methods.txt").unlink()
        _wait_for(lambda: str(folder / "methods.txt") not in _sources(collection))
    assert sorted(Path(s).name for s in _sources(collection)) == ["intro.md", "results.md"]
    hits = collection.lexical.search("quarter", 5)
    assert hits, "the added file is searchable"
    assert not any(".~lock" in s for s in _sources(collection))
    assert roots_of(collection)[0].last_sync == reports[-1].finished


def test_a_vanished_folder_deletes_nothing(collection: Collection, folder: Path) -> None:
    held = _sources(collection)
    moved = folder.with_name("docs-on-unplugged-disk")
    folder.rename(moved)
    try:
        report = sync_changes(collection, [folder / "intro.md", folder / "methods.txt"])
        assert _sources(collection) == held
        assert report.unavailable and report.unavailable[0][0] == folder
        assert "missing" in report.unavailable[0][1]
        again = sync_changes(collection, None)  # a full catch-up as well
        assert _sources(collection) == held and again.removed == ()
        assert roots_of(collection)[0].status.startswith("missing")
    finally:
        moved.rename(folder)
    back = sync_changes(collection, None)
    assert back.unavailable == () and roots_of(collection)[0].status == "ok"
    assert _sources(collection) == held


def test_a_mount_point_without_its_disk_is_unavailable(folder: Path) -> None:
    device = folder.stat().st_dev
    assert unavailable_reason(Root(folder, True, device)) is None
    assert "another disk" in (unavailable_reason(Root(folder, True, device + 1)) or "")
    file_root = Root(folder / "intro.md", True, device)
    assert unavailable_reason(file_root) == "no longer a folder"


def test_a_folder_back_again_is_watched_and_caught_up(
    collection: Collection, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verifai_desktop.store import watch

    monkeypatch.setattr(watch, "RECHECK_S", 0.3)
    batches: list[set[Path]] = []
    watcher = FolderWatcher(roots_of(collection), batches.append, debounce_s=0.2)
    watcher.start()
    try:
        aside = folder.with_name("aside")
        shutil.move(folder, aside)
        _wait_for(lambda: watcher.watched == [], 20)
        aside.rename(folder)
        _wait_for(lambda: watcher.watched == [folder], 20)
        _wait_for(lambda: any(folder in b for b in batches), 20)
    finally:
        watcher.stop()


def test_verifai_watch_once_catches_up(
    collection: Collection, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    collection.close()  # the command opens it itself
    (folder / "late.md").write_text("Added while nobody watched.\n", encoding="utf-8")
    (folder / "methods.txt").unlink()
    assert main(["watch", "--collection", "watched", "--once"]) == 0
    out = capsys.readouterr().out
    assert f"folder: {folder}" in out
    assert "synced: 1 added or changed, 1 removed" in out
    with Collection.open("watched") as c:
        assert sorted(Path(s).name for s in _sources(c)) == ["intro.md", "late.md"]
        data = json.loads((c.path / "roots.json").read_text(encoding="utf-8"))
        assert data["roots"][0]["path"] == str(folder)


def test_an_edit_that_keeps_size_and_mtime_is_caught_up_by_its_hash(
    collection: Collection, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41, row 15: an edit of the same length whose mtime is put back (``cp -p``,
    ``rsync -t``, a tool that restores it) was skipped as unchanged by ``watch --once``."""
    collection.close()  # the command opens it itself
    intro = folder / "intro.md"
    before = intro.stat()
    edited = INTRO.replace("fifty", "sixty")
    assert len(edited) == len(INTRO)
    intro.write_text(edited, encoding="utf-8")
    os.utime(intro, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = intro.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    assert main(["watch", "--collection", "watched", "--once"]) == 0
    assert "synced: 1 added or changed, 0 removed" in capsys.readouterr().out
    with Collection.open("watched") as c:
        assert _sources(c)[str(intro)] == hashlib.sha256(edited.encode()).hexdigest()
        [(chunk_id, _)] = c.lexical_search("sixty", 5)
        assert "sixty" in c.chunks([chunk_id])[chunk_id].chunk.text
        assert c.lexical_search("fifty", 5) == []
    # Nothing changed since: the hash is the catalogued one, the file is not read again.
    assert main(["watch", "--collection", "watched", "--once"]) == 0
    assert "synced: 0 added or changed, 0 removed" in capsys.readouterr().out


def test_a_link_out_of_a_watched_folder_obeys_the_setting_and_goes_with_its_link(
    collection: Collection, folder: Path, tmp_path: Path
) -> None:
    """Issue 30, row 3: a link created while watching is refused like in a folder ingest; a
    followed one is indexed under the link and removed with it."""
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("The zanzibar ledger lists every password.\n", encoding="utf-8")
    refused, followed = folder / "refused.txt", folder / "followed.txt"
    with _following(collection):  # ingest.follow_external_links off, as by default
        (folder / "elsewhere").symlink_to(secret.parent)  # a walk never enters a linked folder
        refused.symlink_to(secret)
        _wait_for(lambda: str(refused) in _sources(collection), 20)
    assert sorted(Path(s).name for s in _sources(collection)) == [
        "intro.md",
        "methods.txt",
        "refused.txt",
    ]
    record = collection.document(str(refused))
    assert record is not None and record.status is DocStatus.FAILED
    assert f"a link to {secret.resolve()}, outside the folders chosen" in record.reason
    assert collection.lexical.search("zanzibar", 5) == []
    assert [r.path for r in roots_of(collection)] == [folder]  # the target is not followed
    with _following(collection, follow_external_links=True):
        followed.symlink_to(secret)
        _wait_for(lambda: len(collection.lexical.search("zanzibar", 5)) == 1, 20)
        assert collection.document(str(followed)) is not None  # indexed under the link
        followed.unlink()
        refused.unlink()
        _wait_for(lambda: str(followed) not in _sources(collection), 20)
    assert collection.lexical.search("zanzibar", 5) == []
    assert sorted(Path(s).name for s in _sources(collection)) == ["intro.md", "methods.txt"]


def test_hidden_and_trash_folders_are_skipped_as_by_a_folder_ingest(
    collection: Collection, folder: Path, tmp_path: Path
) -> None:
    """Issue 30, row 4: what a folder ingest skips the watcher skips; a trashed file goes."""
    staged = tmp_path / "staged" / ".cache"
    staged.mkdir(parents=True)
    (staged / "cached.md").write_text("Quokka notes kept in a cache.\n", encoding="utf-8")
    with _following(collection):
        (folder / ".hidden").mkdir()
        (folder / ".hidden" / "note.md").write_text("Quokka notes, hidden.\n", encoding="utf-8")
        trash = folder / ".Trash-0" / "files"
        trash.mkdir(parents=True)
        (folder / "methods.txt").rename(trash / "methods.txt")
        staged.rename(folder / ".cache")  # a hidden folder moved in whole
        (folder / "table.csv").write_text("quokka,1\n", encoding="utf-8")  # not a kind walked
        (folder / "new.md").write_text("Quokka notes in plain sight.\n", encoding="utf-8")
        _wait_for(
            lambda: (
                str(folder / "new.md") in _sources(collection)
                and str(folder / "methods.txt") not in _sources(collection)
            ),
            20,
        )
    assert sorted(Path(s).name for s in _sources(collection)) == ["intro.md", "new.md"]
    again = collection.add_paths([folder])  # a folder ingest finds nothing to add or remove
    assert [o.status for o in again.outcomes] == [Outcome.SKIPPED, Outcome.SKIPPED]


def test_a_deleted_single_file_root_is_removed_one_on_a_missing_folder_stays(
    collection: Collection, tmp_path: Path
) -> None:
    """Issue 30, row 14: a file root deleted from a folder still there is removed (no longer
    followed); one whose folder is gone (a disk not connected) stays, reported missing."""
    here, usb = (tmp_path / "here").resolve(), (tmp_path / "usb").resolve()
    here.mkdir()
    usb.mkdir()
    one, two = here / "one.txt", usb / "two.txt"
    one.write_text("Walrus counts on the north shore.\n", encoding="utf-8")
    two.write_text("Walrus counts on the south shore.\n", encoding="utf-8")
    collection.add_paths([one, two])
    one.unlink()
    usb.rename(tmp_path / "usb-unplugged")
    assert sync_changes(collection, [one]).removed == (str(one),)  # the watcher's event
    again = sync_changes(collection, None)  # and every catch-up after it
    assert again.removed == () and [p for p, _ in again.unavailable] == [two]
    assert sorted(Path(s).name for s in _sources(collection)) == [
        "intro.md",
        "methods.txt",
        "two.txt",
    ]
    status = {r.path.name: r.status for r in roots_of(collection)}
    assert list(status) == ["docs", "two.txt"] and status["two.txt"].startswith("missing")
