"""The PostgreSQL store's search queries.

Lexical search is BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework:
BM25 and Beyond") computed in SQL, in Tantivy's form (the embedded store's,
``tantivy::query::bm25``; Lucene's ``BM25Similarity`` has the same IDF and constants): for
each query lexeme ``t`` in chunk ``d``

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)),
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)),  k1 = 1.2, b = 0.75,

summed over the query's distinct English lexemes (``to_tsvector('english', query)``: the
query text is never read as tsquery syntax). Candidates are the chunks holding any query
lexeme, like the embedded BM25's OR query. ``tf`` is the number of positions of the lexeme in
the chunk's ``tsvector`` (PostgreSQL keeps at most 256 per lexeme); ``dl`` is the number of
distinct lexemes of the chunk (``length(tsv)``), the length PostgreSQL keeps without
unnesting every chunk (Tantivy counts tokens, quantised; on SciFact abstracts the two give
nearly the same top 10).

The statement reads the ``postings`` of the query's lexemes alone, through their B-tree
(``lexeme = ANY(...)``: text equality is leakproof, so PostgreSQL uses the index under
row-level security, where ``tsv @@ query`` is not and is never pushed into the GIN index), and
the ``lexical_stats`` rows of the role's groups; both tables are kept by the writes
(:mod:`.schema`). ``N`` and ``avgdl`` are the sums over the rows of ``lexical_stats`` the role
reads, ``df`` the postings of the lexeme the role reads: all counted over the chunks the role
may read, never over statistics shared by all roles, so scores and order do not depend on
documents the role cannot read. Its cost grows with the postings of the query's lexemes, not
with the collection. Vector search is pgvector's HNSW with cosine distance, scored ``1 -
distance`` (the cosine of the stored float32 vectors). :data:`HYBRID` runs both in one
statement. The queries hold ``{s}`` for the collection's schema and take named parameters
``q`` (query text), ``v`` (query vector) and ``limit``.
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

K1 = 1.2
"""BM25's term-frequency saturation: Tantivy's and Lucene's default."""
B = 0.75
"""BM25's document-length normalisation: Tantivy's and Lucene's default."""

# The postings of the query's lexemes that the role reads (row-level security filters each
# one; the index condition acl_group = ANY(groups) skips the other groups' postings first):
# df of a lexeme is their count, N and avgdl come from the groups' lexical_stats rows. A chunk's
# terms are summed in lexeme order, so that its score does not depend on the plan.
LEXICAL = (
    "WITH terms AS (SELECT coalesce(array_agg(l), '{{}}') AS lexemes"
    " FROM unnest(tsvector_to_array(to_tsvector('english', %(q)s))) AS l),"
    " stats AS (SELECT coalesce(sum(chunks), 0)::float8 AS n,"
    " coalesce(sum(lexemes)::float8 / nullif(sum(chunks), 0), 1) AS avgdl,"
    " coalesce(array_agg(acl_group), '{{}}') AS groups FROM {s}.lexical_stats),"
    " tf AS (SELECT chunk_id, dl::float8 AS dl, lexeme, tf::float8 AS tf FROM {s}.postings"
    " WHERE lexeme = ANY((SELECT lexemes FROM terms)::text[])"
    " AND acl_group = ANY((SELECT groups FROM stats)::regrole[])),"
    " idf AS (SELECT lexeme, ln(1 + (n - count(*) + 0.5) / (count(*) + 0.5)) AS idf"
    " FROM tf, stats GROUP BY lexeme, n)"
    f" SELECT chunk_id, sum(idf * tf * {K1 + 1} / (tf + {K1} * (1 - {B} + {B} * dl / avgdl))"
    " ORDER BY lexeme)::float8 AS score FROM tf JOIN idf USING (lexeme) CROSS JOIN stats"
    " GROUP BY chunk_id ORDER BY score DESC, chunk_id LIMIT %(limit)s"
)
"""BM25 top ``limit`` of the chunks holding any query lexeme: ``(chunk_id, score)``."""

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
