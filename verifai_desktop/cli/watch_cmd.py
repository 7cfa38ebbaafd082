"""`verifai watch`: keep a collection in step with the folders it was built from.

Each sync opens the collection, takes its write lock, and closes it (releasing the lock), so
`verifai ingest`, `remove`, `repair` and another `watch` work while this one waits for changes;
a sync that finds another writer at work is retried a few seconds later.

Ctrl-C cancels the sync in progress between files (the file in hand is committed whole or not
at all) and waits for it to end before the process exits with status 130: no thread is left
inside ONNX Runtime or Tantivy while the interpreter shuts down, which used to end in
``terminate called without an active exception`` (SIGABRT). A second Ctrl-C exits at once, as
a kill would: the catalog keeps its last whole transaction and the indexes are reconciled with
it when the collection is next opened.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import threading
from pathlib import Path
from typing import Any

from verifai_desktop.cli.common import add_collection_arg
from verifai_desktop.cli.ingest_cmd import cancel_on_sigint
from verifai_desktop.errors import Cancelled, CollectionBusy
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.names import printable
from verifai_desktop.settings import Settings, load_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.watch import FolderWatcher, SyncReport, sync_changes, watched_roots

EXIT_STOPPED = 130
"""Exit status after Ctrl-C (128 + SIGINT, as a shell reports a command interrupted)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai watch``."""
    p = sub.add_parser(
        "watch",
        help="follow the folders a collection was built from: re-ingest added and changed "
        "files, remove deleted ones (until Ctrl-C, exit status 130)",
    )
    add_collection_arg(p)
    p.add_argument("--once", action="store_true", help="catch up with every change once, then exit")
    p.set_defaults(func=run_watch)


def _line(report: SyncReport) -> str:
    when = dt.datetime.now().strftime("%H:%M:%S")
    return f"[{when}] synced: {printable(report.summary())}"


def _options(settings: Settings) -> dict[str, Any]:
    return {
        "follow_external_links": settings.ingest.follow_external_links,
        "max_chunks_per_file": settings.ingest.max_chunks_per_file,
        "ocr": OcrOptions.from_settings(settings.ingest),
    }


def _sync(
    name: str, settings: Settings, changed: list[Path] | None, cancel: threading.Event
) -> SyncReport:
    """One sync, holding the collection (and its write lock) only while it runs."""
    with Collection.open(name, settings=settings) as collection:
        return sync_changes(collection, changed, cancel=cancel, **_options(settings))


def run_watch(args: argparse.Namespace) -> int:
    """Catch up with what changed, then follow changes until interrupted (exit 130)."""
    settings = load_settings()
    with Collection.open(args.collection, settings=settings, reconcile=False) as collection:
        roots = watched_roots(collection)
    if not roots:
        print(
            f"collection {args.collection!r} remembers no folders yet: add some with "
            f"`verifai ingest PATH --collection {args.collection}`",
            file=sys.stderr,
        )
        return 1
    for root in roots:
        kind = "folder" if root.is_folder else "file"
        print(f"{kind}: {printable(str(root.path))}")
    with cancel_on_sigint() as cancel:
        if args.once:
            print(_line(_sync(args.collection, settings, None, cancel)), flush=True)
            return 0

        def on_batch(paths: set[Path]) -> None:
            try:
                report = _sync(args.collection, settings, sorted(paths), cancel)
            except Cancelled:
                return  # Ctrl-C: what is left is caught up with next time
            print(_line(report), flush=True)

        def on_error(exc: BaseException) -> None:
            if isinstance(exc, CollectionBusy):
                print(f"{exc}; syncing again in {watcher.retry_s:g} s", file=sys.stderr, flush=True)
            else:
                print(f"sync failed: {exc}", file=sys.stderr, flush=True)

        watcher = FolderWatcher(
            roots, on_batch, debounce_s=settings.watch.debounce_s, on_error=on_error
        )
        watcher.start()
        for root in roots:  # catch up with what changed while nobody watched
            watcher.notify(root.path)
        print(f"watching {len(watcher.watched)} of {len(roots)}; Ctrl-C stops", flush=True)
        try:
            cancel.wait()
            watcher.stop(timeout_s=None)  # the sync in progress ends at its next file
        except KeyboardInterrupt:  # a second Ctrl-C: stop at once, as a kill would
            sys.stdout.flush()
            print("aborted", file=sys.stderr, flush=True)
            os._exit(EXIT_STOPPED)
    print("stopped watching", file=sys.stderr)
    return EXIT_STOPPED
