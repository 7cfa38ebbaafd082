"""Collection folders on disk, used without opening a collection.

Layout of ``collections_dir()/<folder>/``: ``catalog.sqlite`` (:data:`CATALOG_FILE`, the
SQLite catalog, the single source of truth), ``lexical/`` with ``lexical.json`` and
``vectors.usearch`` with ``vectors.json`` (the search indexes and their generation sidecars,
:mod:`verifai_desktop.store.indexes`), ``collection.toml`` (embedder name, creation time,
display name: :mod:`verifai_desktop.store.naming`), ``write.lock`` (:data:`LOCK_FILE`, held
by the one process writing the collection), ``history.sqlite`` (the answer history,
:mod:`verifai_desktop.store.history`) and ``<key>.json`` metadata records (e.g. ``roots.json``,
``beir_corpus.json``).

Here: the configuration of a new collection, metadata records, and listing, finding,
renaming and deleting collections and opening their history by name. An opened collection
is :class:`verifai_desktop.store.collection.Collection`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from pathlib import Path

from verifai_desktop.errors import CollectionBusy, CollectionExists, CollectionNotFound
from verifai_desktop.index.embedder import canonical_name, check_embedder
from verifai_desktop.private import make_private_dir
from verifai_desktop.settings import collections_dir, data_root
from verifai_desktop.store.history import History
from verifai_desktop.store.indexes import SIDECARS
from verifai_desktop.store.lock import FileLock
from verifai_desktop.store.naming import (
    find,
    folder_for_new,
    is_folder_name,
    list_folders,
    read_config,
    slug,
    validate_display_name,
    write_config,
)

CATALOG_FILE = "catalog.sqlite"
LOCK_FILE = "write.lock"

_METADATA_KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def write_new_config(path: Path, embedder: str, display_name: str | None = None) -> None:
    """Create the folder of a new collection and its ``collection.toml`` (atomically: temp
    file, then rename).

    Args:
        path: the folder.
        embedder: the embedder's name or path (recorded canonical).
        display_name: the name the user gave it, when it is no folder name.

    Raises:
        ModelNotFound: the embedder is not on this machine; nothing is created.
    """
    check_embedder(embedder)
    make_private_parents()
    make_private_dir(path)
    config: dict[str, object] = {
        "embedder": canonical_name(embedder),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "format": 1,
    }
    if display_name is not None:
        config["display_name"] = display_name
    write_config(path, config)


def make_private_parents() -> None:
    """Make the data root and the collections folder user-only (created if missing)."""
    make_private_dir(data_root())
    make_private_dir(collections_dir())


def metadata_path(folder: Path, key: str) -> Path:
    """The file of metadata record ``key`` in a collection folder (``<key>.json``).

    Raises:
        ValueError: ``key`` is not lowercase letters, digits and ``_`` (at most 40, starting
            with a letter), or names an index sidecar.
    """
    if not _METADATA_KEY_RE.match(key) or key in SIDECARS:
        raise ValueError(f"invalid collection metadata key {key!r}")
    return folder / f"{key}.json"


def read_metadata(folder: Path, key: str) -> dict[str, object]:
    """The metadata record ``key`` of a collection folder (a JSON object); empty when never
    written or unreadable.

    Raises:
        ValueError: bad ``key`` (see :func:`metadata_path`).
    """
    path = metadata_path(folder, key)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def list_collections() -> list[str]:
    """Folder names of the existing collections, sorted (:func:`naming.list_names` gives
    their display names too)."""
    return sorted(p.name for p in list_folders())


def collection_metadata(name: str, key: str) -> dict[str, object]:
    """:meth:`Collection.metadata` of a collection without opening it (empty if it is missing).

    Raises:
        InvalidCollectionName: bad name.
        ValueError: bad ``key``.
    """
    found = find(name)
    if found is None:
        folder_for_new(name)  # InvalidCollectionName for a name no collection can have
        return {}
    return read_metadata(collections_dir() / found.folder, key)


def collection_history(name: str) -> History:
    """:meth:`Collection.history` of a collection without opening it (its catalog is not read
    and its write lock not taken, so the history is read and written while an ingest runs);
    the caller closes it (``with collection_history(name) as history: ...``).

    Args:
        name: the collection's folder or display name.

    Raises:
        InvalidCollectionName: bad name.
        CollectionNotFound: no such collection.
        IndexCorrupt: its history file is damaged.
        BadRecord: another writer kept the history locked too long.
    """
    return History(existing_path(name))


def existing_path(name: str) -> Path:
    """The folder of an existing collection, named by its folder or display name.

    Raises:
        InvalidCollectionName: bad name.
        CollectionNotFound: no such collection.
    """
    found = find(name)
    if found is None:
        folder_for_new(name)  # InvalidCollectionName first
        raise CollectionNotFound(name)
    return collections_dir() / found.folder


def delete_collection(name: str) -> None:
    """Delete a collection and all its files.

    Raises:
        CollectionNotFound: no such collection.
        CollectionBusy: it is being written.
    """
    path = existing_path(name)
    lock = FileLock(path / LOCK_FILE)
    if not lock.try_acquire():
        raise CollectionBusy(name)
    try:
        shutil.rmtree(path)
    finally:
        lock.release()


def rename_collection(old: str, new: str) -> str:
    """Give a collection a new name; returns its folder name afterwards.

    The folder follows the name where it can: a valid folder name becomes the folder, any
    other name gets a folder made from it (:func:`naming.slug`) and is recorded as the display
    name. The catalog, indexes and settings inside the folder are untouched.

    Raises:
        CollectionNotFound: ``old`` does not exist.
        InvalidCollectionName: ``new`` cannot name a collection.
        CollectionExists: another collection has that name (folder or display name).
        CollectionBusy: it is being written.
    """
    path = existing_path(old)
    display = validate_display_name(new)
    other = find(display)
    if other is not None and other.folder != path.name:
        raise CollectionExists(new)
    if is_folder_name(display):
        folder, recorded = display, None
    elif slug(display) == path.name:
        folder, recorded = path.name, display
    else:
        folder, recorded = folder_for_new(display)
    target = collections_dir() / folder
    if folder != path.name and target.exists():
        raise CollectionExists(new)
    lock = FileLock(path / LOCK_FILE)
    if not lock.try_acquire():
        raise CollectionBusy(old)
    try:
        config = read_config(path)
        config.pop("display_name", None)
        if recorded is not None:
            config["display_name"] = recorded
        write_config(path, config)
        if folder != path.name:
            os.rename(path, target)
    finally:
        lock.release()
    return folder
