"""The PostgreSQL store: :class:`PgStore`, a collection in a PostgreSQL database with pgvector.

It implements the store's contract (:class:`~verifai_desktop.store.base.CollectionStore`) and
what an ingest run writes into (:class:`~verifai_desktop.store.target.IngestTarget`), so the
same ingest runs (:func:`verifai_desktop.store.writer.ingest_paths`: resume by sha256, per-file
outcomes, progress, cancel) and the same retriever (:mod:`verifai_desktop.retrieve`) work on
it. Tables, indexes and row-level security: :mod:`verifai_desktop.store.pg.schema`; queries:
:mod:`verifai_desktop.store.pg.queries`; connecting: :mod:`verifai_desktop.store.pg.connect`.

- Every :meth:`PgStore.commit` is one transaction: a document (its row, chunks and vectors)
  appears whole or not at all, and a killed ingest leaves none of the document in flight.
- One writer at a time: a session advisory lock on the collection
  (:meth:`PgStore.acquire_write_lock`); readers never wait for it. Before writing, the writer
  checks that it owns the schema as made here (:func:`~.ownership.check_owned`).
- A document belongs to one group: ingesting it again for another group (``--acl``) reads it
  again and moves its row and chunks to that group in one transaction.
- A source that is a file name not valid UTF-8 (decoded with ``surrogateescape``) is kept as
  :data:`.values.BYTES_PREFIX` and the hex of its bytes (PostgreSQL text is UTF-8); every read gives
  the name back.
- A lost connection or a statement the server refuses is a
  :class:`~verifai_desktop.errors.StoreUnavailable` (kinds ``unreachable``, ``permission``),
  never a psycopg error.
- Reads see what the connecting role may read, decided by the server (row-level security on
  ``acl_group``); a role not granted the tables at all sees an empty collection.
- The answer history (:mod:`verifai_desktop.store.pg.history`) is kept per role: each role
  reads and writes its own entries and judgements alone.
- Row-level security filters the HNSW index's candidates after the index search; so that a
  role reading a small part of a large collection still gets ``limit`` vector hits, the store
  turns on pgvector's iterative index scans (0.8 and later) or, before 0.8 (``pgserver``'s is
  0.6.2), searches once more with the widest candidate list when the filter left too few
  (:mod:`.hnsw`; at most :data:`~.hnsw.EF_SEARCH_MAX` candidates).
- Lexical search is BM25 (k1 1.2, b 0.75, Tantivy's IDF) over an English ``tsvector``, any
  query word matching, like the embedded BM25's OR query, with N, avgdl and document
  frequencies counted over the chunks the role may read (:mod:`.queries`). It reads the
  ``postings`` of the query's words and the ``lexical_stats`` and ``lexeme_df`` rows of the
  role's groups, which every commit and removal keeps in step with the chunks in the same
  transaction, and scores the postings here (:func:`~.queries.bm25_top`); vector search is
  pgvector's HNSW with cosine distance (scores: ``1 - distance``, the cosine of the stored
  float32 vectors). :meth:`PgStore.hybrid_search` runs the two engines side by side, on two
  connections of the role (:mod:`.peer`); fusing them stays with the retriever
  (:func:`verifai_desktop.retrieve.fuse`), the same code and settings as for the embedded store.
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.errors import (
    CollectionBusy,
    CollectionNotFound,
    EmbedderMismatch,
    StoreUnavailable,
)
from verifai_desktop.index.embedder import Embedder, canonical_name, get_embedder
from verifai_desktop.ingest.injection import instruction_cues
from verifai_desktop.settings import Settings
from verifai_desktop.store.base import Closes, ScoredChunk
from verifai_desktop.store.catalog import (
    DOC_COLUMNS,
    CommitItem,
    chunk_ocr,
    chunk_record,
    chunk_values,
    document_record,
    document_values,
)
from verifai_desktop.store.pg.connect import connect, redacted
from verifai_desktop.store.pg.credentials import PasswordPrompt
from verifai_desktop.store.pg.history import PgHistory
from verifai_desktop.store.pg.hnsw import EF_SEARCH_MAX, HnswScan
from verifai_desktop.store.pg.ownership import check_owned
from verifai_desktop.store.pg.peer import SearchPeer
from verifai_desktop.store.pg.queries import (
    CHUNK_COLUMNS,
    POSTINGS,
    SEMANTIC,
    bm25_top,
    ranked,
)
from verifai_desktop.store.pg.references import REFERENCE_JOIN, PgReferences
from verifai_desktop.store.pg.schema import (
    check_version,
    create_collection,
    grant_statements,
    schema_name,
)
from verifai_desktop.store.pg.values import (
    metadata_json,
    read_source,
    server_errors,
    stored_source,
)
from verifai_desktop.store.pg.writes import (
    INSERT_CHUNK,
    UPSERT_DOCUMENT,
    add_postings,
    delete_chunks,
)
from verifai_desktop.store.records import ChunkRecord, DocumentRecord

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)


class PgStore(Closes, PgReferences):
    """A collection in a PostgreSQL database (implements
    :class:`~verifai_desktop.store.base.CollectionStore` and
    :class:`~verifai_desktop.store.target.IngestTarget`). Use :meth:`open`; close it (or use
    ``with``) when done.

    Attributes:
        name: the collection's name (its PostgreSQL schema is ``verifai_<name>``).
        display_name: the name recorded when it was created.
        embedder_name: the embedder its vectors come from.
        store: the server as shown to the user (``user@host:port/database``, no password).
        acl: the group (PostgreSQL role) documents written by this store are readable by; the
            collection's owner role unless given to :meth:`open`.
    """

    def __init__(
        self, conn: psycopg.Connection[tuple[object, ...]], name: str, store: str, acl: str | None
    ) -> None:
        self._conn = conn
        self.name = name
        self.store = store
        self._schema = schema_name(name)
        rows = self._rows(f"SELECT key, value FROM {self._schema}.config")
        config = {str(r[0]): str(r[1]) for r in rows}
        self.display_name = str(config.get("display_name") or name)
        self.embedder_name = str(config["embedder"])
        self.acl = acl or str(config["owner"])
        from psycopg import sql

        # The role as a quoted identifier, for GRANT and for every ::regrole (which folds an
        # unquoted name to lower case: 'Finance'::regrole is the role finance).
        self._group = sql.Identifier(self.acl).as_string(conn)
        self._readable = self._granted()
        self._hnsw = HnswScan(self._one)
        self._peer = SearchPeer(conn)
        self._locked = False
        self._closed = False

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        url: str,
        name: str,
        *,
        create: bool = False,
        settings: Settings | None = None,
        embedder: str | None = None,
        acl: str | None = None,
        password_prompt: PasswordPrompt | None = None,
    ) -> PgStore:
        """Open (or create) collection ``name`` in the database ``url`` names.

        Args:
            url: a libpq URL without a password (:func:`~verifai_desktop.store.pg.connect.
                connect`).
            name: lowercase letters, digits and ``_``, starting with a letter, at most 40.
            create: create it (as the connecting role, its owner) when missing.
            settings: settings a new collection takes its embedder from; ``None``: defaults.
            embedder: the embedder the collection must be built with (as for the embedded
                store).
            acl: the group documents written through this store may be read by; the
                connecting role must be a member of it.
            password_prompt: asks the user for the password when the server wants one and
                neither libpq nor the system keyring has it (:func:`.connect.connect`).

        Raises:
            InvalidCollectionName: ``name`` is not a valid PostgreSQL collection name.
            CollectionNotFound: it does not exist and ``create`` is False.
            EmbedderMismatch: ``embedder`` differs from the one it was built with.
            StoreUnavailable: the server cannot be used (see :func:`.connect.connect`), its
                schema version is newer than this app's or older and this role cannot upgrade
                it (kind ``schema``), or ``acl`` is not a role this role is a member of
                (``permission``).
            ModelNotFound: a new collection's embedder is not on this machine.
        """
        schema = schema_name(name)
        where = redacted(url)
        conn = connect(url, password_prompt=password_prompt)
        try:
            with server_errors(where):
                exists = conn.execute(
                    "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
                ).fetchone()
                created = False
                if exists is None:
                    if not create:
                        raise CollectionNotFound(name)
                    model = embedder or (settings or Settings()).models.embedder
                    created = create_collection(
                        conn, schema, name, canonical_name(model), get_embedder(model).dim
                    )
                if not created:
                    check_version(conn, schema, where)
                store = cls(conn, name, where, acl)
            if embedder is not None and canonical_name(embedder) != store.embedder_name:
                raise EmbedderMismatch(name, store.embedder_name, embedder)
            if acl is not None:
                store._check_group(acl)
        except BaseException:
            conn.close()
            raise
        return store

    def close(self) -> None:
        """Close the connections (which releases the write lock); idempotent."""
        if not self._closed:
            self._peer.close()
            self._conn.close()
            self._closed = True

    # -- helpers -------------------------------------------------------------------------
    def _rows(
        self, query: str, params: Sequence[object] | Mapping[str, object] = ()
    ) -> list[tuple[object, ...]]:
        with server_errors(self.store):
            return self._conn.execute(query.encode(), params).fetchall()

    def _one(self, query: str, params: Sequence[object] = ()) -> object:
        with server_errors(self.store):
            row = self._conn.execute(query.encode(), params).fetchone()
        return None if row is None else row[0]

    def _execute(self, query: str, params: Sequence[object] = ()) -> None:
        with server_errors(self.store):
            self._conn.execute(query.encode(), params)

    def _granted(self) -> bool:
        """Whether this role was granted the collection's tables (a group of it was)."""
        return bool(
            self._one(
                "SELECT has_table_privilege(current_user, %s, 'SELECT')",
                (f"{self._schema}.chunks",),
            )
        )

    def _role_exists(self, name: str) -> bool:
        return self._one("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)) is not None

    def _check_group(self, group: str) -> None:
        """Check that ``group`` is a role, by its exact name, that this role is a member of.

        Raises:
            StoreUnavailable: kind ``permission``: no such role (a name given in quotes is
                told to be given without them, the roles of that name in another case are
                named), or this role is not a member of it.
        """
        if not self._role_exists(group):
            bare = group.strip('"')
            alike = [
                str(r[0])
                for r in self._rows(
                    "SELECT rolname FROM pg_roles WHERE lower(rolname) = lower(%s)"
                    " ORDER BY rolname",
                    (bare,),
                )
            ]
            hint = ""
            if bare != group and bare in alike:
                hint = f"; give the role's name without quotes, as it is: {bare}"
            elif alike:
                hint = f"; role names are case-sensitive, there is {' and '.join(alike)}"
            raise StoreUnavailable(self.store, "permission", f"no role named {group!r}{hint}")
        if not self._one(
            "SELECT pg_has_role(current_user, to_regrole(%s), 'MEMBER')", (self._group,)
        ):
            raise StoreUnavailable(
                self.store,
                "permission",
                f"this role is not a member of {group!r}, so it cannot write documents for it "
                f"(GRANT {self._group} TO the role that ingests)",
            )

    # -- reading (the CollectionStore contract) ------------------------------------------
    def embedder(self) -> Embedder:
        """The embedder this collection's vectors come from (shared per process)."""
        return get_embedder(self.embedder_name)

    def documents(self) -> list[DocumentRecord]:
        """Every document this role may read, ordered by source."""
        if not self._readable:
            return []
        rows = self._rows(f"SELECT {DOC_COLUMNS} FROM {self._schema}.documents")
        return sorted((_document(r) for r in rows), key=lambda d: d.source)

    def document(self, source: str) -> DocumentRecord | None:
        """The document of ``source`` if this role may read it, else None."""
        if not self._readable:
            return None
        rows = self._rows(
            f"SELECT {DOC_COLUMNS} FROM {self._schema}.documents WHERE source = %s",
            (stored_source(source),),
        )
        return _document(rows[0]) if rows else None

    def num_chunks(self) -> int:
        """Number of chunks this role may read: the sum of its groups' ``lexical_stats`` rows,
        kept with the chunks (a count of the chunks would read each one: the semantic search
        asks before every query)."""
        if not self._readable:
            return 0
        total = self._one(f"SELECT coalesce(sum(chunks), 0) FROM {self._schema}.lexical_stats")
        return int(str(total))

    def num_vectors(self) -> int:
        """Chunks the vector search can return (every chunk has its vector)."""
        return self.num_chunks()

    def document_chunk_ids(self, doc_id: int) -> list[int]:
        """The chunk ids of one document, by ordinal (empty if unknown or not readable)."""
        if not self._readable:
            return []
        rows = self._rows(
            f"SELECT chunk_id FROM {self._schema}.chunks WHERE doc_id = %s ORDER BY ordinal",
            (doc_id,),
        )
        return [int(str(r[0])) for r in rows]

    def chunks(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRecord]:
        """The readable chunks of ``chunk_ids`` that exist, with their document's source and
        title (:meth:`CollectionStore.chunks`)."""
        ids = list(dict.fromkeys(int(c) for c in chunk_ids))
        if not ids or not self._readable:
            return {}
        rows = self._rows(
            f"SELECT {CHUNK_COLUMNS}, r.reference FROM {self._schema}.chunks c"
            f" JOIN {self._schema}.documents d USING (doc_id)"
            + REFERENCE_JOIN.format(s=self._schema)
            + " WHERE c.chunk_id = ANY(%s)",
            (ids,),
        )
        return {int(str(r[0])): chunk_record((*r[:2], read_source(r[2]), *r[3:])) for r in rows}

    # -- search --------------------------------------------------------------------------
    def vector_search(self, query: NDArray[np.float32], limit: int) -> list[ScoredChunk]:
        """Top ``limit`` ``(chunk_id, cosine)`` from the HNSW index (at most
        :data:`~.hnsw.EF_SEARCH_MAX`), best first, ties by ascending chunk id."""
        if limit <= 0 or not self._readable:
            return []
        self._hnsw.widen(limit)
        params = {"v": np.asarray(query, dtype=np.float32), "limit": limit}
        return self._fill(ranked(self._rows(SEMANTIC.format(s=self._schema), params)), params)

    def hybrid_search(
        self, query: str, vector: NDArray[np.float32], limit: int
    ) -> tuple[list[ScoredChunk], list[ScoredChunk]]:
        """Both engines' top ``limit`` hits, the two statements side by side: the postings on
        a second connection (:mod:`.peer`), the HNSW search on this one (or both pipelined on
        this one, in one round trip, when there is no second).

        Args:
            query: free text (as :meth:`lexical_search`).
            vector: the query embedding, float32, shape (dim,), L2-normalised.
            limit: hits per engine.

        Returns:
            ``(lexical, semantic)``, each as :meth:`lexical_search` and :meth:`vector_search`
            return them.
        """
        if limit <= 0 or not self._readable:
            return [], []
        self._hnsw.widen(limit)
        params = {"v": np.asarray(vector, dtype=np.float32), "limit": limit}
        with server_errors(self.store):
            postings, hits = self._peer.both(
                (POSTINGS.format(s=self._schema), {"q": query}),
                (SEMANTIC.format(s=self._schema), params),
            )
        lexical, semantic = bm25_top(postings, limit), ranked(hits)
        return lexical, self._fill(semantic, params)

    def _fill(self, hits: list[ScoredChunk], params: Mapping[str, object]) -> list[ScoredChunk]:
        """The semantic hits again from pgvector's widest candidate list when row-level
        security left fewer than ``limit`` and this role reads more chunks (:mod:`.hnsw`)."""
        limit = int(str(params["limit"]))
        if len(hits) >= limit or self._hnsw.ef_search >= EF_SEARCH_MAX:
            return hits
        if len(hits) >= self.num_chunks():
            return hits
        with self._hnsw.widest():
            return ranked(self._rows(SEMANTIC.format(s=self._schema), params))

    def refresh(self) -> None:
        """Notice a grant made since the store was opened (the first ingest for one of this
        role's groups); otherwise nothing to do: every query sees what was committed when it
        runs."""
        if not self._readable:
            self._readable = self._granted()

    # -- status and metadata ------------------------------------------------------------
    def is_consistent(self) -> bool:
        """Always True: the server keeps its indexes in step with every commit."""
        return True

    def reconcile(self) -> bool:
        """Nothing to rebuild (the server's indexes are transactional); returns False."""
        return False

    def check(self) -> None:
        """Nothing to check from here: integrity is the server's (its checksums, backups)."""

    def metadata(self, key: str) -> dict[str, object]:
        """The metadata record ``key`` of group :attr:`acl` (each group has its own: the
        roots an ingest for that group followed), when this role may read it; else empty."""
        if not self._readable:
            return {}
        value = self._one(
            f"SELECT value FROM {self._schema}.metadata WHERE key = %s"
            " AND acl_group = to_regrole(%s)",
            (key, self._group),
        )
        if isinstance(value, str):  # kept as JSON text (:func:`.values.metadata_json`)
            value = json.loads(value)
        return dict(value) if isinstance(value, dict) else {}

    def set_metadata(self, key: str, data: Mapping[str, object]) -> None:
        """Record a JSON object under ``key`` for group :attr:`acl`, readable by its members
        alone (another group's record of the same key is left as it is)."""
        self._execute(
            f"INSERT INTO {self._schema}.metadata (key, value, acl_group)"
            " VALUES (%s, %s::jsonb, %s::regrole) ON CONFLICT (key, acl_group) DO UPDATE"
            " SET value = excluded.value",
            (key, metadata_json(data), self._group),
        )

    def history(self) -> PgHistory:
        """The connecting role's answer history in this collection (its rows alone); it uses
        this store's connection, so keep the store open while using it."""
        return PgHistory(self._conn, self._schema, self.name, self.store)

    # -- writing (the IngestTarget contract) ----------------------------------------------
    @property
    def catalog(self) -> _GroupCatalog:
        """The catalog reads of an ingest run: as the store's, except that a document of
        another group than :attr:`acl` reads as absent, so that the run reads it again and
        :meth:`commit` moves it to :attr:`acl`."""
        return _GroupCatalog(self)

    def _document_of_group(self, source: str) -> DocumentRecord | None:
        rows = self._rows(
            f"SELECT {DOC_COLUMNS}, acl_group = to_regrole(%s), acl_group::text"
            f" FROM {self._schema}.documents WHERE source = %s",
            (self._group, stored_source(source)),
        )
        if not rows:
            return None
        if not rows[0][-2]:
            log.warning(
                "%s: readable by group %s; it is read again and moved to group %s",
                source,
                rows[0][-1],
                self._group,
            )
            return None
        return _document(rows[0][:-2])

    def touch(self, source: str, mtime_ns: int) -> None:
        """Record a new mtime for an unchanged file."""
        self._execute(
            f"UPDATE {self._schema}.documents SET mtime_ns = %s WHERE source = %s",
            (mtime_ns, stored_source(source)),
        )

    def sources_under(self, folder: Path) -> list[str]:
        """Readable sources that are files inside ``folder`` (recursively)."""
        return [d.source for d in self.documents() if Path(d.source).is_relative_to(folder)]

    def acquire_write_lock(self) -> None:
        """Become the collection's one writer (a session advisory lock), check that this role
        owns the collection's schema as made here (:func:`~.ownership.check_owned`), and grant
        :attr:`acl` what it needs to read the collection.

        Raises:
            CollectionBusy: another session is writing it.
            StoreUnavailable: kind ``permission``: this role does not own the schema (only the
                collection's owner ingests), or the schema is not as this app makes it (made
                or changed by another role); the message names the schema and its owner.
        """
        if self._locked:
            return
        key = zlib.crc32(self._schema.encode())
        if not self._one("SELECT pg_try_advisory_lock(%s)", (key,)):
            raise CollectionBusy(self.name)
        self._locked = True
        with server_errors(self.store):
            check_owned(self._conn, self._schema, self.store)
            for statement in grant_statements(self._schema, self._group):
                self._conn.execute(statement.encode())
        self._readable = True

    def commit(self, items: Sequence[CommitItem]) -> int:
        """Write documents with their chunks and vectors in ONE transaction, readable by
        :attr:`acl`'s members. A source already present keeps its id; its chunks are replaced.

        Returns:
            0 (the server needs no generation counter).
        """
        self.acquire_write_lock()
        s = self._schema
        now = time.time()
        with server_errors(self.store), self._conn.transaction():
            counted: list[int] = []  # documents whose chunks have no postings yet
            for meta, status, reason, chunks, vectors in items:
                values = document_values(meta, status, reason, len(chunks), now)
                doc_id = int(
                    str(
                        self._one(
                            UPSERT_DOCUMENT.format(s=s),
                            (*values, self._group, stored_source(meta.source)),
                        )
                    )
                )
                if doc_id in counted:  # the same source twice in one commit
                    add_postings(self._conn, s, counted)
                    counted = []
                delete_chunks(self._conn, s, "c.doc_id = %s", (doc_id,))
                if not chunks:
                    continue
                assert vectors is not None and len(vectors) == len(chunks)
                rows = [
                    (
                        *chunk_values(doc_id, c),
                        np.asarray(vec, dtype=np.float32),
                        c.is_reference,
                        json.dumps(instruction_cues(c.text)),
                        chunk_ocr(c),
                        self._group,
                    )
                    for c, vec in zip(chunks, vectors, strict=True)
                ]
                with self._conn.cursor() as cur:
                    cur.executemany(INSERT_CHUNK.format(s=s).encode(), rows)
                counted.append(doc_id)
            add_postings(self._conn, s, counted)
        return 0

    def flush(self) -> None:
        """Nothing to flush: every commit is durable on the server."""

    def remove_sources(self, sources: Sequence[str]) -> list[str]:
        """Remove readable documents (by source) with their chunks, in one transaction.

        Returns:
            The sources that were present.
        """
        self.acquire_write_lock()
        stored = [stored_source(s) for s in sources]
        with server_errors(self.store), self._conn.transaction():
            delete_chunks(
                self._conn,
                self._schema,
                f"c.doc_id IN (SELECT doc_id FROM {self._schema}.documents WHERE source = ANY(%s))",
                (stored,),
            )
            rows = self._rows(
                f"DELETE FROM {self._schema}.documents WHERE source = ANY(%s) RETURNING source",
                (stored,),
            )
            self.forget_references(stored)
        return [read_source(r[0]) for r in rows]


class _GroupCatalog:
    """The catalog reads of an ingest run into a :class:`PgStore` (its
    :attr:`~PgStore.catalog`): a document of another group than the store's reads as absent,
    so that the run reads it again and moves it (:meth:`PgStore.commit`, one transaction)."""

    def __init__(self, store: PgStore) -> None:
        self._store = store

    def document(self, source: str) -> DocumentRecord | None:
        """The document of ``source`` when it belongs to the store's group, else None."""
        return self._store._document_of_group(source)

    def touch(self, source: str, mtime_ns: int) -> None:
        """Record a new mtime for an unchanged file."""
        self._store.touch(source, mtime_ns)

    def sources_under(self, folder: Path) -> list[str]:
        """Readable sources that are files inside ``folder`` (recursively)."""
        return self._store.sources_under(folder)


def _document(row: Sequence[object]) -> DocumentRecord:
    return document_record((row[0], read_source(row[1]), *row[2:]))
