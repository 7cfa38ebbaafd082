"""The PostgreSQL store's search queries.

Lexical search is PostgreSQL full text: ``ts_rank_cd`` over the English ``tsvector`` of each
chunk, any word of the query matching (an OR of its English lexemes, each quoted so that no
query text is read as tsquery syntax), like the embedded BM25's OR query; its scores are not
BM25's. Vector search is pgvector's HNSW with cosine distance, scored ``1 - distance`` (the
cosine of the stored float32 vectors). :data:`HYBRID` runs both in one statement. The queries
hold ``{s}`` for the collection's schema and take named parameters ``q`` (query text), ``v``
(query vector) and ``limit``.
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.store.base import ScoredChunk

CHUNK_COLUMNS = (
    "c.chunk_id, c.doc_id, d.source, d.title, c.ordinal, c.text, c.char_start, c.char_end,"
    " c.loc_kind, c.loc_number, c.loc_heading, c.sentence_spans::text, c.is_reference,"
    " c.instruction_cues::text, c.ocr::text"
)
"""The columns of ``chunks c JOIN documents d`` that
:func:`~verifai_desktop.store.catalog.chunk_record` reads, in its order."""

# The 'simple' configuration keeps the lexemes to_tsvector('english', ...) made as they are.
_TSQUERY = (
    "to_tsquery('simple', coalesce((SELECT string_agg('''' || replace(replace(l, '\\', '\\\\'),"
    " '''', '\\''') || '''', ' | ') FROM unnest(tsvector_to_array(to_tsvector('english',"
    " %(q)s))) AS l), ''))"
)

LEXICAL = (
    "SELECT chunk_id, ts_rank_cd(tsv, query)::float8 AS score"
    f" FROM {{s}}.chunks, {_TSQUERY} AS query"
    " WHERE tsv @@ query ORDER BY score DESC, chunk_id LIMIT %(limit)s"
)
"""Full-text top ``limit``: ``(chunk_id, ts_rank_cd)``."""

SEMANTIC = (
    "SELECT chunk_id, 1 - (embedding <=> %(v)s) AS score FROM {s}.chunks"
    " ORDER BY embedding <=> %(v)s LIMIT %(limit)s"
)
"""HNSW top ``limit``: ``(chunk_id, cosine)`` (ordered by distance alone, so that the index
is used; ties are ordered afterwards, :func:`ranked`)."""

HYBRID = (
    "WITH lexical AS (" + LEXICAL + "), semantic AS (" + SEMANTIC + ")"
    " SELECT 'l', chunk_id, score FROM lexical UNION ALL SELECT 's', chunk_id, score FROM semantic"
)
"""Both engines in one round trip: ``('l' | 's', chunk_id, score)`` rows."""


def ranked(rows: Sequence[Sequence[object]]) -> list[ScoredChunk]:
    """``(chunk_id, score)`` rows as hits, best first, ties by ascending chunk id."""
    hits = [(int(str(r[0])), float(str(r[1]))) for r in rows]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits
