"""The write lock of a collection: an exclusive advisory lock on ``write.lock``.

The holder writes what it is doing into the file (``write`` for an ingest or removal,
``rebuild`` for a reader rebuilding indexes left behind by an interrupted run), so a process
that finds the lock taken can say what is really happening, and an ingest can wait for a
rebuild (seconds) instead of failing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import IO

from verifai_desktop.private import create_private_file


class FileLock:
    """An exclusive advisory lock on a file; released by the OS when the process dies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def try_acquire(self, purpose: str = "write") -> bool:
        """Take the lock without waiting, recording ``purpose``; False when another holds it."""
        if self._fh is not None:
            return True
        create_private_file(self.path)
        fh = open(self.path, "a+b")  # noqa: SIM115 - kept open while the lock is held
        try:
            if os.name == "nt":  # pragma: no cover - Windows
                import msvcrt

                msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined,unused-ignore]
            else:
                import fcntl

                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        self._record(purpose)
        return True

    def _record(self, purpose: str) -> None:
        if self._fh is None or os.name == "nt":  # pragma: no cover - Windows locks the bytes
            return
        try:
            os.ftruncate(self._fh.fileno(), 0)
            os.write(self._fh.fileno(), purpose.encode("ascii"))
        except OSError:
            pass  # only a nicer message is lost

    def holder(self) -> str:
        """What the current holder recorded (``write``, ``rebuild``), or ``""`` when unknown."""
        try:
            return self.path.read_bytes()[:20].decode("ascii", "replace").strip()
        except OSError:
            return ""

    def acquire_after_rebuild(self, wait_s: float, poll_s: float = 0.1) -> str | None:
        """Take the lock, waiting up to ``wait_s`` (s) while its holder is rebuilding indexes.

        Returns:
            ``None`` when the lock is now held; else what the holder is doing: ``rebuild``
            when the wait ran out, at once ``write`` (or ``""``, unknown) for any other holder.
        """
        deadline = time.monotonic() + wait_s
        looked_again = False
        while not self.try_acquire():
            holder = self.holder()
            if holder == "" and not looked_again:
                # Usually a moment, not a holder: the holder clears its record just before it
                # unlocks, and a new holder records its purpose just after it locks.
                looked_again = True
                time.sleep(poll_s)
                continue
            if holder != "rebuild" or time.monotonic() >= deadline:
                return holder
            time.sleep(poll_s)
        return None

    def release(self) -> None:
        if self._fh is None:
            return
        self._record("")
        try:
            if os.name == "nt":  # pragma: no cover - Windows
                import msvcrt

                msvcrt.locking(self._fh.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined,unused-ignore]
            else:
                import fcntl

                fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        finally:
            self._fh.close()
            self._fh = None
