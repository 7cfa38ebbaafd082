"""The document catalog of a collection (SQLite): the single source of truth.

Tables: ``documents`` (one row per source file or benchmark key, with its status), ``chunks``
(text, offsets, location, sentence spans, the reference-list tag, the prompt-injection cues found
in the text when it is written (:func:`verifai_desktop.ingest.injection.instruction_cues`), the
OCR provenance of recognised text and the float32 embedding) and ``meta`` (the catalog
``generation``, incremented in the same transaction as every committed change, and the
``schema_version``). Rows are read out as the store's records
(:mod:`verifai_desktop.store.records`). The Tantivy and usearch indexes are derived from it and
record the generation they reflect (:mod:`verifai_desktop.store.indexes`).
Catalogs of an older schema are upgraded when they open (:mod:`verifai_desktop.store.migrations`).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.domain import (
    Chunk,
    ChunkId,
    DocFormat,
    DocId,
    DocStatus,
    Location,
    LocationKind,
)
from verifai_desktop.errors import IndexCorrupt
from verifai_desktop.ingest.injection import instruction_cues
from verifai_desktop.names import valid_utf8
from verifai_desktop.private import create_private_file
from verifai_desktop.recognition import Recognition
from verifai_desktop.reference import Reference
from verifai_desktop.store.integrity import check_problem
from verifai_desktop.store.migrations import migrate
from verifai_desktop.store.records import ChunkRecord, DocumentRecord

log = logging.getLogger(__name__)

SCHEMA_VERSION = 5
"""1: the first catalogs; 2: ``chunks.is_reference`` (reference-list chunks, issue 13);
3: ``chunks.instruction_cues`` (prompt-injection cues, a JSON list of strings); 4: ``chunks.ocr``
(text recognised by OCR: engine, mean confidence and word boxes as
:meth:`Recognition.to_json <verifai_desktop.recognition.Recognition.to_json>`, NULL for a text
layer; issue 28); 5: the ``doc_references`` table (a source's reference-manager entry,
:meth:`Reference.to_json <verifai_desktop.reference.Reference.to_json>`, and its library;
issue 43)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    sha256 TEXT NOT NULL DEFAULT '',
    size_bytes INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    format TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    chunk_count INTEGER NOT NULL DEFAULT 0,
    ingested_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id INTEGER NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    loc_kind TEXT NOT NULL,
    loc_number INTEGER,
    loc_heading TEXT NOT NULL DEFAULT '',
    sentence_spans TEXT NOT NULL,
    vector BLOB NOT NULL,
    is_reference INTEGER NOT NULL DEFAULT 0,
    instruction_cues TEXT NOT NULL DEFAULT '[]',
    ocr TEXT
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS doc_references (
    source TEXT PRIMARY KEY,
    library TEXT NOT NULL,
    reference TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """What is known about a source before writing it to the catalog."""

    source: str
    title: str = ""
    sha256: str = ""
    size_bytes: int = 0
    mtime_ns: int = 0
    format: DocFormat | None = None


CommitItem = tuple[DocumentMeta, DocStatus, str, Sequence[Chunk], NDArray[np.float32] | None]
"""One document to write: ``(meta, status, reason, chunks, vectors)``; ``vectors`` is float32,
shape (len(chunks), dim), L2-normalised, or ``None`` when there are no chunks."""

DOC_COLUMNS = (
    "doc_id, source, title, sha256, size_bytes, mtime_ns, format, status, reason, "
    "chunk_count, ingested_at"
)
"""The ``documents`` columns :func:`document_record` reads, in its order (both stores)."""


def _key(source: str) -> str | bytes:
    """A source as the catalog stores it: its text, or its raw bytes (a BLOB) when it is a path
    whose name is not valid UTF-8 (decoded with ``surrogateescape``, which SQLite text cannot
    hold). Text and BLOB values never compare equal, so the two forms cannot collide."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(source)
    return source


def _source(value: object) -> str:
    """The source a stored ``source`` value stands for (the inverse of :func:`_key`)."""
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


def document_values(
    meta: DocumentMeta, status: DocStatus, reason: str, chunk_count: int, now: float
) -> tuple[object, ...]:
    """A document row's values after its source, as both stores write them: ``(title, sha256,
    size_bytes, mtime_ns, format, status, reason, chunk_count, ingested_at)``."""
    return (
        valid_utf8(meta.title),
        meta.sha256,
        meta.size_bytes,
        meta.mtime_ns,
        meta.format.value if meta.format else None,
        status.value,
        valid_utf8(reason),
        chunk_count,
        now,
    )


def chunk_values(doc_id: int, chunk: Chunk) -> tuple[object, ...]:
    """A chunk row's values before its vector, as both stores write them: ``(doc_id, ordinal,
    text, char_start, char_end, loc_kind, loc_number, loc_heading, sentence_spans)``, the spans
    as JSON text."""
    return (
        doc_id,
        chunk.ordinal,
        chunk.text,
        chunk.char_start,
        chunk.char_end,
        chunk.location.kind.value,
        chunk.location.number,
        chunk.location.heading,
        json.dumps([list(s) for s in chunk.sentence_spans]),
    )


def document_record(row: Sequence[Any]) -> DocumentRecord:
    """A row of :data:`DOC_COLUMNS` as a record (both stores)."""
    fmt = row[6]
    return DocumentRecord(
        doc_id=DocId(int(row[0])),
        source=_source(row[1]),
        title=str(row[2]),
        sha256=str(row[3]),
        size_bytes=int(row[4]),
        mtime_ns=int(row[5]),
        format=DocFormat(fmt) if fmt else None,
        status=DocStatus(str(row[7])),
        reason=str(row[8]),
        chunk_count=int(row[9]),
        ingested_at=float(row[10]),
    )


class Catalog:
    """SQLite catalog of one collection (WAL journal, one writer at a time).

    Opening an existing catalog runs SQLite's ``PRAGMA quick_check`` (about 40 ms on a
    20 MB, 5,000-chunk catalog), so a damaged file is reported when the collection opens rather
    than as a crash in the middle of a search; :meth:`check` runs the full check on demand.

    Args:
        path: the ``catalog.sqlite`` file.
        create: create the catalog if the file is missing; when False, a missing or empty
            (0-byte) file is damage, not a new collection.

    Raises:
        IndexCorrupt: the file is missing (``create`` False), empty, not a SQLite database,
            fails the quick check or lacks the catalog's tables.
    """

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        if not create:
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                raise IndexCorrupt(path, "the catalog file is missing") from None
            if size == 0:
                raise IndexCorrupt(path, "the catalog file is empty (0 bytes)")
        existed = path.exists() and path.stat().st_size > 0
        try:
            create_private_file(path)  # SQLite gives its -wal and -shm files the same mode
            self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            # Removed documents leave no text in free pages, whatever the build's default.
            self._db.execute("PRAGMA secure_delete=ON")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=10000")
            if existed:
                self._check("quick_check")
            self._db.executescript(_SCHEMA)
            self._db.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', '0'), "
                "('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
            migrate(self._db, path, SCHEMA_VERSION)
        except sqlite3.DatabaseError as exc:
            self._db_close_quietly()
            raise IndexCorrupt(path, str(exc)) from exc
        except BaseException:  # IndexCorrupt, or an interrupted migration (rolled back)
            self._db_close_quietly()
            raise

    def _db_close_quietly(self) -> None:
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()

    def _check(self, pragma: str) -> None:
        """Run ``PRAGMA quick_check`` or ``integrity_check``; raise on any finding."""
        problem = check_problem(
            self._db, pragma, ("meta", "documents", "chunks"), what="the catalog"
        )
        if problem is not None:
            raise IndexCorrupt(self.path, problem)

    def check(self) -> None:
        """Run SQLite's full ``PRAGMA integrity_check`` on the catalog (reads every page).

        Raises:
            IndexCorrupt: the check found damage (its first findings are in the message).
        """
        try:
            self._check("integrity_check")
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(self.path, str(exc)) from exc

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    # -- meta ----------------------------------------------------------------------------
    def generation(self) -> int:
        """The catalog generation: +1 for every committed change."""
        row = self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0])

    def get_meta(self, key: str) -> str | None:
        """A value from the ``meta`` table."""
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _bump(self) -> int:
        self._db.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'"
        )
        return self.generation()

    # -- documents -----------------------------------------------------------------------
    def document(self, source: str) -> DocumentRecord | None:
        """The row for a source, or ``None``."""
        row = self._db.execute(
            f"SELECT {DOC_COLUMNS} FROM documents WHERE source=?", (_key(source),)
        ).fetchone()
        return None if row is None else document_record(row)

    def documents(self) -> list[DocumentRecord]:
        """Every document row, ordered by source."""
        rows = self._db.execute(f"SELECT {DOC_COLUMNS} FROM documents ORDER BY source").fetchall()
        return [document_record(r) for r in rows]

    def sources_under(self, folder: Path) -> list[str]:
        """Sources that are files inside ``folder`` (recursively)."""
        rows = self._db.execute("SELECT source FROM documents").fetchall()
        sources = (_source(r[0]) for r in rows)
        return [s for s in sources if Path(s).is_relative_to(folder)]

    def chunk_ids_of(self, doc_id: int) -> list[int]:
        """Chunk ids of one document, by ordinal."""
        rows = self._db.execute(
            "SELECT chunk_id FROM chunks WHERE doc_id=? ORDER BY ordinal", (doc_id,)
        ).fetchall()
        return [int(r[0]) for r in rows]

    # -- writes (each one transaction, generation + 1) -------------------------------------
    def write_documents(
        self, items: Sequence[CommitItem]
    ) -> tuple[int, list[tuple[int, list[int], list[int]]]]:
        """Write documents with their chunks and vectors in ONE transaction.

        Each item is ``(meta, status, reason, chunks, vectors)``; ``vectors`` is float32, shape
        (len(chunks), dim), L2-normalised, or ``None`` when there are no chunks. A source that
        already has a row keeps its ``doc_id``; its old chunks are deleted. Each chunk is stored
        with the prompt-injection cues of its text
        (:func:`verifai_desktop.ingest.injection.instruction_cues`), found here once so that
        retrieval reads them instead of scanning every passage it returns.

        Returns:
            ``(generation, [(doc_id, removed_chunk_ids, new_chunk_ids), ...])`` per item.
        """
        now = time.time()
        results: list[tuple[int, list[int], list[int]]] = []
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for meta, status, reason, chunks, vectors in items:
                row = self._db.execute(
                    "SELECT doc_id FROM documents WHERE source=?", (_key(meta.source),)
                ).fetchone()
                removed: list[int] = []
                values = document_values(meta, status, reason, len(chunks), now)
                if row is None:
                    cur = self._db.execute(
                        "INSERT INTO documents(title, sha256, size_bytes, mtime_ns, format, status,"
                        " reason, chunk_count, ingested_at, source) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (*values, _key(meta.source)),
                    )
                    doc_id = int(cur.lastrowid or 0)
                else:
                    doc_id = int(row[0])
                    removed = self.chunk_ids_of(doc_id)
                    self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
                    self._db.execute(
                        "UPDATE documents SET title=?, sha256=?, size_bytes=?, mtime_ns=?,"
                        " format=?, status=?, reason=?, chunk_count=?, ingested_at=?"
                        " WHERE doc_id=?",
                        (*values, doc_id),
                    )
                new_ids: list[int] = []
                if chunks:
                    assert vectors is not None and len(vectors) == len(chunks)
                    vecs = np.ascontiguousarray(vectors, dtype=np.float32)
                    for chunk, vec in zip(chunks, vecs, strict=True):
                        cur = self._db.execute(
                            "INSERT INTO chunks(doc_id, ordinal, text, char_start, char_end,"
                            " loc_kind, loc_number, loc_heading, sentence_spans, vector,"
                            " is_reference, instruction_cues, ocr)"
                            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                            (
                                *chunk_values(doc_id, chunk),
                                vec.tobytes(),
                                int(chunk.is_reference),
                                json.dumps(instruction_cues(chunk.text)),
                                chunk_ocr(chunk),
                            ),
                        )
                        new_ids.append(int(cur.lastrowid or 0))
                    if self.get_meta("dim") is None:
                        self._db.execute(
                            "INSERT INTO meta(key, value) VALUES ('dim', ?)", (str(vecs.shape[1]),)
                        )
                results.append((doc_id, removed, new_ids))
            generation = self._bump()
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return generation, results

    def touch(self, source: str, mtime_ns: int) -> None:
        """Record a new mtime for an unchanged file (content hash equal); no generation change."""
        self._db.execute("UPDATE documents SET mtime_ns=? WHERE source=?", (mtime_ns, _key(source)))

    def remove(self, sources: Sequence[str]) -> tuple[int, list[tuple[int, list[int]]]]:
        """Delete documents and their chunks in one transaction.

        Returns:
            ``(generation, [(doc_id, removed_chunk_ids), ...])`` for the sources that existed.
        """
        out: list[tuple[int, list[int]]] = []
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for source in sources:
                row = self._db.execute(
                    "SELECT doc_id FROM documents WHERE source=?", (_key(source),)
                ).fetchone()
                if row is None:
                    continue
                doc_id = int(row[0])
                out.append((doc_id, self.chunk_ids_of(doc_id)))
                self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
                self._db.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))
                self._db.execute("DELETE FROM doc_references WHERE source=?", (_key(source),))
            generation = self._bump() if out else self.generation()
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return generation, out

    # -- reads for indexes and retrieval -------------------------------------------------
    def num_chunks(self) -> int:
        """Number of chunk rows."""
        return int(self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def iter_chunk_texts(self) -> Iterator[tuple[int, int, str]]:
        """``(chunk_id, doc_id, text)`` for every chunk, by chunk_id."""
        cur = self._db.execute("SELECT chunk_id, doc_id, text FROM chunks ORDER BY chunk_id")
        for row in cur:
            yield int(row[0]), int(row[1]), str(row[2])

    def all_vectors(self) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Every chunk id (int64, shape (n,)) and float32 vector (shape (n, dim))."""
        rows = self._db.execute("SELECT chunk_id, vector FROM chunks ORDER BY chunk_id").fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if not rows:
            return ids, np.zeros((0, 0), dtype=np.float32)
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        return ids, mat

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, NDArray[np.float32]]:
        """Full-precision vectors (float32, shape (dim,)) of the given chunks that exist."""
        out: dict[int, NDArray[np.float32]] = {}
        ids = list(dict.fromkeys(int(c) for c in chunk_ids))
        for start in range(0, len(ids), 900):
            part = ids[start : start + 900]
            marks = ",".join("?" * len(part))
            for cid, blob in self._db.execute(
                f"SELECT chunk_id, vector FROM chunks WHERE chunk_id IN ({marks})", part
            ):
                out[int(cid)] = np.frombuffer(blob, dtype=np.float32)
        return out

    def chunk_records(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRecord]:
        """Chunk rows joined with their documents, for the ids that exist."""
        out: dict[int, ChunkRecord] = {}
        ids = list(dict.fromkeys(int(c) for c in chunk_ids))
        for start in range(0, len(ids), 900):
            part = ids[start : start + 900]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                "SELECT c.chunk_id, c.doc_id, d.source, d.title, c.ordinal, c.text, c.char_start,"
                " c.char_end, c.loc_kind, c.loc_number, c.loc_heading, c.sentence_spans,"
                " c.is_reference, c.instruction_cues, c.ocr, r.reference"
                " FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"
                " LEFT JOIN doc_references r ON r.source = d.source"
                f" WHERE c.chunk_id IN ({marks})",
                part,
            ).fetchall()
            for r in rows:
                out[int(r[0])] = chunk_record(r)
        return out

    # -- reference-manager entries (issue 43) ----------------------------------------------
    def set_references(self, items: Sequence[tuple[str, Reference]]) -> tuple[int, list[int]]:
        """Keep each source's reference-manager entry (one transaction); unchanged ones are
        not written.

        Returns:
            ``(generation, doc_ids)``: the generation (+1 when something changed) and the
            catalogued documents whose entry changed (their lexical fields are rewritten).
        """
        changed: list[int] = []
        wrote = False
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for source, ref in items:
                text = ref.to_json()
                row = self._db.execute(
                    "SELECT reference FROM doc_references WHERE source=?", (_key(source),)
                ).fetchone()
                if row is not None and row[0] == text:
                    continue
                self._db.execute(
                    "INSERT OR REPLACE INTO doc_references(source, library, reference)"
                    " VALUES (?,?,?)",
                    (_key(source), ref.library, text),
                )
                wrote = True
                doc = self._db.execute(
                    "SELECT doc_id FROM documents WHERE source=?", (_key(source),)
                ).fetchone()
                if doc is not None:
                    changed.append(int(doc[0]))
            generation = self._bump() if wrote else self.generation()
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return generation, changed

    def references_of(self, library: str) -> dict[str, Reference]:
        """The entries kept for the sources of one library (by its path), by source."""
        rows = self._db.execute(
            "SELECT source, reference FROM doc_references WHERE library=?", (library,)
        )
        return {_source(s): Reference.from_json(str(r)) for s, r in rows}

    def references_by_doc(self, doc_ids: Sequence[int] | None = None) -> dict[int, Reference]:
        """The entries of catalogued documents, by doc_id (every one when ``doc_ids`` is
        ``None``)."""
        rows = self._db.execute(
            "SELECT d.doc_id, r.reference FROM doc_references r"
            " JOIN documents d ON d.source = r.source"
        )
        wanted = None if doc_ids is None else set(doc_ids)
        return {
            int(d): Reference.from_json(str(r))
            for d, r in rows
            if wanted is None or int(d) in wanted
        }

    def chunk_texts(self, doc_id: int) -> tuple[list[int], list[str]]:
        """Chunk ids and texts of one document, by ordinal."""
        rows = self._db.execute(
            "SELECT chunk_id, text FROM chunks WHERE doc_id=? ORDER BY ordinal", (doc_id,)
        ).fetchall()
        return [int(r[0]) for r in rows], [str(r[1]) for r in rows]


def chunk_ocr(chunk: Chunk) -> str | None:
    """The ``chunks.ocr`` value of a chunk (both stores): its recognition as JSON, ``None``
    for text from a text layer."""
    return None if chunk.ocr is None else chunk.ocr.to_json()


def chunk_record(r: Sequence[Any]) -> ChunkRecord:
    """A chunk row joined with its document as a record (both stores): ``(chunk_id, doc_id,
    source, title, ordinal, text, char_start, char_end, loc_kind, loc_number, loc_heading,
    sentence_spans, is_reference, instruction_cues, ocr[, reference])``, the spans, cues and OCR
    provenance as JSON text (``ocr`` NULL for a text layer); ``reference``, when the row has
    it, the document's :class:`~verifai_desktop.reference.Reference` as JSON or NULL."""
    chunk = Chunk(
        ordinal=int(r[4]),
        text=str(r[5]),
        char_start=int(r[6]),
        char_end=int(r[7]),
        location=Location(LocationKind(str(r[8])), None if r[9] is None else int(r[9]), str(r[10])),
        sentence_spans=tuple((int(s), int(e)) for s, e in json.loads(r[11])),
        is_reference=bool(r[12]),
        ocr=None if r[14] is None else Recognition.from_json(str(r[14])),
    )
    return ChunkRecord(
        chunk_id=ChunkId(int(r[0])),
        doc_id=DocId(int(r[1])),
        source=_source(r[2]),
        title=str(r[3]),
        chunk=chunk,
        instruction_cues=tuple(str(cue) for cue in json.loads(r[13])),
        reference=Reference.from_json(str(r[15])) if len(r) > 15 and r[15] else None,
    )
