"""`verifai ingest`, `verifai status`, `verifai remove` and `verifai collections`."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from verifai_desktop.cli.common import (
    add_collection_arg,
    add_json_arg,
    add_store_arg,
    error_hint,
    open_store,
    print_json,
)
from verifai_desktop.cli.passwords import (
    PASSWORD_HINT,
    add_password_args,
    can_prompt,
    password_from_args,
    prompt_password,
)
from verifai_desktop.domain import DocStatus, Progress
from verifai_desktop.errors import IndexCorrupt, MissingPath, VerifaiError
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.names import name_json, names_json, printable
from verifai_desktop.settings import load_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.library import ingest_sources
from verifai_desktop.store.naming import list_names
from verifai_desktop.store.records import DocumentRecord
from verifai_desktop.store.spread import RayCluster
from verifai_desktop.store.writer import FileOutcome, IngestReport, Outcome, ingest_paths

EXIT_NOT_ALL_INDEXED = 3
"""Exit code of ``verifai ingest`` when the run finished but some named file is not indexed
(failed, encrypted or needs OCR, this run or an earlier one); 0 when every file is indexed
(or empty, unchanged or removed), 1 on an error that stopped the run, 130 when cancelled."""
_NOT_INDEXED = frozenset({DocStatus.FAILED, DocStatus.ENCRYPTED, DocStatus.NEEDS_OCR})

EXIT_CODES_HELP = """exit codes:
  0    every file is indexed (or empty, unchanged, removed)
  1    an error stopped the run (nothing half-written)
  2    bad arguments
  3    the run finished, but some files are not indexed (failed, encrypted,
       scanned without text); the report lists them with their reasons
  130  cancelled (Ctrl+C); what was indexed so far is kept
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ingest, status, remove and collections commands."""
    p = sub.add_parser(
        "ingest",
        help="add files and folders to a collection (PDF, DOCX, PPTX, EPUB, MD, TXT)",
        description="Parse, chunk, embed and index files; unchanged files are skipped, changed "
        "ones replaced, files gone from an ingested folder removed.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="files or folders; a .bib or CSL-JSON file or a Zotero data folder is read as a "
        "reference library: its entries' attached files are ingested with their metadata",
    )
    p.add_argument(
        "--zotero-collection",
        metavar="NAME",
        help="of a Zotero library, ingest only the items of this collection (and its "
        "subcollections)",
    )
    add_collection_arg(p)
    add_store_arg(p, acl=True)
    add_json_arg(p)
    add_password_args(p)
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="parse (and OCR) time limit per file (s)",
    )
    p.add_argument(
        "--no-ocr",
        action="store_true",
        help="do not recognise scanned PDF pages or the images of DOCX, PPTX and EPUB files "
        "(they are recorded as needing OCR); default: the setting ingest.ocr_engine",
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="hash, parse, chunk and embed the files on a Ray cluster (this process writes "
        "them); ADDRESS: the cluster to join (e.g. ray://HEAD:10001 or auto), none: start a "
        "local one on this machine; needs the 'cluster' extra",
    )
    p.add_argument(
        "--embedder",
        metavar="NAME_OR_PATH",
        help="sentence-transformers model for a NEW collection (default: settings, the bundled "
        "all-MiniLM-L6-v2); an existing collection keeps the one it was built with",
    )
    p.set_defaults(func=run_ingest)

    p = sub.add_parser("status", help="list every document of a collection with its status")
    add_collection_arg(p)
    add_store_arg(p)
    p.add_argument(
        "--check",
        action="store_true",
        help="also run the full integrity check of the catalog (reads all of it)",
    )
    add_json_arg(p)
    p.set_defaults(func=run_status)

    p = sub.add_parser(
        "remove",
        help="remove a file (or every file under a folder) from a collection",
        description="Remove documents from a collection's indexes and catalog; the files "
        "themselves are not touched. `verifai status` lists what a collection holds.",
    )
    p.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a file, or a folder (removes every document under it); as ingested",
    )
    add_collection_arg(p)
    add_json_arg(p)
    p.set_defaults(func=run_remove)

    p = sub.add_parser("collections", help="list the collections")
    add_json_arg(p)
    p.set_defaults(func=run_collections)


@contextmanager
def cancel_on_sigint() -> Iterator[threading.Event]:
    """Turn Ctrl-C into a cancel request, so the file in progress is finished cleanly."""
    cancel = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():  # second Ctrl-C: stop at once
            signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt
        cancel.set()
        print("\nstopping after the current file (Ctrl-C again to abort)", file=sys.stderr)

    signal.signal(signal.SIGINT, handler)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)


class _PlainProgress:
    """One line per file on stderr, for logs and pipes."""

    def __call__(self, p: Progress) -> None:
        if p.stage == "files" and p.message:
            print(f"[{p.done + 1}/{p.total}] {printable(p.message)}", file=sys.stderr, flush=True)
        elif p.stage == "ocr":
            line = f"  recognising {printable(p.message)} ({p.done + 1} of {p.total} scanned)"
            if p.unit == "images":
                line = f"  recognising {printable(p.message)} image {p.done + 1} of {p.total}"
            print(line, file=sys.stderr, flush=True)


@contextmanager
def progress_reporter(quiet: bool) -> Iterator[Callable[[Progress], None] | None]:
    if quiet:
        yield None
        return
    if not sys.stderr.isatty():
        yield _PlainProgress()
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    with RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[detail]}"),
        transient=True,
    ) as bar:
        files = bar.add_task("files", total=None, detail="")
        chunks = bar.add_task("chunks embedded", total=None, detail="")

        def report(p: Progress) -> None:
            if p.stage == "files":
                bar.update(files, completed=p.done, total=p.total, detail=printable(p.message))
            elif p.stage == "ocr":
                image = "" if p.unit == "pages" else " image"
                detail = f"recognising {printable(p.message)}{image} ({p.done + 1}/{p.total})"
                bar.update(files, detail=detail)
            elif p.stage == "embed":
                bar.update(chunks, completed=p.done)

        yield report


def outcome_json(o: FileOutcome) -> dict[str, Any]:
    """One file of an ingest run as ``--json`` shows it; its ``source`` is written as in
    :func:`~verifai_desktop.names.name_json` (plus ``source_bytes_b64`` for a name that is not
    valid UTF-8)."""
    return {
        **name_json("source", o.source),
        "status": o.status.value,
        "stored_status": o.stored_status.value if o.stored_status else None,
        "reason": o.reason,
        "chunks": o.chunk_count,
        "format": o.format.value if o.format else None,
    }


def print_report(report: IngestReport) -> None:
    for o in report.outcomes:
        status = o.status.value
        if o.status is Outcome.SKIPPED and o.stored_status is not None:
            status = f"skipped ({o.stored_status.value})"
        line = f"{status:<22} {o.chunk_count:>5} chunks  {printable(Path(o.source).name)}"
        if o.reason:  # an indexed file's: the scanned pages left out
            line += f"  - {printable(o.reason)}"
            if o.stored_status is DocStatus.ENCRYPTED:
                line += f" ({PASSWORD_HINT})"
        print(line)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(report.counts.items()))
    print(
        f"{len(report.outcomes)} files: {counts}; {report.chunks_indexed} chunks indexed "
        f"in {report.elapsed_ms / 1000:.1f} s"
    )


def run_ingest(args: argparse.Namespace) -> int:
    """Handler of ``verifai ingest``."""
    for path in args.paths:
        try:
            missing = not path.exists()
        except OSError:  # e.g. inside a folder that cannot be read: the run reports it
            missing = False
        if missing:
            raise MissingPath(path)
    settings = load_settings()
    ocr = OcrOptions.from_settings(settings.ingest, enabled=not args.no_ocr)
    password = password_from_args(args)
    # On a Ray cluster (a local one for a bare --ray); without Ray, say so before a collection
    # is created.
    cluster = None if args.ray is None else RayCluster(args.ray or None)
    # ``--embedder`` builds a new collection with that model; an existing one must match it.
    with (
        open_store(args, create=True, settings=settings, embedder=args.embedder) as collection,
        cancel_on_sigint() as cancel,
        progress_reporter(False) as progress,
    ):
        report = ingest_sources(
            collection,
            args.paths,
            zotero_collection=args.zotero_collection,
            default_password=password,
            progress=progress,
            cancel=cancel,
            timeout_s=args.timeout,
            follow_external_links=settings.ingest.follow_external_links,
            max_chunks_per_file=settings.ingest.max_chunks_per_file,
            ocr=ocr,
            cluster=cluster,
        )
        encrypted = [
            Path(o.source) for o in report.outcomes if o.stored_status is DocStatus.ENCRYPTED
        ]
        shown = False
        if encrypted and password is None and can_prompt(args):
            print_report(report)
            shown = True
            password = prompt_password(len(encrypted))
            if password is not None:  # a second run over the encrypted files only
                shown = False
                report = ingest_paths(
                    collection,
                    encrypted,
                    default_password=password,
                    progress=progress,
                    cancel=cancel,
                    timeout_s=args.timeout,
                    follow_external_links=settings.ingest.follow_external_links,
                    max_chunks_per_file=settings.ingest.max_chunks_per_file,
                    ocr=ocr,
                    cluster=cluster,
                )
    if args.json:
        print_json(
            {
                "collection": args.collection,
                "files": [outcome_json(o) for o in report.outcomes],
                "counts": dict(report.counts),
                "chunks_indexed": report.chunks_indexed,
                "elapsed_ms": round(report.elapsed_ms, 1),
                "stage_ms": {
                    "load": round(report.load_ms, 1),
                    "parse": round(report.parse_ms, 1),
                    "chunk": round(report.chunk_ms, 1),
                    "embed": round(report.embed_ms, 1),
                    "index": round(report.index_ms, 1),
                },
            }
        )
    elif not shown:
        print_report(report)
    return ingest_exit_code(report)


def not_indexed(report: IngestReport) -> list[FileOutcome]:
    """Files of a run that are not indexed now: failed, encrypted or needing OCR in this run,
    or skipped as unchanged with such a status from an earlier run; and folders that could not
    be read."""
    return [
        o
        for o in report.outcomes
        if o.stored_status in _NOT_INDEXED or o.status is Outcome.FAILED  # e.g. unreadable folder
    ]


def ingest_exit_code(report: IngestReport) -> int:
    """0, or :data:`EXIT_NOT_ALL_INDEXED` (with a line on standard error) when some file of
    the run is not indexed."""
    missing = not_indexed(report)
    if not missing:
        return 0
    print(
        f"{len(missing)} of {len(report.outcomes)} files not indexed (see the report); "
        f"exit code {EXIT_NOT_ALL_INDEXED}",
        file=sys.stderr,
    )
    return EXIT_NOT_ALL_INDEXED


def _record_json(r: DocumentRecord) -> dict[str, Any]:
    return {
        "doc_id": r.doc_id,
        **name_json("source", r.source),
        "title": r.title,
        "format": r.format.value if r.format else None,
        "status": r.status.value,
        "reason": r.reason,
        "chunks": r.chunk_count,
        "size_bytes": r.size_bytes,
        "sha256": r.sha256,
    }


def run_status(args: argparse.Namespace) -> int:
    """Handler of ``verifai status``."""
    # The catalog first: the indexes (and usearch's ONNX Runtime) load only when one is behind
    # the catalog and must be rebuilt, e.g. after an interrupted ingest.
    with open_store(args, reconcile=False) as collection:
        if not collection.is_consistent():
            collection.reconcile()
        if args.check:
            collection.check()
        records = collection.documents()
        consistent = collection.is_consistent()
        embedder = collection.embedder_name
        chunks = collection.num_chunks()
    if args.json:
        print_json(
            {
                "collection": args.collection,
                "embedder": embedder,
                "chunks": chunks,
                "indexes_current": consistent,
                "documents": [_record_json(r) for r in records],
            }
        )
        return 0
    for r in records:
        line = f"{r.status.value:<10} {r.chunk_count:>5} chunks  {printable(r.source)}"
        if r.reason:
            line += f"  - {printable(r.reason)}"
        print(line)
    print(f"{len(records)} documents, {chunks} chunks, embedder {embedder}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    """Handler of ``verifai remove``."""
    with Collection.open(args.collection) as collection:
        before = {r.source for r in collection.documents()}
        collection.remove(args.path)
        removed = sorted(before - {r.source for r in collection.documents()})
    if not removed:
        raise VerifaiError(
            f"{args.path} is not in collection {args.collection!r}; see `verifai status`"
        )
    if args.json:
        print_json({"collection": args.collection, **names_json("removed", removed)})
    else:
        for source in removed:
            print(f"removed {printable(source)}")
    return 0


def run_collections(args: argparse.Namespace) -> int:
    """Handler of ``verifai collections``."""
    rows: list[dict[str, object]] = []
    damaged: dict[str, IndexCorrupt] = {}
    for entry in list_names():
        name = entry.folder
        try:
            with Collection.open(name, reconcile=False) as collection:
                rows.append(
                    {
                        "name": name,
                        "display_name": entry.display,
                        "documents": len(collection.documents()),
                        "chunks": collection.num_chunks(),
                        "embedder": collection.embedder_name,
                    }
                )
        except IndexCorrupt as exc:  # one damaged collection does not hide the others
            damaged[name] = exc
            rows.append({"name": name, "display_name": entry.display, "damaged": str(exc)})
    if args.json:
        print_json(rows)
    else:
        for row in rows:
            label = printable(str(row["display_name"]))
            if row["display_name"] != row["name"]:
                label += f" ({row['name']})"
            if "damaged" in row:
                err = damaged[str(row["name"])]
                print(f"{label:<24} damaged: {err}{error_hint(err)}")
            else:
                print(f"{label:<24} {row['documents']:>6} documents {row['chunks']:>8} chunks")
    return 0
