"""Ingesting reference libraries (BibTeX, CSL-JSON, Zotero) with their metadata (issue 43).

:func:`ingest_sources` is what ``verifai ingest`` and the app's Add run: paths that are
libraries (:func:`verifai_desktop.ingest.library.is_library`) are read entry by entry, every
other path goes to :func:`~verifai_desktop.store.writer.ingest_paths` as before. For a library:

1. its entries are read (:func:`~verifai_desktop.ingest.library.read_library`);
2. each entry's metadata is kept in the catalog for each of its attached files, before the
   files are read, so that they are indexed with their ``author``, ``title`` and ``year``
   fields (:meth:`Collection.set_references`); an entry whose metadata changed while its file
   did not has its lexical fields rewritten;
3. the attached files are ingested like any file (skipped when unchanged); they are not added
   to the collection's roots: the library is followed as a whole (:data:`LIBRARIES_KEY`);
4. an entry without a readable file is catalogued as failed under ``"<library>#<key>"``
   with its reason, like any other refusal (``verifai status``, the library panel);
5. documents of entries gone from the library since the last run are removed, as files gone
   from an ingested folder are.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from verifai_desktop.domain import DocStatus
from verifai_desktop.errors import VerifaiError
from verifai_desktop.ingest.bibtex import LibraryEntry
from verifai_desktop.ingest.library import is_library, library_root, read_library
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.reference import Reference
from verifai_desktop.store.catalog import DocumentMeta
from verifai_desktop.store.outcomes import FileOutcome, IngestReport, Outcome
from verifai_desktop.store.roots import now_utc
from verifai_desktop.store.target import IngestTarget
from verifai_desktop.store.writer import Cluster, ProgressFn, ingest_paths

log = logging.getLogger(__name__)

LIBRARIES_KEY = "libraries"
"""Collection metadata key of the libraries a collection follows (``libraries.json``):
``{"<library path>": {"zotero_collection": name or null, "device": st_dev, "last_sync": ISO
8601}}`` (the device tells a deleted library file from one on a disk not mounted, as for
roots)."""


class LibraryTarget(IngestTarget, Protocol):
    """A store that keeps reference-manager entries with its documents (the embedded store)."""

    def set_references(self, items: Sequence[tuple[str, Reference]]) -> None:
        """Keep the entries of sources (catalog and lexical fields); flushes."""
        ...

    def references_of(self, library: str) -> dict[str, Reference]:
        """The entries kept for the sources of one library, by source."""
        ...

    def metadata(self, key: str) -> dict[str, object]:
        """A metadata record of the collection ({} when missing)."""
        ...

    def set_metadata(self, key: str, data: Mapping[str, object]) -> None:
        """Replace a metadata record."""
        ...


class LibraryNotSupported(VerifaiError):
    """A reference library is given to a store that cannot keep its metadata."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is a reference library (BibTeX, CSL-JSON or Zotero); this store cannot "
            "keep its metadata yet: ingest it into an embedded collection (without --store)"
        )


def ingest_sources(
    collection: IngestTarget,
    paths: Sequence[Path],
    *,
    zotero_collection: str | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    **options: Any,
) -> IngestReport:
    """Ingest files, folders and reference libraries into a collection, incrementally.

    Args:
        collection: an opened collection.
        paths: files, folders, ``.bib``/CSL-JSON files and Zotero data folders.
        zotero_collection: read only this collection of a Zotero library.
        progress: as :func:`~verifai_desktop.store.writer.ingest_paths`.
        cancel: as :func:`~verifai_desktop.store.writer.ingest_paths`.
        **options: passed to :func:`~verifai_desktop.store.writer.ingest_paths`
            (``timeout_s``, ``ocr``, ``default_password``, ...).

    Returns:
        One report: every file's outcome (plain paths first, then each library's entries).

    Raises:
        ParseError: a library cannot be read at all (nothing of it is changed).
        LibraryNotSupported: a library is given to a store without reference support.
        Cancelled: ``cancel`` was set.
    """
    libraries = [p for p in paths if is_library(p)]
    plain = [p for p in paths if not is_library(p)]
    reports = []
    if plain or not libraries:
        reports.append(ingest_paths(collection, plain, progress=progress, cancel=cancel, **options))
    for path in libraries:
        reports.append(
            ingest_library(
                collection,
                path,
                zotero_collection=zotero_collection,
                progress=progress,
                cancel=cancel,
                **options,
            )
        )
    return merge_reports(reports)


def ingest_library(
    collection: IngestTarget,
    path: Path,
    *,
    zotero_collection: str | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    ocr: OcrOptions | None = None,
    cluster: Cluster | None = None,
    **options: Any,
) -> IngestReport:
    """Ingest one library's entries (see the module docstring); the library is followed.

    Raises:
        ParseError: the library cannot be read.
        LibraryNotSupported: ``collection`` cannot keep reference metadata.
    """
    root = library_root(path)
    if not hasattr(collection, "set_references"):
        raise LibraryNotSupported(root)
    target: LibraryTarget = collection  # type: ignore[assignment]
    entries = read_library(root, zotero_collection=zotero_collection)
    collection.acquire_write_lock()
    _follow(target, root, zotero_collection)
    library = str(root)
    before = target.references_of(library)
    refs: dict[str, Reference] = {}
    for entry in entries:
        for file in entry.files:
            refs.setdefault(str(_as_source(file)), entry.reference)
        if not entry.files:
            refs[entry.source] = entry.reference
    target.set_references(list(refs.items()))
    files = list(dict.fromkeys(_as_source(f) for e in entries for f in e.files))
    report = ingest_paths(
        collection,
        files,
        progress=progress,
        cancel=cancel,
        ocr=ocr,
        cluster=cluster,
        remember=False,
        **options,
    )
    refused = [_refusal(collection, e) for e in entries if not e.files]
    gone = sorted(s for s in before if s not in refs)
    removed = collection.remove_sources(gone) if gone else []
    _synced(target, root)
    outcomes = (
        *report.outcomes,
        *refused,
        *(FileOutcome(s, Outcome.REMOVED) for s in removed),
    )
    return replace(report, outcomes=outcomes, counts=_counts(outcomes))


def _as_source(path: Path) -> Path:
    """An attached file as the catalog names it: resolved, as a file given on its own is
    (``../papers/a.pdf`` in a .bib, a link), so that its entry and its document meet."""
    try:
        return path.expanduser().resolve()
    except OSError:
        return path


def _refusal(collection: IngestTarget, entry: LibraryEntry) -> FileOutcome:
    """Catalog an entry without a readable file as failed with its reason (unchanged: not
    written again)."""
    source = entry.source
    record = collection.catalog.document(source)
    if record is not None and (record.status, record.reason) == (DocStatus.FAILED, entry.reason):
        return FileOutcome(source, Outcome.SKIPPED, entry.reason, stored_status=DocStatus.FAILED)
    title = entry.reference.title or entry.reference.key
    collection.commit([(DocumentMeta(source, title), DocStatus.FAILED, entry.reason, (), None)])
    collection.flush()
    return FileOutcome(source, Outcome.FAILED, entry.reason, stored_status=DocStatus.FAILED)


def _follow(target: LibraryTarget, root: Path, zotero_collection: str | None) -> None:
    """Remember ``root`` as a library the collection follows (folder watching)."""
    followed = dict(target.metadata(LIBRARIES_KEY))
    try:
        device = root.stat().st_dev
    except OSError:
        device = 0
    before = followed.get(str(root))
    wanted = {"zotero_collection": zotero_collection, "device": device}
    if not isinstance(before, dict) or {k: before.get(k) for k in wanted} != wanted:
        followed[str(root)] = wanted
        target.set_metadata(LIBRARIES_KEY, followed)


def _synced(target: LibraryTarget, root: Path) -> None:
    """Record when the library was last read in full (the app lists it with its folders)."""
    followed = dict(target.metadata(LIBRARIES_KEY))
    record = followed.get(str(root))
    if isinstance(record, dict):
        followed[str(root)] = {**record, "last_sync": now_utc()}
        target.set_metadata(LIBRARIES_KEY, followed)


def followed_libraries(collection: IngestTarget) -> dict[Path, str | None]:
    """The libraries a collection follows, with the Zotero collection each is limited to."""
    return {path: name for path, (name, _, _) in library_records(collection).items()}


def library_records(collection: IngestTarget) -> dict[Path, tuple[str | None, int, str]]:
    """The libraries a collection follows: ``{path: (Zotero collection or None, st_dev when
    ingested (0 unknown), when it was last read in full (ISO 8601, UTC; '' never))}``."""
    if not hasattr(collection, "metadata"):
        return {}
    data = collection.metadata(LIBRARIES_KEY)
    out: dict[Path, tuple[str | None, int, str]] = {}
    for path, options in data.items():
        opts = options if isinstance(options, dict) else {}
        name = opts.get("zotero_collection")
        try:
            device = int(opts.get("device") or 0)
        except (TypeError, ValueError):
            device = 0
        out[Path(path)] = (str(name) if name else None, device, str(opts.get("last_sync") or ""))
    return out


def merge_reports(reports: Sequence[IngestReport]) -> IngestReport:
    """Several runs' reports as one (outcomes in order, times added up)."""
    outcomes = tuple(o for r in reports for o in r.outcomes)
    return IngestReport(
        outcomes=outcomes,
        elapsed_ms=sum(r.elapsed_ms for r in reports),
        parse_ms=sum(r.parse_ms for r in reports),
        chunk_ms=sum(r.chunk_ms for r in reports),
        embed_ms=sum(r.embed_ms for r in reports),
        index_ms=sum(r.index_ms for r in reports),
        load_ms=sum(r.load_ms for r in reports),
        counts=_counts(outcomes),
    )


def _counts(outcomes: Sequence[FileOutcome]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status.value] = counts.get(o.status.value, 0) + 1
    return counts
