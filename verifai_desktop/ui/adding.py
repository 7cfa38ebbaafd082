"""Where the documents added to a collection come from: the file and folder pickers, and the
local files and folders of a drag and drop (the library panel ingests what they give). A
``.bib`` or CSL-JSON file, or a Zotero data folder (or its ``zotero.sqlite``), is a reference
library: its entries' files are added with their metadata (issue 43)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QMimeData
from PySide6.QtWidgets import QFileDialog, QWidget

DOCUMENTS_FILTER = (
    "Documents and libraries (*.pdf *.docx *.pptx *.epub *.md *.markdown *.txt *.bib *.json "
    "zotero.sqlite);;Documents (*.pdf *.docx *.pptx *.epub *.md *.markdown *.txt);;"
    "Reference libraries: BibTeX, CSL-JSON, Zotero (*.bib *.json zotero.sqlite);;All files (*)"
)


def pick_files(parent: QWidget) -> list[Path]:
    """Files picked with a dialog (none when cancelled)."""
    files, _ = QFileDialog.getOpenFileNames(
        parent, "Add documents", str(Path.home()), DOCUMENTS_FILTER
    )
    return [Path(f) for f in files]


def pick_folder(parent: QWidget) -> list[Path]:
    """The folder picked with a dialog, as a list of one (none when cancelled)."""
    folder = QFileDialog.getExistingDirectory(
        parent, "Add a folder of documents, or a Zotero data folder", str(Path.home())
    )
    return [Path(folder)] if folder else []


def dropped_paths(mime: QMimeData) -> list[Path]:
    """The local files and folders dragged (URLs of other kinds left out)."""
    if not mime.hasUrls():
        return []
    return [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile()]


NEW_COLLECTION_TITLE = "New collection"
NEW_COLLECTION_LABEL = (
    "No collection is open, so these documents go into a new one. Its name (you can rename "
    "it later):"
)


def suggested_collection_name(paths: Sequence[Path]) -> str:
    """The name offered for a new collection made from ``paths``: the folder's name for one
    folder, the folder the files are in when they share one, else ``"Documents"``."""
    if not paths:
        return "Documents"
    if len(paths) == 1 and paths[0].is_dir():
        return paths[0].resolve().name or "Documents"
    parents = {(p if p.is_dir() else p.parent).resolve() for p in paths}
    if len(parents) == 1:
        return next(iter(parents)).name or "Documents"
    return "Documents"
