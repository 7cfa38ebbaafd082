"""A Zotero data folder as a source: its items, creators, dates, collections and attachments.

``verifai ingest ~/Zotero`` recognises the folder by its ``zotero.sqlite`` (:func:`is_zotero`)
and reads the database read-only and immutable (``file:...?mode=ro&immutable=1``): Zotero holds
an exclusive lock on it while it runs, and an immutable read takes no lock and never writes, so
it reads the last committed state whether Zotero is running or not (changes Zotero still holds
in its ``-wal`` file are not seen until Zotero checkpoints them, at the latest when it quits).

The tables and their meaning follow Zotero's own schema (``resource/schema/userdata.sql`` of
github.com/zotero/zotero, the copy under ``tests/data/library/`` with its licence): an item
(``items``) has a type (``itemTypesCombined``), field values (``itemData`` -> ``fieldsCombined``,
``itemDataValues``), creators in order (``itemCreators`` -> ``creators``, ``creatorTypes``;
``fieldMode`` 1 is a one-field name) and child attachments (``itemAttachments``, whose
``linkMode`` 0 and 1 are files stored under ``storage/<attachment key>/`` with the path
``storage:<name>``, 2 a linked file by absolute path; ``attachments:<relative>`` is relative to
Zotero's base folder, a preference outside the data folder, which is not read); items in the
trash (``deletedItems``) are left out; ``collections`` and ``collectionItems`` say which items a
collection (with its subcollections) holds. The item's ``citationKey`` field (Zotero 7, filled by
Better BibTeX) is its key when set, else Zotero's item key.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.bibtex import LibraryEntry, csl_to_bibtex, entry_files
from verifai_desktop.reference import Reference

DATABASE = "zotero.sqlite"

_CSL_TYPES = {
    "journalArticle": "article-journal",
    "conferencePaper": "paper-conference",
    "book": "book",
    "bookSection": "chapter",
    "thesis": "thesis",
    "report": "report",
    "preprint": "article",
    "webpage": "webpage",
    "manuscript": "manuscript",
    "magazineArticle": "article-magazine",
    "newspaperArticle": "article-newspaper",
}
_CSL_FIELDS = {
    "title": "title",
    "publicationTitle": "container-title",
    "proceedingsTitle": "container-title",
    "bookTitle": "container-title",
    "volume": "volume",
    "issue": "issue",
    "pages": "page",
    "DOI": "DOI",
    "url": "URL",
    "publisher": "publisher",
    "place": "publisher-place",
    "ISBN": "ISBN",
    "ISSN": "ISSN",
    "abstractNote": "abstract",
}
_SKIPPED_TYPES = frozenset({"attachment", "note", "annotation"})
_STORED = (0, 1)  # LINK_MODE_IMPORTED_FILE, LINK_MODE_IMPORTED_URL
_LINKED = 2  # LINK_MODE_LINKED_FILE


def is_zotero(path: Path) -> bool:
    """Whether ``path`` is a Zotero data folder (holds ``zotero.sqlite``) or that database."""
    try:
        if path.is_dir():
            return (path / DATABASE).is_file()
        return path.name == DATABASE and path.is_file()
    except OSError:
        return False


def data_folder(path: Path) -> Path:
    """The data folder of a Zotero path (the folder itself, or the database's folder)."""
    return path if path.is_dir() else path.parent


def connect_immutable(database: Path) -> sqlite3.Connection:
    """A read-only, immutable connection to a SQLite file: no lock taken, nothing written.

    Raises:
        ParseError: the file cannot be opened as SQLite.
    """
    uri = f"{database.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise ParseError(database, f"not a readable SQLite database ({exc})") from exc
    return db


def _date_parts(value: str) -> list[int]:
    """Zotero's SQL date (``"2020-06-00 June 2020"``: year-month-day, zeros unknown, then
    the text as typed) as CSL date parts."""
    head = value.split(" ", 1)[0]
    parts = []
    for piece in head.split("-")[:3]:
        if not piece.isdigit() or int(piece) == 0:
            break
        parts.append(int(piece))
    return parts


def _collection_items(db: sqlite3.Connection, name: str, database: Path) -> set[int]:
    """Item ids of the collections named ``name`` and their subcollections.

    Raises:
        ParseError: no collection has that name (the message lists the names there are).
    """
    rows = db.execute("SELECT collectionID, collectionName, parentCollectionID FROM collections")
    children: dict[int | None, list[int]] = defaultdict(list)
    chosen = []
    names = []
    for cid, cname, parent in rows:
        children[parent].append(int(cid))
        names.append(str(cname))
        if str(cname) == name:
            chosen.append(int(cid))
    if not chosen:
        known = ", ".join(sorted(set(names))) or "none"
        raise ParseError(database, f"no Zotero collection named {name!r} (collections: {known})")
    todo, seen = list(chosen), set()
    while todo:
        cid = todo.pop()
        if cid not in seen:
            seen.add(cid)
            todo.extend(children.get(cid, []))
    marks = ",".join("?" * len(seen))
    sql = f"SELECT itemID FROM collectionItems WHERE collectionID IN ({marks})"
    return {int(r[0]) for r in db.execute(sql, list(seen))}


def read_zotero(path: Path, *, collection: str | None = None) -> list[LibraryEntry]:
    """The regular items of a Zotero data folder with their metadata and attached files.

    Args:
        path: the data folder (or its ``zotero.sqlite``).
        collection: only the items of the Zotero collection of this name (and of its
            subcollections); ``None``: every item of the library.

    Returns:
        One entry per item not in the trash, in item id order; its files are its attachments
        stored in ``storage/`` or linked by absolute path that exist and are of a format VerifAI
        reads; an item without one carries the reason.

    Raises:
        ParseError: the database cannot be read, is not a Zotero database, or ``collection``
            names no collection.
    """
    folder = data_folder(path)
    database = folder / DATABASE
    db = connect_immutable(database)
    try:
        return _read(db, folder, database, collection)
    except sqlite3.DatabaseError as exc:
        raise ParseError(database, f"not a Zotero database this version reads ({exc})") from exc
    finally:
        db.close()


def _read(
    db: sqlite3.Connection, folder: Path, database: Path, collection: str | None
) -> list[LibraryEntry]:
    deleted = {int(r[0]) for r in db.execute("SELECT itemID FROM deletedItems")}
    items = [
        (int(i), str(key), str(kind))
        for i, key, kind in db.execute(
            "SELECT i.itemID, i.key, t.typeName FROM items i"
            " JOIN itemTypesCombined t ON t.itemTypeID = i.itemTypeID ORDER BY i.itemID"
        )
    ]
    wanted = None if collection is None else _collection_items(db, collection, database)
    fields: dict[int, dict[str, str]] = defaultdict(dict)
    for item_id, name, value in db.execute(
        "SELECT d.itemID, f.fieldName, v.value FROM itemData d"
        " JOIN fieldsCombined f ON f.fieldID = d.fieldID"
        " JOIN itemDataValues v ON v.valueID = d.valueID"
    ):
        fields[int(item_id)][str(name)] = str(value)
    creators: dict[int, list[tuple[str, dict[str, str]]]] = defaultdict(list)
    for item_id, first, last, mode, role in db.execute(
        "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, t.creatorType"
        " FROM itemCreators ic JOIN creators c ON c.creatorID = ic.creatorID"
        " JOIN creatorTypes t ON t.creatorTypeID = ic.creatorTypeID"
        " ORDER BY ic.itemID, ic.orderIndex"
    ):
        if mode == 1:
            name = {"literal": str(last or "")}
        else:
            name = {"family": str(last or ""), "given": str(first or "")}
        creators[int(item_id)].append((str(role), name))
    keys = {item_id: key for item_id, key, _ in items}
    attachments: dict[int, list[Path]] = defaultdict(list)
    for item_id, parent, mode, stored in db.execute(
        "SELECT itemID, parentItemID, linkMode, path FROM itemAttachments"
        " WHERE parentItemID IS NOT NULL ORDER BY itemID"
    ):
        if int(item_id) in deleted or not stored:
            continue
        text = str(stored)
        if mode in _STORED and text.startswith("storage:"):
            attachments[int(parent)].append(folder / "storage" / keys[int(item_id)] / text[8:])
        elif mode == _LINKED and not text.startswith("attachments:"):
            attachments[int(parent)].append(Path(text))
    out = []
    for item_id, key, kind in items:
        if kind in _SKIPPED_TYPES or item_id in deleted:
            continue
        if wanted is not None and item_id not in wanted:
            continue
        item = _csl_item(fields[item_id].get("citationKey") or key, kind, fields[item_id])
        for role, name in creators[item_id]:
            if role in ("author", "editor"):
                item.setdefault(role, []).append(name)
        ref = Reference.from_item(item, bibtex=csl_to_bibtex(item), library=str(folder))
        files, reason = entry_files(str(item["id"]), attachments[item_id], database)
        out.append(LibraryEntry(ref, files, reason))
    return out


def _csl_item(key: str, kind: str, fields: dict[str, str]) -> dict[str, Any]:
    item: dict[str, Any] = {"id": key, "type": _CSL_TYPES.get(kind, "document")}
    for zotero, csl in _CSL_FIELDS.items():
        if fields.get(zotero) and csl not in item:
            item[csl] = fields[zotero]
    parts = _date_parts(fields.get("date", ""))
    if parts:
        item["issued"] = {"date-parts": [parts]}
    return item
