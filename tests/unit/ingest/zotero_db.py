"""A Zotero data folder built with Zotero's own schema files, for the Zotero reader's tests.

``tests/data/library/zotero-system.sql`` and ``zotero-userdata.sql`` are Zotero's
``resource/schema/system.sql`` and ``userdata.sql`` (see that folder's README for the commit
and licence). Zotero fills the item-type, field and creator-type tables from its global
schema (a JSON file) when it starts; the rows that the three items below need are inserted
here by name, with the ids of Zotero's global schema for those names.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = Path(__file__).resolve().parents[2] / "data" / "library"

ITEM_TYPES = {"book": 7, "conferencePaper": 11, "journalArticle": 22, "attachment": 3}
FIELDS = {
    "title": 1,
    "publicationTitle": 12,
    "date": 6,
    "DOI": 59,
    "proceedingsTitle": 41,
    "publisher": 8,
    "volume": 19,
    "pages": 32,
}
CREATOR_TYPES = {"author": 8, "editor": 10}


def _value(db: sqlite3.Connection, value: str) -> int:
    row = db.execute("SELECT valueID FROM itemDataValues WHERE value=?", (value,)).fetchone()
    if row:
        return int(row[0])
    return int(db.execute("INSERT INTO itemDataValues(value) VALUES (?)", (value,)).lastrowid or 0)


def _item(db: sqlite3.Connection, item_id: int, kind: str, key: str, **fields: str) -> None:
    db.execute(
        "INSERT INTO items(itemID, itemTypeID, libraryID, key) VALUES (?,?,1,?)",
        (item_id, ITEM_TYPES[kind], key),
    )
    for name, value in fields.items():
        db.execute(
            "INSERT INTO itemData(itemID, fieldID, valueID) VALUES (?,?,?)",
            (item_id, FIELDS[name], _value(db, value)),
        )


def _creator(db: sqlite3.Connection, item_id: int, order: int, last: str, first: str) -> None:
    cur = db.execute(
        "INSERT OR IGNORE INTO creators(firstName, lastName, fieldMode) VALUES (?,?,0)",
        (first, last),
    )
    creator_id = cur.lastrowid
    db.execute(
        "INSERT INTO itemCreators(itemID, creatorID, creatorTypeID, orderIndex) VALUES (?,?,?,?)",
        (item_id, creator_id, CREATOR_TYPES["author"], order),
    )


def build_zotero(folder: Path, stored_pdf: Path, linked_pdf: Path) -> Path:
    """A Zotero data folder with three items and two attachments (and one item in the trash).

    * ``AAAA1111`` journal article by Cohan and Feldman (2020), its PDF stored under
      ``storage/PDF11111/`` (a copy of ``stored_pdf``), in collection "Thesis";
    * ``BBBB2222`` conference paper by Lo (2020), a linked file ``linked_pdf`` (absolute), in
      collection "Chapter 2", a subcollection of "Thesis";
    * ``CCCC3333`` book by Weld (2019) without attachment, in no collection;
    * ``DDDD4444`` a journal article in the trash.

    Returns:
        The data folder.
    """
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(folder / "zotero.sqlite"), isolation_level=None)
    for name in ("zotero-system.sql", "zotero-userdata.sql"):  # one transaction each
        db.executescript("BEGIN;" + (SCHEMA / name).read_text(encoding="utf-8") + ";COMMIT;")
    db.execute("BEGIN")
    for name, type_id in ITEM_TYPES.items():
        db.execute("INSERT INTO itemTypes(itemTypeID, typeName) VALUES (?,?)", (type_id, name))
        db.execute(
            "INSERT INTO itemTypesCombined(itemTypeID, typeName, display, custom) VALUES (?,?,1,0)",
            (type_id, name),
        )
    for name, field_id in FIELDS.items():
        db.execute("INSERT INTO fields(fieldID, fieldName) VALUES (?,?)", (field_id, name))
        db.execute(
            "INSERT INTO fieldsCombined(fieldID, fieldName, custom) VALUES (?,?,0)",
            (field_id, name),
        )
    for name, type_id in CREATOR_TYPES.items():
        sql = "INSERT INTO creatorTypes(creatorTypeID, creatorType) VALUES (?,?)"
        db.execute(sql, (type_id, name))
    db.execute(
        "INSERT INTO libraries(libraryID, type, editable, filesEditable) VALUES (1,'user',1,1)"
    )
    _item(
        db, 1, "journalArticle", "AAAA1111",
        title="SPECTER: Document-level Representation Learning", date="2020-07-00 July 2020",
        publicationTitle="Proceedings of ACL", DOI="10.18653/v1/2020.acl-main.207",
    )  # fmt: skip
    _creator(db, 1, 0, "Cohan", "Arman")
    _creator(db, 1, 1, "Feldman", "Sergey")
    _item(db, 2, "conferencePaper", "BBBB2222", title="S2ORC", date="2020-00-00 2020")
    _creator(db, 2, 0, "Lo", "Kyle")
    _item(db, 3, "book", "CCCC3333", title="A Book Without Files", date="2019")
    _creator(db, 3, 0, "Weld", "Daniel")
    _item(db, 4, "journalArticle", "DDDD4444", title="Trashed", date="2018")
    db.execute("INSERT INTO deletedItems(itemID) VALUES (4)")
    _item(db, 10, "attachment", "PDF11111", title="Full Text PDF")
    db.execute(
        "INSERT INTO itemAttachments(itemID, parentItemID, linkMode, contentType, path)"
        " VALUES (10, 1, 1, 'application/pdf', 'storage:paper.pdf')"
    )
    _item(db, 11, "attachment", "PDF22222", title="Linked PDF")
    db.execute(
        "INSERT INTO itemAttachments(itemID, parentItemID, linkMode, contentType, path)"
        " VALUES (11, 2, 2, 'application/pdf', ?)",
        (str(linked_pdf),),
    )
    db.execute(
        "INSERT INTO collections(collectionID, collectionName, libraryID, key)"
        " VALUES (1, 'Thesis', 1, 'COLL0001'), (2, 'Chapter 2', 1, 'COLL0002')"
    )
    db.execute("UPDATE collections SET parentCollectionID=1 WHERE collectionID=2")
    db.execute("INSERT INTO collectionItems(collectionID, itemID) VALUES (1, 1), (2, 2)")
    db.execute("COMMIT")
    db.close()
    storage = folder / "storage" / "PDF11111"
    storage.mkdir(parents=True)
    (storage / "paper.pdf").write_bytes(stored_pdf.read_bytes())
    return folder
