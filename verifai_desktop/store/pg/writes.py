"""The PostgreSQL store's writes: a document's row, its chunks, and the lexical search's
``postings``, ``lexical_stats`` and ``lexeme_df`` (:mod:`.schema`) kept in step with the
chunks.

Every function here runs inside the caller's transaction (:meth:`.store.PgStore.commit`,
:meth:`.store.PgStore.remove_sources`), so the chunks and the statistics the lexical search
reads change together or not at all. The statements hold ``{s}`` for the collection's schema
where they are constants.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from verifai_desktop.store.pg.schema import (
    frequencies_statement,
    postings_statement,
    stats_statement,
)

if TYPE_CHECKING:
    import psycopg

UPSERT_DOCUMENT = (
    "INSERT INTO {s}.documents (title, sha256, size_bytes, mtime_ns, format, status, reason,"
    " chunk_count, ingested_at, acl_group, source)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::regrole, %s)"
    " ON CONFLICT (source) DO UPDATE SET title = excluded.title, sha256 = excluded.sha256,"
    " size_bytes = excluded.size_bytes, mtime_ns = excluded.mtime_ns, format = excluded.format,"
    " status = excluded.status, reason = excluded.reason, chunk_count = excluded.chunk_count,"
    " ingested_at = excluded.ingested_at, acl_group = excluded.acl_group RETURNING doc_id"
)
"""A document's row (:func:`~verifai_desktop.store.catalog.document_values`, then the group
and the stored source), kept by source; returns its ``doc_id``."""

INSERT_CHUNK = (
    "INSERT INTO {s}.chunks (doc_id, ordinal, text, char_start, char_end, loc_kind, loc_number,"
    " loc_heading, sentence_spans, embedding, is_reference, instruction_cues, ocr, acl_group)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s::jsonb, %s::jsonb,"
    " %s::regrole)"
)
"""One chunk (:func:`~verifai_desktop.store.catalog.chunk_values`, then its vector, reference
tag, injection cues, OCR provenance and group)."""


def delete_chunks(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, where: str, params: Sequence[object]
) -> None:
    """Delete the chunks ``where`` selects (a condition on ``c``, the chunks) and take them out
    of their groups' ``lexical_stats`` and their lexemes' ``lexeme_df`` in one statement;
    their postings go with them (``ON DELETE CASCADE``).

    Args:
        conn: the writer's connection, in a transaction.
        schema: the collection's schema (an identifier).
        where: SQL condition on ``c``, with ``%s`` placeholders for ``params``.
        params: the condition's parameters.
    """
    gone = (
        f"WITH gone AS (DELETE FROM {schema}.chunks c WHERE {where}"
        " RETURNING c.acl_group, length(c.tsv) AS dl, c.tsv),"
        " lexemes AS (SELECT u.lexeme, g.acl_group FROM gone g, unnest(g.tsv) AS u),"
        f" counted AS ({frequencies_statement(schema, 'lexemes', '-')}) "
    )
    conn.execute((gone + stats_statement(schema, "gone", "-")).encode(), params)


def add_postings(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, doc_ids: Sequence[int]
) -> None:
    """Add the postings of the chunks of ``doc_ids`` (written in this transaction, with no
    postings yet), count them in their lexemes' ``lexeme_df`` and those chunks in their
    groups' ``lexical_stats``.

    Args:
        conn: the writer's connection, in a transaction.
        schema: the collection's schema (an identifier).
        doc_ids: documents whose chunks were just inserted.
    """
    if not doc_ids:
        return
    ids = (list(doc_ids),)
    added = postings_statement(schema, "c.doc_id = ANY(%s)") + " RETURNING lexeme, acl_group"
    conn.execute(f"WITH added AS ({added}) {frequencies_statement(schema, 'added')}".encode(), ids)
    chunks = f"(SELECT acl_group, length(tsv) AS dl FROM {schema}.chunks WHERE doc_id = ANY(%s)) c"
    conn.execute(stats_statement(schema, chunks).encode(), ids)
