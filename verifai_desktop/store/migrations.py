"""Upgrades of an existing catalog to the current schema, run when the catalog opens.

Schema 1 -> 2 (issue 13): ``chunks.is_reference`` (1 for a chunk of a reference list or
bibliography). The column is added with ``ALTER TABLE`` and every existing chunk is classified
by :func:`verifai_desktop.ingest.references.reference_flags`, the classifier ingest uses, from
the stored text, heading path and sentence spans, one document at a time in chunk order. The
catalog ``generation`` is not changed: the Tantivy and usearch indexes hold the same chunks
and stay valid.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path

from verifai_desktop.ingest.references import reference_flags

log = logging.getLogger(__name__)

REFERENCE_COLUMN = "is_reference"


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")}


def _classify_references(db: sqlite3.Connection) -> int:
    """Set ``is_reference`` on every chunk; returns how many are reference chunks."""
    doc_ids = [int(r[0]) for r in db.execute("SELECT DISTINCT doc_id FROM chunks")]
    tagged = 0
    for doc_id in doc_ids:
        rows = db.execute(
            "SELECT chunk_id, text, loc_heading, sentence_spans FROM chunks"
            " WHERE doc_id=? ORDER BY ordinal",
            (doc_id,),
        ).fetchall()
        flags = reference_flags(
            [
                (str(text), str(heading), [(int(s), int(e)) for s, e in json.loads(spans)])
                for _, text, heading, spans in rows
            ]
        )
        ids = [(int(row[0]),) for row, flag in zip(rows, flags, strict=True) if flag]
        db.executemany("UPDATE chunks SET is_reference=1 WHERE chunk_id=?", ids)
        tagged += len(ids)
    return tagged


def migrate(db: sqlite3.Connection, path: Path, schema_version: int) -> None:
    """Bring an open catalog up to ``schema_version`` (a no-op when it is current).

    Runs in one ``BEGIN IMMEDIATE`` transaction, so two processes opening an old catalog at
    once migrate it once, and a crash leaves it as it was.

    Args:
        db: the catalog connection (autocommit mode, tables created).
        path: the catalog file, for the log.
        schema_version: the version to record in ``meta``.

    Raises:
        sqlite3.DatabaseError: the catalog cannot be written (the caller reports it).
    """
    if REFERENCE_COLUMN in _columns(db, "chunks"):
        return
    t0 = time.perf_counter()
    db.execute("BEGIN IMMEDIATE")
    try:
        if REFERENCE_COLUMN not in _columns(db, "chunks"):  # another process may have won
            db.execute(
                f"ALTER TABLE chunks ADD COLUMN {REFERENCE_COLUMN} INTEGER NOT NULL DEFAULT 0"
            )
            tagged = _classify_references(db)
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(schema_version),),
            )
            log.info(
                "%s: catalog upgraded to schema %d, %d reference-list chunks tagged (%.0f ms)",
                path,
                schema_version,
                tagged,
                (time.perf_counter() - t0) * 1000.0,
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
