"""Which paths given to ingest are reference libraries, and reading them.

A *library* is a BibTeX file (``.bib``), a CSL-JSON file (``.json`` holding CSL items) or a
Zotero data folder (:func:`verifai_desktop.ingest.zotero.is_zotero`); its entries' attached
files are ingested with the entries' metadata (:mod:`verifai_desktop.store.library`).
"""

from __future__ import annotations

from pathlib import Path

from verifai_desktop.ingest.bibtex import LibraryEntry, read_bibtex, read_csl_json
from verifai_desktop.ingest.zotero import data_folder, is_zotero, read_zotero

LIBRARY_SUFFIXES = frozenset({".bib", ".json"})
"""Suffixes of library files (a ``.json`` file must hold CSL-JSON)."""


def is_library(path: Path) -> bool:
    """Whether ``path`` is read as a reference library rather than as a document."""
    if is_zotero(path):
        return True
    try:
        return path.suffix.lower() in LIBRARY_SUFFIXES and path.is_file()
    except OSError:
        return False


def library_root(path: Path) -> Path:
    """The path a library is known by (and followed as): the file, or the Zotero folder."""
    resolved = path.expanduser().resolve()
    return data_folder(resolved) if is_zotero(resolved) else resolved


def read_library(path: Path, *, zotero_collection: str | None = None) -> list[LibraryEntry]:
    """The entries of a library, each with its metadata and readable attached files.

    Args:
        path: a ``.bib`` or CSL-JSON file, or a Zotero data folder (or its database).
        zotero_collection: for a Zotero library, only the items of this collection.

    Raises:
        ParseError: the library cannot be read (its message names the file and why).
    """
    root = library_root(path)
    if is_zotero(root):
        return read_zotero(root, collection=zotero_collection)
    if root.suffix.lower() == ".json":
        return read_csl_json(root)
    return read_bibtex(root)
