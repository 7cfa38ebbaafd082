"""Rebuilding a damaged collection from its source files, and repairing its answer history.

The files the damaged catalog still names (row by row when whole-table reads fail) are
ingested into a fresh collection built in a staging folder beside it
(``collections/.repair-<name>``), which keeps the damaged one's answer history and the folders it
follows (:data:`CARRIED_OVER`); only when that is complete are the two folders swapped, in one
atomic ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames elsewhere), and the damaged one
deleted. A repair that fails or is cancelled leaves the damaged collection as it was.

A damaged answer history is repaired first, in place
(:func:`~verifai_desktop.store.history_repair.repair_history`); :func:`repair_collection_history`
does only that, without rebuilding the documents.
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
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.settings import Settings, collections_dir
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import CATALOG_FILE, LOCK_FILE, existing_path
from verifai_desktop.store.history_repair import DAMAGED_PREFIX, HistoryRepair, repair_history
from verifai_desktop.store.integrity import salvage_table
from verifai_desktop.store.lock import FileLock
from verifai_desktop.store.naming import CONFIG_FILE, display_name_of
from verifai_desktop.store.sources import is_file_source
from verifai_desktop.store.writer import IngestReport, ProgressFn

log = logging.getLogger(__name__)

STAGING_PREFIX = ".repair-"


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
        history: what repairing the damaged answer history did; None when it was not
            damaged.
    """

    name: str
    ingest: IngestReport
    catalogued: int
    catalog_complete: bool
    missing: tuple[str, ...]
    not_files: int
    history: HistoryRepair | None = None


def catalogued_sources(catalog: Path) -> tuple[tuple[str, ...], bool]:
    """The ``source`` of every document row still readable in a (damaged) catalog.

    Reads the whole table at once, and row by row (by ``doc_id``) when that fails
    (:func:`~verifai_desktop.store.integrity.salvage_table`).

    Returns:
        The sources, and whether every row was read.
    """
    if not catalog.is_file() or catalog.stat().st_size == 0:
        return (), False
    try:
        db = sqlite3.connect(catalog)  # only read; the file is replaced after the repair
    except sqlite3.DatabaseError:
        return (), False
    with contextlib.closing(db):
        found = salvage_table(db, "documents", "doc_id", ("source",))
    return tuple(_source(r[1]) for r in found.rows), found.complete


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
they are (plus ``history.sqlite``, copied with SQLite's backup API, and damaged histories set
aside by an earlier repair)."""


def _carry_over(damaged: Path, staging: Path) -> None:
    """Copy what a rebuild cannot recreate into the staging folder: the roots that folder
    watching follows and the answer history. A record that cannot be read is logged and left
    behind; the repair goes on."""
    from verifai_desktop.private import create_private_file
    from verifai_desktop.store.history import HISTORY_FILE

    aside = [p.name for p in damaged.glob(f"{DAMAGED_PREFIX}*")]
    for name in (*CARRIED_OVER, *aside):
        try:
            if (damaged / name).is_dir():  # a folder found in the history's place
                shutil.copytree(damaged / name, staging / name, symlinks=True)
            else:
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


def repair_collection_history(name: str) -> HistoryRepair | None:
    """Repair the answer history of collection ``name`` when it is damaged, and nothing else
    (:func:`~verifai_desktop.store.history_repair.repair_history`).

    Returns:
        What was kept and lost, or None when the history is not damaged.

    Raises:
        CollectionNotFound, InvalidCollectionName: no such collection.
        CollectionBusy: another process is writing it (an ingest, another repair).
        ExportFailed: the repaired file could not be written; the damaged one is left as it
            was.
        BadRecord: another program kept the history locked too long.
    """
    path = existing_path(name)
    lock = FileLock(path / LOCK_FILE)
    if not lock.try_acquire():
        raise CollectionBusy(name)
    try:
        return repair_history(path)
    finally:
        lock.release()


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
    own (``collection.toml``), or the settings' when that file is unreadable. A damaged answer
    history is repaired first (:func:`~verifai_desktop.store.history_repair.repair_history`),
    then carried over with the damaged file it set aside.

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
        RepairImpossible: no catalogued file exists any more and no ``paths`` were given
            (a damaged history is repaired all the same).
        Cancelled: ``cancel`` was set (the damaged collection is left as it was).
        ModelNotFound: the embedder is not on this machine.
        ExportFailed: the repaired history could not be written.
    """
    settings = settings or Settings()
    path = existing_path(name)
    lock = FileLock(path / LOCK_FILE)
    if not lock.try_acquire():
        raise CollectionBusy(name)
    staging = collections_dir() / f"{STAGING_PREFIX}{path.name}"
    try:
        history = repair_history(path)
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
                    ocr=OcrOptions.from_settings(settings.ingest),
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
        history=history,
    )
