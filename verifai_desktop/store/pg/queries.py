"""The PostgreSQL store's search queries and its BM25 scoring.

Lexical search is BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework:
BM25 and Beyond") in Tantivy's form (the embedded store's, ``tantivy::query::bm25``; Lucene's
``BM25Similarity`` has the same IDF and constants): for each query lexeme ``t`` in chunk ``d``

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)),
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)),  k1 = 1.2, b = 0.75,

summed over the query's distinct English lexemes (``to_tsvector('english', query)``: the
query text is never read as tsquery syntax). Candidates are the chunks holding any query
lexeme, like the embedded BM25's OR query. ``tf`` is the number of positions of the lexeme in
the chunk's ``tsvector`` (PostgreSQL keeps at most 256 per lexeme); ``dl`` is the number of
distinct lexemes of the chunk (``length(tsv)``), the length PostgreSQL keeps without
unnesting every chunk (Tantivy counts tokens, quantised; on SciFact abstracts the two give
nearly the same top 10).

:func:`postings_query` reads the ``lexical_stats`` and ``lexeme_df`` rows of the role's groups
(N, avgdl and each query lexeme's df: sums over the rows of the groups the role reads, never
statistics shared by all roles, so scores and order do not depend on documents the role cannot
read), then the ``postings`` of the query's lexemes alone, through their B-tree (``lexeme =
...``: text equality is leakproof, so PostgreSQL uses the index under row-level security, where
``tsv @@ query`` is not and is never pushed into the GIN index). All three tables are kept by
the writes (:mod:`.schema`). The server sends each lexeme's postings as one packed array
(:data:`PACKED`); :func:`bm25_top` scores them here with NumPy (issue 40: scoring 100k postings
row by row in SQL took about 1.5 us a posting, sending them packed about 0.5). Vector search
is pgvector's HNSW with cosine distance, scored ``1 - distance`` (the cosine of the stored
float32 vectors). The queries hold ``{s}`` for the collection's schema and take named
parameters ``q`` (query text), ``v`` (query vector) and ``limit``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.store.base import ScoredChunk

CHUNK_COLUMNS = (
    "c.chunk_id, c.doc_id, d.source, d.title, c.ordinal, c.text, c.char_start, c.char_end,"
    " c.loc_kind, c.loc_number, c.loc_heading, c.sentence_spans::text, c.is_reference,"
    " c.instruction_cues::text, c.ocr::text"
)
"""The columns of ``chunks c JOIN documents d`` that
:func:`~verifai_desktop.store.catalog.chunk_record` reads, in its order."""

K1 = 1.2
"""BM25's term-frequency saturation: Tantivy's and Lucene's default."""
B = 0.75
"""BM25's document-length normalisation: Tantivy's and Lucene's default."""

DL_BITS = 18
"""Bits of ``dl`` in a packed posting: a ``tsvector`` holds at most 1 MB, so fewer than 2**18
lexemes."""
TF_BITS = 9
"""Bits of ``tf`` in a packed posting: PostgreSQL keeps at most 256 positions a lexeme."""
PACKED = f"(chunk_id << {TF_BITS + DL_BITS}) | (tf::int8 << {DL_BITS}) | dl"
"""One posting as an ``int8``: ``chunk_id`` (below 2**36), ``tf``, ``dl`` (see above)."""

_WORDS = (
    "terms AS (SELECT coalesce(array_agg(l), '{{}}') AS lexemes"
    " FROM unnest(tsvector_to_array(to_tsvector('english', %(q)s))) AS l),"
    " stats AS (SELECT coalesce(sum(chunks), 0)::float8 AS n,"
    " coalesce(sum(lexemes)::float8 / nullif(sum(chunks), 0), 1) AS avgdl,"
    " coalesce(array_agg(acl_group), '{{}}') AS groups FROM {s}.lexical_stats),"
    " idf AS (SELECT lexeme, ln(1 + (n - df + 0.5) / (df + 0.5)) AS idf FROM"
    " (SELECT lexeme, sum(df)::float8 AS df FROM {s}.lexeme_df"
    " WHERE lexeme = ANY((SELECT lexemes FROM terms)::text[])"
    " AND acl_group = ANY((SELECT groups FROM stats)::regrole[])"
    " GROUP BY lexeme HAVING sum(df) > 0) AS d CROSS JOIN stats)"
)
"""The query's lexemes (``terms``); N, avgdl and the role's groups (``stats``, from
``lexical_stats``); each readable lexeme's IDF over the chunks the role reads (``idf``, from
``lexeme_df``; lexemes no readable chunk holds left out)."""


def postings_query(chunk_filter: str = "") -> str:
    """The statement reading what BM25 needs for a query: one row per query lexeme that a
    readable chunk holds, in lexeme order, ``(lexeme, idf, avgdl, postings)``: ``idf`` and
    ``avgdl`` float8, ``postings`` the lexeme's readable postings as ``array_send`` of an
    ``int8[]`` of :data:`PACKED` values (:func:`bm25_top` reads them).

    Args:
        chunk_filter: SQL appended to the postings' condition (e.g. ``" AND chunk_id IN
            (...)"``); the statistics stay those of every readable chunk.
    """
    return (
        "WITH " + _WORDS + " SELECT idf.lexeme, idf.idf, stats.avgdl,"
        f" (SELECT array_send(array_agg({PACKED})) FROM {{s}}.postings AS p"
        " WHERE p.lexeme = idf.lexeme AND p.acl_group = ANY(stats.groups::regrole[])"
        + chunk_filter
        + ") FROM idf CROSS JOIN stats ORDER BY idf.lexeme"
    )


POSTINGS = postings_query()
"""What BM25 needs for the query ``q`` (:func:`postings_query`)."""

_HEADER = 20
"""Bytes before the elements of a one-dimensional ``array_send``: dimensions, null flag,
element type, length, lower bound (int32 each)."""
_ELEMENT = np.dtype([("length", ">i4"), ("value", ">i8")])
"""One ``int8`` element of ``array_send``: its byte length (8), then the value, big-endian."""


def unpack(postings: bytes) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """``(chunk_ids, tf, dl)`` of a lexeme's packed postings (:func:`postings_query`): int64,
    float64 and float64 arrays of one length."""
    count = int.from_bytes(postings[12:16], "big") if len(postings) > _HEADER else 0
    values = np.frombuffer(postings, dtype=_ELEMENT, count=count, offset=_HEADER)["value"]
    values = values.astype(np.int64)
    chunk_ids = values >> (TF_BITS + DL_BITS)
    tf = ((values >> DL_BITS) & ((1 << TF_BITS) - 1)).astype(np.float64)
    dl = (values & ((1 << DL_BITS) - 1)).astype(np.float64)
    return chunk_ids, tf, dl


def bm25_top(rows: Sequence[Sequence[object]], limit: int) -> list[ScoredChunk]:
    """BM25 top ``limit`` ``(chunk_id, score)`` of the rows of :func:`postings_query`, best
    first, ties by ascending chunk id. A chunk's terms are added in lexeme order (the rows'),
    so that its score does not depend on the plan."""
    ids: list[NDArray[np.int64]] = []
    terms: list[NDArray[np.float64]] = []
    for _lexeme, idf, avgdl, postings in rows:
        if not isinstance(postings, bytes | memoryview):  # NULL: no readable posting
            continue
        chunk_ids, tf, dl = unpack(bytes(postings))
        norm = K1 * (1 - B + B * dl / float(str(avgdl)))
        ids.append(chunk_ids)
        terms.append(float(str(idf)) * tf * (K1 + 1) / (tf + norm))
    if not ids or limit <= 0:
        return []
    unique, where = np.unique(np.concatenate(ids), return_inverse=True)
    scores = np.bincount(where, weights=np.concatenate(terms), minlength=len(unique))
    order = np.lexsort((unique, -scores))[:limit]
    return [(int(unique[i]), float(scores[i])) for i in order]


SEMANTIC = (
    "SELECT chunk_id, 1 - (embedding <=> %(v)s) AS score FROM {s}.chunks"
    " ORDER BY embedding <=> %(v)s LIMIT %(limit)s"
)
"""HNSW top ``limit``: ``(chunk_id, cosine)`` (ordered by distance alone, so that the index
is used; ties are ordered afterwards, :func:`ranked`)."""


def ranked(rows: Sequence[Sequence[object]]) -> list[ScoredChunk]:
    """``(chunk_id, score)`` rows as hits, best first, ties by ascending chunk id."""
    hits = [(int(str(r[0])), float(str(r[1]))) for r in rows]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits
