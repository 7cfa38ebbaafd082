"""`verifai watch`: keep a collection in step with the folders it was built from."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import threading
from pathlib import Path
from typing import Any

from verifai_desktop.cli.common import add_collection_arg
from verifai_desktop.names import printable
from verifai_desktop.settings import Settings, load_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.roots import roots_of
from verifai_desktop.store.watch import FolderWatcher, SyncReport, sync_changes


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai watch``."""
    p = sub.add_parser(
        "watch",
        help="follow the folders a collection was built from: re-ingest added and changed "
        "files, remove deleted ones (until Ctrl-C)",
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
    }


def run_watch(args: argparse.Namespace) -> int:
    """Catch up with what changed, then follow changes until interrupted."""
    settings = load_settings()
    with Collection.open(args.collection, settings=settings) as collection:
        roots = roots_of(collection)
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
        print(_line(sync_changes(collection, None, **_options(settings))), flush=True)
        if args.once:
            return 0
        lock = threading.Lock()

        def on_batch(paths: set[Path]) -> None:
            with lock:
                report = sync_changes(collection, sorted(paths), **_options(settings))
            print(_line(report), flush=True)

        def on_error(exc: BaseException) -> None:
            print(f"sync failed: {exc}", file=sys.stderr, flush=True)

        watcher = FolderWatcher(
            roots, on_batch, debounce_s=settings.watch.debounce_s, on_error=on_error
        )
        watcher.start()
        print(f"watching {len(watcher.watched)} of {len(roots)}; Ctrl-C stops", flush=True)
        stop = threading.Event()
        try:
            while not stop.wait(3600):
                pass
        except KeyboardInterrupt:
            print("stopped watching", file=sys.stderr)
        finally:
            watcher.stop()
    return 0
