"""The sha256 of a file, read safely: the one file hash of the app.

Documents (:mod:`verifai_desktop.ingest.parse`, the answer history in
:mod:`verifai_desktop.store.history`), model files (:mod:`verifai_desktop.modelstore`) and
exported model folders (:mod:`verifai_desktop.index.export`) are all hashed by
:func:`sha256_file`. Only regular files are read (:func:`not_regular_reason`): opening a FIFO
blocks until a writer appears and a device may never end.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from verifai_desktop.errors import ParseError

CHUNK_BYTES = 8 << 20
"""Bytes read per block when hashing (8 MiB: a 4 GB GGUF in 500 reads)."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_regular_reason(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is not read, or ``None`` for a regular file.

    Opening a FIFO blocks until a writer appears and a device may never end; only regular
    files are ever opened.
    """
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"not a regular file ({kind}); only regular files are read"


def os_error_reason(exc: OSError) -> str:
    """A file's OSError as a status reason: ``"file not found"``, ``"cannot read it: ..."``."""
    if isinstance(exc, FileNotFoundError):
        return "file not found"
    return f"cannot read it: {exc.strerror or exc}"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a regular file's bytes, read in blocks of :data:`CHUNK_BYTES`, never
    blocking on a special file.

    The file is opened non-blocking and checked to be regular on the open descriptor, so a
    FIFO or device swapped in after an earlier check is refused, not read.

    Args:
        path: the file.

    Returns:
        64 lowercase hex digits.

    Raises:
        ParseError: not a regular file, gone, or unreadable (``reason`` says which, as
            :func:`not_regular_reason` and :func:`os_error_reason` word it).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ParseError(path, os_error_reason(exc)) from exc
    with os.fdopen(fd, "rb") as fh:
        reason = not_regular_reason(os.fstat(fd).st_mode)
        if reason is not None:
            raise ParseError(path, reason)
        digest = hashlib.sha256()
        try:
            while block := fh.read(CHUNK_BYTES):
                digest.update(block)
        except OSError as exc:
            raise ParseError(path, os_error_reason(exc)) from exc
        return digest.hexdigest()
