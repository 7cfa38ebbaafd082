"""`verifai watch` as a process (real files, the bundled embedder, signals sent to it): Ctrl-C
in the middle of a sync stops it cleanly with status 130, and the write lock is held per sync,
so other writers work while it waits."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import REPO_ROOT
from verifai_desktop.cli import main
from verifai_desktop.domain import DocStatus
from verifai_desktop.errors import CollectionBusy
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import CATALOG_FILE

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

WORDS = ("aspirin", "stroke", "heparin", "trauma", "placebo", "risk", "trial", "dose")


def _wait_for(check: Callable[[], bool], what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Watch:
    """A running `verifai watch --collection NAME`, its output gathered line by line."""

    def __init__(self, name: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "verifai_desktop", "watch", "--collection", name],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: IO[str], lines: list[str]) -> None:
        for line in stream:
            lines.append(line)

    def syncs(self) -> int:
        """Syncs reported so far."""
        return sum("synced:" in line for line in self.out)

    def interrupt(self) -> int:
        """Ctrl-C: SIGINT, then the exit status (within a minute)."""
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=240)
        for reader in self._readers:
            reader.join(10)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def watched(tmp_path: Path, verifai_home: Path) -> tuple[Path, Path]:
    """A folder with one note, ingested into collection "w"; settings debounce 0.3 s.
    Returns the folder and the collection's catalog file."""
    verifai_home.mkdir(parents=True, exist_ok=True)
    (verifai_home / "settings.toml").write_text("[watch]\ndebounce_s = 0.3\n", encoding="utf-8")
    docs = (tmp_path / "docs").resolve()
    docs.mkdir()
    (docs / "seed.txt").write_text("Aspirin lowers the risk of stroke.\n", encoding="utf-8")
    with Collection.open("w", create=True) as c:
        c.add_paths([docs])
        return docs, c.path / CATALOG_FILE


@pytest.fixture
def watch() -> Iterator[Callable[[], Watch]]:
    started: list[Watch] = []

    def start() -> Watch:
        started.append(Watch("w"))
        _wait_for(lambda: started[-1].syncs() >= 1, "the catch-up sync")
        return started[-1]

    yield start
    for w in started:
        w.kill()


def _catalogued(catalog: Path) -> int:
    with sqlite3.connect(f"file:{catalog}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT count(*) FROM documents").fetchone()[0])


def test_ctrl_c_in_a_long_sync_stops_cleanly_with_130(
    watched: tuple[Path, Path], watch: Callable[[], Watch]
) -> None:
    """Issue 30, row 5: SIGINT mid-sync once left a thread in ONNX Runtime at exit (SIGABRT,
    "terminate called without an active exception") and exited 0."""
    docs, catalog = watched
    w = watch()
    rng = random.Random(5)
    files = 30
    for i in range(files):
        lines = (" ".join(rng.choice(WORDS) for _ in range(14)) + "." for _ in range(150))
        (docs / f"note{i:02d}.txt").write_text("\n".join(lines), encoding="utf-8")
    _wait_for(lambda: _catalogued(catalog) > 1, "the sync to start")
    with Collection.open("w", reconcile=False) as c, pytest.raises(CollectionBusy):
        c.acquire_write_lock()  # while a sync runs, other writers are told an ingest runs
    assert w.interrupt() == 130
    err = "".join(w.err)
    assert "terminate called" not in err and "Traceback" not in err, err
    assert "stopped watching" in err
    with Collection.open("w", reconcile=False) as c:
        assert c.is_consistent()  # both indexes saved at the catalog's generation
        docs_in = c.documents()
        assert 1 < len(docs_in) < files + 1  # stopped in the middle
        assert all(d.status is DocStatus.INDEXED and d.chunk_count > 0 for d in docs_in)
        assert c.num_chunks() == c.lexical.num_chunks() == c.num_vectors()


def test_the_write_lock_is_held_per_sync_and_a_busy_sync_is_retried(
    watched: tuple[Path, Path], watch: Callable[[], Watch], tmp_path: Path
) -> None:
    """Issue 30, row 6: a running watch once held the write lock for its whole life."""
    docs, _ = watched
    w = watch()
    other = tmp_path / "other.txt"
    other.write_text("Heparin was compared with placebo in trauma patients.\n", encoding="utf-8")
    assert main(["ingest", str(other), "--collection", "w"]) == 0
    assert main(["watch", "--collection", "w", "--once"]) == 0  # a second watch
    assert main(["remove", str(other), "--collection", "w"]) == 0
    assert main(["repair", "--collection", "w"]) == 0  # swaps the collection's folder
    with Collection.open("w") as c:
        c.acquire_write_lock()  # another writer at work
        (docs / "late.txt").write_text("Masks cut the spread of flu.\n", encoding="utf-8")
        _wait_for(lambda: any("being written by another process" in e for e in w.err), "busy")
        assert c.document(str(docs / "late.txt")) is None
    _wait_for(lambda: w.syncs() >= 2, "the retried sync")  # the lock is free again
    assert w.interrupt() == 130
    with Collection.open("w") as c:
        assert sorted(Path(d.source).name for d in c.documents()) == ["late.txt", "seed.txt"]
        assert [c.chunks([cid])[cid].source for cid, _ in c.lexical_search("masks flu", 1)] == [
            str(docs / "late.txt")
        ]
