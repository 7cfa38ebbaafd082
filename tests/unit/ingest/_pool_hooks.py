"""Stand-in parse functions for ParserPool tests; module level so the spawned worker can
unpickle them. They dispatch on the file name and otherwise call the real parser."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from verifai_desktop.domain import Document
from verifai_desktop.hashing import sha256_file
from verifai_desktop.ingest.parse import parse_file


def hang_or_crash(path: Path, **options: Any) -> Document:
    """Sleep forever for ``*hang*`` files, segfault the worker for ``*crash*`` files; parse
    the others with ``options`` (those of :func:`parse_file`)."""
    if "hang" in path.name:
        while True:
            time.sleep(3600)
    if "crash" in path.name:
        os.kill(os.getpid(), signal.SIGSEGV)
    return parse_file(path, **options)


def hang_hash(path: Path) -> str:
    """Sleep forever for ``*hang*`` files (a read that stalls), else the real hash."""
    if "hang" in path.name:
        while True:
            time.sleep(3600)
    return sha256_file(path)


def slow_parse(path: Path, **options: Any) -> Document:
    """Take 1.2 s of the worker's own time (24 short sleeps, each paused while the process is
    suspended), then parse ``path`` with ``options``."""
    for _ in range(24):
        time.sleep(0.05)
    return parse_file(path, **options)
