"""Following reference libraries: a watched ``.bib``/CSL-JSON file or Zotero folder (issue 43).

A library ingested into a collection is followed as a whole (its path is kept in the
``libraries`` metadata record, :data:`~verifai_desktop.store.library.LIBRARIES_KEY`), not through
its attached files. Folder watching (:mod:`verifai_desktop.store.watch`) watches it as a root
(:func:`library_roots`: the file itself, or the Zotero data folder recursively, which holds the
database and ``storage/``), and :func:`sync_libraries` runs the library's ingest again when a
change touches it: added entries are ingested, changed ones have their metadata (and changed
files) taken in, removed ones have their documents removed
(:func:`~verifai_desktop.store.library.ingest_library`).

A library that cannot be reached (missing, on another disk) or read (a half-written database, a
broken ``.bib``) is reported as unavailable and nothing of it is removed. A library file deleted
from a folder that is still there is taken as deleted: its documents are removed and it is no
longer followed, as a deleted single-file root is.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from verifai_desktop.errors import Cancelled, VerifaiError
from verifai_desktop.ingest.library import LIBRARY_SUFFIXES
from verifai_desktop.ingest.zotero import is_zotero
from verifai_desktop.store.library import (
    LIBRARIES_KEY,
    LibraryTarget,
    followed_libraries,
    ingest_library,
    library_records,
)
from verifai_desktop.store.outcomes import IngestReport
from verifai_desktop.store.roots import Root, deleted_file, unavailable_reason

log = logging.getLogger(__name__)


def library_roots(collection: LibraryTarget) -> list[Root]:
    """What to watch for the libraries ``collection`` follows: a library file as a single-file
    root, a Zotero data folder as a folder root (its database and ``storage/``)."""
    out = []
    for path, (_, device, last_sync) in library_records(collection).items():
        is_folder = path.is_dir() or (device != 0 and path.suffix.lower() not in LIBRARY_SUFFIXES)
        out.append(Root(path, is_folder, device, last_sync=last_sync))
    return out


def _touches(library: Path, changed: Iterable[Path], is_folder: bool) -> bool:
    for path in changed:
        if path == library or library.is_relative_to(path):
            return True  # the file itself, or a folder holding it (moved, replaced)
        if is_folder and path.is_relative_to(library):
            return True  # the Zotero database, its journal, or a file under storage/
    return False


def sync_libraries(
    collection: LibraryTarget,
    changed: Iterable[Path] | None,
    **options: Any,
) -> tuple[list[IngestReport], list[str], list[tuple[Path, str]]]:
    """Bring ``collection`` in step with the libraries it follows.

    Args:
        collection: an opened collection holding the write lock (the caller's sync took it).
        changed: paths reported changed (a library is synced when one of them is its file, a
            folder holding it, or a path inside its Zotero folder), or None to sync every
            library (catching up).
        **options: passed to :func:`~verifai_desktop.store.library.ingest_library`
            (``progress``, ``cancel``, ``timeout_s``, ``ocr``, ...).

    Returns:
        ``(reports, removed, unavailable)``: one ingest report per library synced, the
        sources removed because their library file was deleted, and the libraries that could
        not be synced with the reason (nothing of them removed).

    Raises:
        Cancelled: ``options["cancel"]`` was set.
    """
    wanted = list(changed) if changed is not None else None
    libraries = followed_libraries(collection)
    reports: list[IngestReport] = []
    removed: list[str] = []
    unavailable: list[tuple[Path, str]] = []
    for root in library_roots(collection):
        if wanted is not None and not _touches(root.path, wanted, root.is_folder):
            continue
        gone = _deleted(root)
        if gone:
            removed += _forget(collection, root.path)
            continue
        reason = unavailable_reason(root)
        if reason is None and root.is_folder and not is_zotero(root.path):
            reason = "no Zotero database in it any more (zotero.sqlite missing)"
        if reason is not None:
            unavailable.append((root.path, reason))
            log.warning("%s: %s; nothing of it is removed", root.path, reason)
            continue
        try:
            reports.append(
                ingest_library(
                    collection, root.path, zotero_collection=libraries[root.path], **options
                )
            )
        except Cancelled:
            raise
        except VerifaiError as exc:
            unavailable.append((root.path, str(exc)))
            log.warning("%s: %s; nothing of it is removed", root.path, exc)
    return reports, removed, unavailable


def _deleted(root: Root) -> bool:
    """A library file deleted from its folder (which is still there, on the same disk)."""
    return deleted_file(root)


def _forget(collection: LibraryTarget, library: Path) -> list[str]:
    """Remove a deleted library's documents and stop following it; returns the sources."""
    sources = sorted(collection.references_of(str(library)))
    removed = collection.remove_sources(sources) if sources else []
    followed = dict(collection.metadata(LIBRARIES_KEY))
    followed.pop(str(library), None)
    collection.set_metadata(LIBRARIES_KEY, followed)
    log.info("%s: deleted; its %d documents removed", library, len(removed))
    return list(removed)
