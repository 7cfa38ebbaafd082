"""The write lock says who holds it: an ingest waits for a reader's index rebuild.

A real lock file; the "other process" is a second open file description on it (flock locks
conflict between descriptions, also within one process).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from verifai_desktop.errors import CollectionBusy
from verifai_desktop.settings import Settings
from verifai_desktop.store import collection as collection_mod
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.lock import FileLock


def _docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Aspirin lowers the risk of stroke.\n")
    return folder


def test_an_ingest_waits_for_a_rebuild_to_finish(tmp_path: Path, fake_settings: Settings) -> None:
    folder = _docs(tmp_path)
    with Collection.open("c", create=True, settings=fake_settings) as col:
        other = FileLock(col.path / "write.lock")
        assert other.try_acquire(purpose="rebuild")
        assert other.holder() == "rebuild"
        timer = threading.Timer(0.5, other.release)
        timer.start()
        t0 = time.monotonic()
        report = col.add_paths([folder])
        waited = time.monotonic() - t0
        timer.join()
    assert [o.status.value for o in report.outcomes] == ["indexed"]
    assert waited >= 0.4


def test_a_long_rebuild_is_named_as_such(
    tmp_path: Path, fake_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection_mod, "REBUILD_WAIT_S", 0.3)
    with Collection.open("c", create=True, settings=fake_settings) as col:
        other = FileLock(col.path / "write.lock")
        assert other.try_acquire(purpose="rebuild")
        try:
            with pytest.raises(CollectionBusy) as info:
                col.add_paths([_docs(tmp_path)])
        finally:
            other.release()
    assert str(info.value) == (
        "the indexes of collection 'c' are being rebuilt by another process after an "
        "interrupted run; try again in a moment"
    )


def test_an_ingest_running_elsewhere_fails_at_once_with_that_reason(
    tmp_path: Path, fake_settings: Settings
) -> None:
    with Collection.open("c", create=True, settings=fake_settings) as col:
        other = FileLock(col.path / "write.lock")
        assert other.try_acquire()
        t0 = time.monotonic()
        try:
            with pytest.raises(CollectionBusy, match=r"an ingest is running"):
                col.add_paths([_docs(tmp_path)])
        finally:
            other.release()
        assert time.monotonic() - t0 < 5.0
    assert other.holder() == ""
