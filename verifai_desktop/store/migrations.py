"""Upgrades of an existing catalog to the current schema, run when the catalog opens.

Each upgrade adds a column to ``chunks`` with ``ALTER TABLE`` and fills it for the existing
chunks with the function ingest uses, from what the catalog stores, so an old collection reads
as if it had been ingested by this version; the steps an old catalog lacks run in order, in one
transaction:

* Schema 1 -> 2 (issue 13): ``chunks.is_reference`` (1 for a chunk of a reference list or
  bibliography), classified by :func:`verifai_desktop.ingest.references.reference_flags` from
  the stored text, heading path and sentence spans, one document at a time in chunk order.
* Schema 2 -> 3: ``chunks.instruction_cues`` (a JSON list of the phrases that read as
  instructions to an AI, ``[]`` for ordinary text), found by
  :func:`verifai_desktop.ingest.injection.instruction_cues` in the stored text, as
  :meth:`Catalog.write_documents <verifai_desktop.store.catalog.Catalog.write_documents>`
  does for new chunks.
* Schema 3 -> 4 (issue 28): ``chunks.ocr`` (the OCR provenance of recognised text as JSON),
  NULL for every existing chunk: before OCR every chunk came from a text layer.
* Schema 4 -> 5 (issue 43): the ``doc_references`` table (reference-manager entries), created
  empty with the other tables when the catalog opens (``CREATE TABLE IF NOT EXISTS``); only the
  recorded version changes here.

The catalog ``generation`` is not changed: the Tantivy and usearch indexes hold the same chunks
and stay valid.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path

from verifai_desktop.ingest.injection import instruction_cues
from verifai_desktop.ingest.references import reference_flags

log = logging.getLogger(__name__)

REFERENCE_COLUMN = "is_reference"
CUES_COLUMN = "instruction_cues"
OCR_COLUMN = "ocr"


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


def _flag_instructions(db: sqlite3.Connection) -> int:
    """Set ``instruction_cues`` on every chunk from its text; returns how many have cues."""
    flagged = []
    for chunk_id, text in db.execute("SELECT chunk_id, text FROM chunks"):
        cues = instruction_cues(str(text))
        if cues:  # the rest keep the column default, '[]'
            flagged.append((json.dumps(cues), int(chunk_id)))
    db.executemany(f"UPDATE chunks SET {CUES_COLUMN}=? WHERE chunk_id=?", flagged)
    return len(flagged)


def _upgrade(db: sqlite3.Connection) -> list[str]:
    """Add and fill the chunk columns the catalog lacks; returns what was done, for the log
    (empty when nothing was missing)."""
    columns = _columns(db, "chunks")
    done = []
    if REFERENCE_COLUMN not in columns:
        db.execute(f"ALTER TABLE chunks ADD COLUMN {REFERENCE_COLUMN} INTEGER NOT NULL DEFAULT 0")
        done.append(f"{_classify_references(db)} reference-list chunks tagged")
    if CUES_COLUMN not in columns:
        db.execute(f"ALTER TABLE chunks ADD COLUMN {CUES_COLUMN} TEXT NOT NULL DEFAULT '[]'")
        done.append(f"{_flag_instructions(db)} chunks with instruction cues flagged")
    if OCR_COLUMN not in columns:
        db.execute(f"ALTER TABLE chunks ADD COLUMN {OCR_COLUMN} TEXT")
        done.append("OCR provenance column added")
    return done


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
    if {REFERENCE_COLUMN, CUES_COLUMN, OCR_COLUMN} <= _columns(db, "chunks"):
        db.execute(  # schema 5 added a table only, made when the catalog opened
            "UPDATE meta SET value=? WHERE key='schema_version' AND CAST(value AS INTEGER) < ?",
            (str(schema_version), schema_version),
        )
        return
    t0 = time.perf_counter()
    db.execute("BEGIN IMMEDIATE")
    try:
        done = _upgrade(db)  # nothing when another process has won
        if done:
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(schema_version),),
            )
            log.info(
                "%s: catalog upgraded to schema %d, %s (%.0f ms)",
                path,
                schema_version,
                ", ".join(done),
                (time.perf_counter() - t0) * 1000.0,
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
