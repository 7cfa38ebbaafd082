"""The roots of a collection: the folders and files it was built from, which it follows.

Every ingest of paths adds them to the collection's roots (:func:`remember_roots`, called by
:func:`verifai_desktop.store.writer.ingest_paths`); removing a path from the collection stops
following it (:func:`forget_roots`). They are kept in the collection's ``roots`` metadata record
(``roots.json`` in its folder), with the device each was on and the outcome of its last sync.
Folder watching (:mod:`verifai_desktop.store.watch`) watches and syncs them.

A root that cannot be reached (a disk unmounted, a network share gone, a folder renamed) is
reported as unavailable (:func:`unavailable_reason`), so that nothing under it is removed: a
vanished folder is never taken for "every file deleted". A single file deleted from a folder that
is still there (:func:`deleted_file`) is removed from the collection and no longer followed.
"""

from __future__ import annotations

import datetime as dt
import logging
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifai_desktop.store.base import CollectionStore

log = logging.getLogger(__name__)

ROOTS_KEY = "roots"
"""Collection metadata key of the roots (``roots.json`` in the collection folder)."""


def now_utc() -> str:
    """The current time as roots record it: ISO 8601, UTC, to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Root:
    """A folder or file a collection was built from.

    Attributes:
        path: absolute, resolved path.
        is_folder: a folder (watched recursively) or a single file.
        device: ``st_dev`` of the path when it was added (0 when unknown).
        added: when it was first ingested (ISO 8601, UTC).
        last_sync: when the collection was last brought in step with it ('' never).
        status: ``"ok"``, or why it could not be synced last time.
    """

    path: Path
    is_folder: bool
    device: int = 0
    added: str = ""
    last_sync: str = ""
    status: str = "ok"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (as stored in ``roots.json``)."""
        return {
            "path": str(self.path),
            "is_folder": self.is_folder,
            "device": self.device,
            "added": self.added,
            "last_sync": self.last_sync,
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Root:
        """The inverse of :meth:`as_dict`; raises ``KeyError``/``TypeError`` when malformed."""
        return cls(
            Path(data["path"]),
            bool(data["is_folder"]),
            int(data.get("device", 0)),
            str(data.get("added", "")),
            str(data.get("last_sync", "")),
            str(data.get("status", "ok")),
        )


def read_roots(metadata: dict[str, object]) -> list[Root]:
    """The roots in a collection's ``roots`` metadata record (malformed entries skipped)."""
    out = []
    entries = metadata.get("roots", [])
    for entry in entries if isinstance(entries, list) else []:
        try:
            out.append(Root.from_dict(entry))
        except (KeyError, TypeError, ValueError):
            log.warning("ignoring a malformed root entry: %r", entry)
    return out


def roots_of(collection: CollectionStore) -> list[Root]:
    """The folders and files ``collection`` was built from."""
    return read_roots(collection.metadata(ROOTS_KEY))


def save_roots(collection: CollectionStore, roots: Sequence[Root]) -> None:
    """Replace ``collection``'s roots.

    Raises:
        CollectionBusy: another process is writing the collection.
    """
    collection.set_metadata(ROOTS_KEY, {"roots": [r.as_dict() for r in roots]})


def remember_roots(collection: CollectionStore, paths: Sequence[Path]) -> None:
    """Add the existing ``paths`` to the collection's roots (resolved; a path already under a
    folder root adds nothing). Needs the write lock (the ingest holds it)."""
    roots = roots_of(collection)
    changed = False
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        try:
            st = path.stat()
        except OSError:
            continue
        if any(r.path == path or (r.is_folder and path.is_relative_to(r.path)) for r in roots):
            continue
        is_folder = path.is_dir()
        if is_folder:  # a new folder root takes in the roots below it
            roots = [r for r in roots if not r.path.is_relative_to(path)]
        roots.append(Root(path, is_folder, st.st_dev, now_utc(), now_utc()))
        changed = True
    if changed:
        save_roots(collection, roots)


def forget_roots(collection: CollectionStore, path: Path) -> bool:
    """Stop following ``path`` and every root under it (the user removed it from the
    collection). Returns True when a root was forgotten."""
    forms = {Path(path).expanduser().absolute(), Path(path).expanduser().resolve()}
    roots = roots_of(collection)
    keep = [r for r in roots if not any(r.path.is_relative_to(p) for p in forms)]
    if len(keep) == len(roots):
        return False
    save_roots(collection, keep)
    return True


def deleted_file(root: Root) -> bool:
    """Whether ``root`` is a single file that was deleted: the file is gone while the folder
    holding it is there, on the disk the file was added from. A file whose folder is gone too,
    or is on another disk now (the empty mount point of a disk not mounted), was not deleted:
    it is unavailable (:func:`unavailable_reason`)."""
    if root.is_folder or not root.device:
        return False
    try:
        root.path.stat()
    except FileNotFoundError:
        try:
            folder = root.path.parent.stat()
        except OSError:
            return False
        return stat.S_ISDIR(folder.st_mode) and folder.st_dev == root.device
    except OSError:
        pass  # cannot tell (e.g. the folder cannot be searched): not deleted
    return False


def unavailable_reason(root: Root) -> str | None:
    """Why ``root`` cannot be synced now, or None when it can: it is missing, no longer a
    folder, or on another device than when it was added (the empty mount point of a disk not
    mounted, which would otherwise read as "every file deleted")."""
    try:
        st = root.path.stat()
    except FileNotFoundError:
        return "missing (a disk or share not connected, or the folder moved?)"
    except OSError as exc:
        return f"cannot be reached ({(exc.strerror or str(exc)).lower()})"
    if root.is_folder and not root.path.is_dir():
        return "no longer a folder"
    if root.device and st.st_dev != root.device:
        return "on another disk than when it was added (a disk not mounted?)"
    return None
