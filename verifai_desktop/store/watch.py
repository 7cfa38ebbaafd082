"""Folder watching: a collection follows the folders and files it was built from (its roots).

:class:`FolderWatcher` watches the roots (:mod:`verifai_desktop.store.roots`) with watchdog
(inotify, FSEvents, ReadDirectoryChangesW), gathers changes until none has come for
``debounce_s`` seconds, and hands the batch to :func:`sync_changes`, which re-ingests added and
changed files and removes deleted ones through the collection's single writer
(:meth:`Collection.add_paths`, :meth:`Collection.remove_sources`), incrementally: an unchanged
file is skipped by its sha256, which is computed even when its size and mtime are as
catalogued (an edit can keep both; ``verifai ingest``, and the app's rescan of a collection it
opens, trust them). A changed path is taken in
only when an ingest of its folder would take it in
(:func:`~verifai_desktop.store.walk.reached_by_walk`: no hidden folders such as ``.Trash-1000``,
the same file kinds, links out of the followed folders refused unless ``follow_external_links``).

A root that cannot be reached (:func:`~verifai_desktop.store.roots.unavailable_reason`) is
reported as unavailable and nothing under it is removed: a vanished folder is never taken for
"every file deleted". A single-file root deleted from a folder still there
(:func:`~verifai_desktop.store.roots.deleted_file`) is removed and no longer followed.

:func:`sync_changes` takes the collection's write lock; ``verifai watch`` opens the collection
for each sync and closes it after, so other writers work between syncs, and a batch that finds
the collection busy is retried (:class:`FolderWatcher`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifai_desktop.errors import CollectionBusy
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.library import merge_reports
from verifai_desktop.store.library_watch import library_roots, sync_libraries
from verifai_desktop.store.roots import (
    Root,
    deleted_file,
    now_utc,
    roots_of,
    save_roots,
    unavailable_reason,
)
from verifai_desktop.store.sources import is_file_source
from verifai_desktop.store.writer import IngestReport, Outcome

log = logging.getLogger(__name__)

RECHECK_S = 10.0
"""Seconds between checks that an unavailable root is back (or an available one gone)."""

BUSY_RETRY_S = 5.0
"""Seconds before a batch that found the collection busy (another writer) is synced again."""


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync did.

    Attributes:
        ingest: the ingest of added and changed files (None when there was none).
        removed: sources removed because their file was deleted (single-file roots deleted
            included).
        unavailable: roots that could not be synced, with the reason; nothing under them
            was removed.
        finished: when the sync ended (ISO 8601, UTC).
    """

    ingest: IngestReport | None
    removed: tuple[str, ...] = ()
    unavailable: tuple[tuple[Path, str], ...] = ()
    finished: str = field(default_factory=now_utc)

    def summary(self) -> str:
        """One line for people: ``"2 added or changed, 1 removed; /mnt/usb: missing (...)"``."""
        parts = []
        if self.ingest is not None:
            written = sum(
                1
                for o in self.ingest.outcomes
                if o.status not in (Outcome.SKIPPED, Outcome.REMOVED)
            )
            parts.append(f"{written} added or changed")
        removed = len(self.removed) + (
            self.ingest.count(Outcome.REMOVED) if self.ingest is not None else 0
        )
        parts.append(f"{removed} removed")
        text = ", ".join(parts)
        for path, reason in self.unavailable:
            text += f"; {path}: {reason}"
        return text


def watched_roots(collection: Collection) -> list[Root]:
    """What folder watching watches for ``collection``: its roots and the reference libraries
    it follows (:func:`~verifai_desktop.store.library_watch.library_roots`)."""
    roots = roots_of(collection)
    known = {r.path for r in roots}
    return roots + [r for r in library_roots(collection) if r.path not in known]


def _under(path: Path, roots: Iterable[Root]) -> Root | None:
    for root in roots:
        if path == root.path or (root.is_folder and path.is_relative_to(root.path)):
            return root
    return None


def sync_changes(
    collection: Collection,
    changed: Iterable[Path] | None = None,
    *,
    progress: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    check_content: bool = True,
    **ingest_options: Any,
) -> SyncReport:
    """Bring ``collection`` in step with its roots.

    Args:
        collection: an opened collection; this process becomes its writer.
        changed: paths reported changed, added or deleted (files or folders), or None to
            rescan every root (catching up on what happened while nobody watched). Paths
            under a folder root are filtered as a walk of that folder filters them.
        progress: passed to the ingest.
        cancel: when set, the ingest stops between files (what was done is committed).
        check_content: hash files whose size and mtime are as catalogued, and take in those
            whose sha256 differs (``False``: trust size and mtime, as ``verifai ingest``
            does; the app's rescan when it opens a collection, which would otherwise read
            every file each time).
        **ingest_options: passed to :meth:`Collection.add_paths` (``timeout_s``,
            ``max_chunks_per_file``, ``follow_external_links``, ``ocr``).

    Returns:
        What was ingested and removed, and which roots were unavailable.

    Raises:
        CollectionBusy: another process is writing the collection.
        Cancelled: ``cancel`` was set; the files finished before are committed, the one in
            hand is not.
    """
    collection.acquire_write_lock()
    changed = None if changed is None else [Path(p) for p in changed]
    roots = roots_of(collection)
    deleted = {r.path for r in roots if deleted_file(r)}
    ok: list[Root] = []
    unavailable: list[tuple[Path, str]] = []
    for root in roots:
        if root.path in deleted:
            log.info("%s: deleted; removed from the collection", root.path)
            continue
        reason = unavailable_reason(root)
        if reason is None:
            ok.append(root)
        else:
            unavailable.append((root.path, reason))
            log.warning("%s: %s; nothing under it is removed", root.path, reason)
    if changed is None:
        to_ingest = [r.path for r in ok]
        gone: list[str] = []
    else:
        sources = [Path(d.source) for d in collection.documents() if is_file_source(d.source)]
        to_ingest, gone = _plan(changed, ok, sources)
    within = [r.path for r in ok if r.is_folder]
    report = (
        collection.add_paths(
            to_ingest,
            progress=progress,
            cancel=cancel,
            within=within,
            check_content=check_content,
            **ingest_options,
        )
        if to_ingest
        else None
    )
    library_options = {k: v for k, v in ingest_options.items() if k != "within"}
    reports, library_removed, library_unavailable = sync_libraries(
        collection, changed, progress=progress, cancel=cancel, **library_options
    )
    if reports:
        report = merge_reports(([report] if report is not None else []) + reports)
    unavailable += library_unavailable
    gone += [str(p) for p in sorted(deleted)]
    removed = tuple(collection.remove_sources(gone)) if gone else ()
    removed += tuple(library_removed)
    stamp = now_utc()
    reasons = dict(unavailable)
    save_roots(
        collection,
        [
            Root(
                r.path,
                r.is_folder,
                r.device,
                r.added,
                r.last_sync if r.path in reasons else stamp,
                reasons.get(r.path, "ok"),
            )
            for r in roots
            if r.path not in deleted
        ],
    )
    return SyncReport(report, removed, tuple(unavailable), stamp)


def _plan(
    changed: Iterable[Path], roots: Sequence[Root], sources: Sequence[Path]
) -> tuple[list[Path], list[str]]:
    """Which paths to ingest and which sources to remove for a batch of changes."""
    to_ingest: dict[Path, None] = {}
    gone: dict[str, None] = {}
    for raw in changed:
        path = Path(raw)
        if _under(path, roots) is None:
            continue  # outside every available root: not ours, or its disk is gone
        try:
            os.lstat(path)  # a link counts, wherever it leads (the ingest judges it)
        except (FileNotFoundError, NotADirectoryError):
            for s in sources:
                if (s == path or s.is_relative_to(path)) and not os.path.lexists(s):
                    gone[str(s)] = None
        except OSError:
            continue  # cannot tell: leave it as it is
        else:
            to_ingest[path] = None  # filtered by the ingest as a walk of its root filters
    return list(to_ingest), list(gone)


class FolderWatcher:
    """Watches roots with watchdog and calls ``on_batch`` with each debounced batch of paths.

    ``on_batch`` runs on the watcher's own thread, one batch at a time; the paths are the
    files and folders created, changed, deleted or moved (both ends of a move). Roots that
    disappear are watched again when they come back, and their path is put in a batch then.
    A batch whose ``on_batch`` raises :class:`~verifai_desktop.errors.CollectionBusy` (another
    process is writing the collection) is handed over again ``retry_s`` later, with the
    changes that came meanwhile.

    Args:
        roots: what to watch.
        on_batch: called with each batch (a set of absolute paths).
        debounce_s: seconds without a new change before a batch is handed over.
        on_error: called with an exception raised by ``on_batch`` (logged if None), also
            with a ``CollectionBusy`` before its batch is retried; the watcher goes on.
        retry_s: seconds before a batch that found the collection busy is handed over again.
    """

    def __init__(
        self,
        roots: Sequence[Root],
        on_batch: Callable[[set[Path]], None],
        *,
        debounce_s: float = 2.0,
        on_error: Callable[[BaseException], None] | None = None,
        retry_s: float = BUSY_RETRY_S,
    ) -> None:
        from watchdog.observers import Observer

        self.roots = list(roots)
        self.debounce_s = debounce_s
        self.retry_s = retry_s
        self._on_batch = on_batch
        self._on_error = on_error
        self._observer = Observer()
        self._pending: set[Path] = set()
        self._due = 0.0  # monotonic time at which the pending batch is handed over
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._watched: dict[Path, Any] = {}
        self._thread = threading.Thread(target=self._run, name="verifai-watch", daemon=True)

    @property
    def watched(self) -> list[Path]:
        """The roots being watched now (the others are unavailable)."""
        return sorted(self._watched)

    def start(self) -> None:
        """Start watching (returns at once)."""
        self._schedule_available()
        self._observer.start()
        self._thread.start()

    def stop(self, timeout_s: float | None = 10.0) -> None:
        """Stop watching; waits up to ``timeout_s`` (None: as long as it takes) for a batch
        being synced to finish (the caller makes it stop early, e.g. by a cancel event)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._observer.stop()
        self._observer.join(timeout_s)
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def notify(self, path: Path) -> None:
        """Queue ``path`` as changed (what the event handler does for each event)."""
        self._queue({Path(path)}, self.debounce_s)

    def _queue(self, paths: set[Path], delay_s: float) -> None:
        """Add ``paths`` to the pending batch, handed over no sooner than ``delay_s`` from now."""
        with self._cond:
            self._pending |= paths
            self._due = max(self._due, time.monotonic() + delay_s)
            self._cond.notify_all()

    def _schedule_available(self) -> list[Path]:
        """Watch every root that exists and is not watched yet; returns those added."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def __init__(self, root: Root) -> None:
                self.root = root

            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                if event.is_directory and event.event_type == "modified":
                    return  # a folder's own entry changed: its files report themselves
                for raw in (event.src_path, getattr(event, "dest_path", "")):
                    if not raw:
                        continue
                    path = Path(os.fsdecode(raw))
                    if self.root.is_folder or path == self.root.path:
                        watcher.notify(path)

        added = []
        for root in self.roots:
            if root.path in self._watched:
                continue
            target = root.path if root.is_folder else root.path.parent
            if not target.is_dir():
                continue
            try:
                self._watched[root.path] = self._observer.schedule(
                    Handler(root), str(target), recursive=root.is_folder
                )
            except OSError as exc:
                log.warning("cannot watch %s: %s", root.path, exc)
                continue
            added.append(root.path)
        return added

    def _drop_missing(self) -> None:
        folders = {r.path for r in self.roots if r.is_folder}
        for path in list(self._watched):
            target = path if path in folders else path.parent
            if not target.is_dir():
                watch = self._watched.pop(path)
                with contextlib.suppress(KeyError, OSError):
                    self._observer.unschedule(watch)

    def _run(self) -> None:
        next_check = time.monotonic() + RECHECK_S
        while not self._stop.is_set():
            with self._cond:
                now = time.monotonic()
                if self._pending and now >= self._due:
                    batch, self._pending = self._pending, set()
                else:
                    batch = set()
                    wait = self._due - now if self._pending else RECHECK_S
                    self._cond.wait(max(0.05, min(wait, next_check - now)))
            if batch:
                self._deliver(batch)
            if time.monotonic() >= next_check and not self._stop.is_set():
                next_check = time.monotonic() + RECHECK_S
                self._drop_missing()
                for path in self._schedule_available():
                    self.notify(path)  # back again: catch up with what changed meanwhile

    def _deliver(self, batch: set[Path]) -> None:
        try:
            self._on_batch(batch)
        except CollectionBusy as exc:  # another writer: try again later
            log.info("%s; syncing again in %g s", exc, self.retry_s)
            self._queue(batch, self.retry_s)
            if self._on_error is not None:
                self._on_error(exc)
        except Exception as exc:  # a failed sync must not end watching
            if self._on_error is not None:
                self._on_error(exc)
            else:
                log.exception("folder sync failed")
