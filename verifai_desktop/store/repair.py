"""Rebuilding a damaged collection from its source files.

The files the damaged catalog still names (row by row when whole-table reads fail) are
ingested into a fresh collection built in a staging folder beside it
(``collections/.repair-<name>``), which keeps the damaged one's answer history and the folders it
follows (:data:`CARRIED_OVER`); only when that is complete are the two folders swapped, in one
atomic ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames elsewhere), and the damaged one
deleted. A repair that fails or is cancelled leaves the damaged collection as it was.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import shutil
import sqlite3
import sys
import threading
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.errors import CollectionBusy, RepairImpossible
from verifai_desktop.settings import Settings, collections_dir
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import CATALOG_FILE, LOCK_FILE, existing_path
from verifai_desktop.store.lock import FileLock
from verifai_desktop.store.naming import CONFIG_FILE, display_name_of
from verifai_desktop.store.sources import is_file_source
from verifai_desktop.store.writer import IngestReport, ProgressFn

log = logging.getLogger(__name__)

STAGING_PREFIX = ".repair-"
MAX_PROBED_IDS = 1_000_000  # a damaged sqlite_sequence must not start an endless probe
_ONE_SOURCE = "SELECT source FROM documents WHERE doc_id=?"


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What a repair did.

    Attributes:
        name: the collection.
        ingest: the ingest run that rebuilt it (one outcome per file).
        catalogued: source files the damaged catalog still named.
        catalog_complete: False when some catalog rows could not be read (files may be lost).
        missing: catalogued files no longer on disk (not in the rebuilt collection).
        not_files: catalogued documents that were no files (benchmark keys), not rebuilt.
    """

    name: str
    ingest: IngestReport
    catalogued: int
    catalog_complete: bool
    missing: tuple[str, ...]
    not_files: int


def catalogued_sources(catalog: Path) -> tuple[tuple[str, ...], bool]:
    """The ``source`` of every document row still readable in a (damaged) catalog.

    Reads the whole table at once, and row by row (by ``doc_id``) when that fails.

    Returns:
        The sources, and whether every row was read.
    """
    if not catalog.is_file() or catalog.stat().st_size == 0:
        return (), False
    try:
        db = sqlite3.connect(catalog)  # only read; the file is replaced after the repair
    except sqlite3.DatabaseError:
        return (), False
    try:
        try:
            rows = db.execute("SELECT source FROM documents").fetchall()
            return tuple(_source(r[0]) for r in rows), True
        except sqlite3.DatabaseError as exc:
            log.warning(
                "catalog %s: whole-table read failed (%s); reading row by row", catalog, exc
            )
        top = 0
        for query in (
            "SELECT seq FROM sqlite_sequence WHERE name='documents'",
            "SELECT max(doc_id) FROM documents",
        ):
            with contextlib.suppress(sqlite3.DatabaseError, TypeError):
                top = max(top, int(db.execute(query).fetchone()[0]))
        found: list[str] = []
        for doc_id in range(1, min(top, MAX_PROBED_IDS) + 1):
            with contextlib.suppress(sqlite3.DatabaseError):
                row = db.execute(
                    "SELECT source FROM documents WHERE doc_id=?", (doc_id,)
                ).fetchone()
                if row is not None:
                    found.append(_source(row[0]))
        return tuple(found), False
    finally:
        db.close()


def _source(value: object) -> str:
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


def _embedder_of(path: Path, fallback: str) -> str:
    try:
        return str(tomllib.loads((path / CONFIG_FILE).read_text(encoding="utf-8"))["embedder"])
    except (OSError, tomllib.TOMLDecodeError, KeyError):
        return fallback


def _recorded_display_name(path: Path) -> str | None:
    """The display name in ``collection.toml``, if one was recorded and can be read."""
    name = display_name_of(path)
    return name if name != path.name else None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders atomically (Linux ``renameat2``); False where that is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    func = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if func is None:
        return False
    func.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    at_fdcwd, rename_exchange = -100, 2
    if func(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL):  # old kernel or a file system without it
        return False
    raise OSError(err, os.strerror(err), str(a))


def _swap_in(staging: Path, path: Path) -> None:
    """Put ``staging`` at ``path``; the old ``path`` ends up at ``staging``."""
    if _exchange(staging, path):
        return
    aside = path.with_name(f".damaged-{path.name}")
    shutil.rmtree(aside, ignore_errors=True)
    os.rename(path, aside)
    os.rename(staging, path)
    os.rename(aside, staging)


CARRIED_OVER = ("roots.json",)
"""Records of a collection that are not derived from its documents and survive a repair as
they are (plus ``history.sqlite``, copied with SQLite's backup API)."""


def _carry_over(damaged: Path, staging: Path) -> None:
    """Copy what a rebuild cannot recreate into the staging folder: the roots that folder
    watching follows and the answer history. A record that cannot be read is logged and left
    behind; the repair goes on."""
    from verifai_desktop.private import create_private_file
    from verifai_desktop.store.history import HISTORY_FILE

    for name in CARRIED_OVER:
        try:
            shutil.copy2(damaged / name, staging / name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("repair: %s not carried over: %s", name, exc)
    source = damaged / HISTORY_FILE
    if not source.is_file():
        return
    try:
        create_private_file(staging / HISTORY_FILE)
        with (
            contextlib.closing(sqlite3.connect(source)) as old,
            contextlib.closing(sqlite3.connect(staging / HISTORY_FILE)) as new,
        ):
            old.backup(new)
    except (sqlite3.DatabaseError, OSError) as exc:
        log.warning("repair: the answer history could not be carried over: %s", exc)


def repair_collection(
    name: str,
    *,
    paths: Sequence[Path] = (),
    settings: Settings | None = None,
    passwords: Mapping[Path, str] | None = None,
    default_password: str | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    timeout_s: float = 60.0,
) -> RepairReport:
    """Rebuild collection ``name`` from the files its catalog names (plus ``paths``).

    Works on a healthy collection too (a full re-ingest). The embedder is the collection's
    own (``collection.toml``), or the settings' when that file is unreadable.

    Args:
        name: the collection.
        paths: more files or folders to ingest into the rebuilt collection (needed when the
            catalog is unreadable).
        settings: embedder fallback and whether links out of chosen folders are followed.
        passwords, default_password: passwords of encrypted PDFs, as for ingest.
        progress, cancel, timeout_s: as for :meth:`Collection.add_paths`.

    Returns:
        What was rebuilt, what was missing.

    Raises:
        CollectionNotFound, InvalidCollectionName: no such collection.
        CollectionBusy: another process is writing it.
        RepairImpossible: no catalogued file exists any more and no ``paths`` were given.
        Cancelled: ``cancel`` was set (the damaged collection is left as it was).
        ModelNotFound: the embedder is not on this machine.
    """
    settings = settings or Settings()
    path = existing_path(name)
    lock = FileLock(path / LOCK_FILE)
    if not lock.try_acquire():
        raise CollectionBusy(name)
    staging = collections_dir() / f"{STAGING_PREFIX}{path.name}"
    try:
        sources, complete = catalogued_sources(path / CATALOG_FILE)
        files = [s for s in sources if is_file_source(s)]
        present = [Path(s) for s in files if os.path.lexists(s)]
        missing = tuple(s for s in files if not os.path.lexists(s))
        todo = [*present, *paths]
        if not todo:
            reason = (
                "its catalog names no file that still exists"
                if files
                else "no source file can be read from its catalog"
            )
            raise RepairImpossible(name, reason)
        shutil.rmtree(staging, ignore_errors=True)  # left by an interrupted repair
        embedder = _embedder_of(path, settings.models.embedder)
        try:
            display_name = _recorded_display_name(path)
            with Collection.create_at(
                path.name, staging, embedder, display_name=display_name
            ) as fresh:
                _carry_over(path, staging)
                report = fresh.add_paths(
                    todo,
                    passwords=passwords,
                    default_password=default_password,
                    progress=progress,
                    cancel=cancel,
                    timeout_s=timeout_s,
                    follow_external_links=settings.ingest.follow_external_links,
                    max_chunks_per_file=settings.ingest.max_chunks_per_file,
                )
            _swap_in(staging, path)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    finally:
        lock.release()
    shutil.rmtree(staging, ignore_errors=True)  # the damaged collection, swapped out
    log.info("collection %s rebuilt from %d files (%d missing)", name, len(todo), len(missing))
    return RepairReport(
        name=name,
        ingest=report,
        catalogued=len(files),
        catalog_complete=complete,
        missing=missing,
        not_files=len(sources) - len(files),
    )
