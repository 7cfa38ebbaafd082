"""Reference-manager entries in the PostgreSQL store, and search by ``author:``, ``year:`` and
``title:`` (issue 43).

A document ingested from a ``.bib``/CSL-JSON file or a Zotero library into a team collection
keeps its entry (:class:`~verifai_desktop.reference.Reference`) in the ``doc_references``
table (:mod:`.schema`): one row per source and group, under the same row-level security as the
documents, with the metadata a query's terms match as columns: ``authors`` (the family names,
lower-cased, accents folded, space-separated), ``year`` and ``title``. Chunks read their
document's entry by a join on the source (:data:`REFERENCE_JOIN`), so that answers over a team
collection cite "(Cohan et al., 2020, p. 3)" as over an embedded one.

A query's metadata terms (:func:`verifai_desktop.index.fields.split_fields`) restrict the
lexical search to the chunks of documents whose entry matches every term, as the embedded
store's Tantivy fields do: ``author:`` every word of the term is one of the family names'
words, ``year:`` the year is in the range, ``title:`` every English word of the term is in the
title (``plainto_tsquery``). The rest of the query ranks them by BM25 (:mod:`.queries`); with
no rest, the chunks of the matching documents come in document order, scored 1.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from verifai_desktop.index.fields import FieldTerm, split_fields
from verifai_desktop.reference import Reference
from verifai_desktop.store.base import ScoredChunk
from verifai_desktop.store.pg.queries import POSTINGS, bm25_top, postings_query, ranked
from verifai_desktop.store.pg.values import read_source, server_errors, stored_source

if TYPE_CHECKING:
    import psycopg

REFERENCE_JOIN = (
    " LEFT JOIN {s}.doc_references r ON r.source = d.source AND r.acl_group = d.acl_group"
)
"""Joined after ``chunks c JOIN documents d``: the document's entry as ``r`` (NULL columns for
a document without one; only a row the role may read)."""


def fold_words(text: str) -> str:
    """Lower case, accents removed, words joined by single spaces (``"Sundström-Berg"`` ->
    ``"sundstrom berg"``), as the embedded index's name analyser folds them."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(re.findall(r"\w+", plain))


def reference_values(source: str, ref: Reference, group: str) -> tuple[object, ...]:
    """The ``doc_references`` row of one entry: ``(source, library, reference, authors, year,
    title, acl_group)``."""
    authors = fold_words(" ".join(ref.authors))
    return (stored_source(source), ref.library, ref.to_json(), authors, ref.year, ref.title, group)


UPSERT_REFERENCE = (
    "INSERT INTO {s}.doc_references AS t (source, library, reference, authors, year, title,"
    " acl_group) VALUES (%s, %s, %s, %s, %s, %s, %s::regrole)"
    " ON CONFLICT (source, acl_group) DO UPDATE SET library = excluded.library,"
    " reference = excluded.reference, authors = excluded.authors, year = excluded.year,"
    " title = excluded.title WHERE t.reference <> excluded.reference"
)
"""Keep an entry (an unchanged one is not written)."""


def field_filter(terms: Sequence[FieldTerm]) -> tuple[str, list[object]]:
    """The condition on ``r`` (a ``doc_references`` row) that every term asks for, and its
    parameters (in order)."""
    parts: list[str] = []
    params: list[object] = []
    for term in terms:
        if term.field == "author":
            parts.append("string_to_array(r.authors, ' ') @> string_to_array(%s, ' ')")
            params.append(fold_words(term.value))
        elif term.field == "year":
            parts.append("r.year BETWEEN %s AND %s")
            params += [term.years[0], term.years[1]]
        else:
            parts.append("to_tsvector('english', r.title) @@ plainto_tsquery('english', %s)")
            params.append(term.value)
    return " AND ".join(parts) or "true", params


def allowed_chunks(schema: str, terms: Sequence[FieldTerm]) -> tuple[str, list[object]]:
    """A subquery of the chunk ids of documents whose entry matches ``terms``."""
    condition, params = field_filter(terms)
    return (
        f"SELECT c.chunk_id FROM {schema}.chunks c JOIN {schema}.documents d USING (doc_id)"
        + REFERENCE_JOIN.format(s=schema)
        + f" WHERE r.source IS NOT NULL AND {condition}"
    ), params


class PgReferences:
    """The PostgreSQL store's part that keeps entries and searches by them (mixed into
    :class:`~verifai_desktop.store.pg.store.PgStore`, whose connection, schema and group it
    uses)."""

    store: str
    _conn: psycopg.Connection[tuple[object, ...]]
    _schema: str
    _group: str
    _readable: bool

    if TYPE_CHECKING:

        def _rows(
            self, query: str, params: Sequence[object] | Mapping[str, object] = ()
        ) -> list[tuple[object, ...]]: ...

        def acquire_write_lock(self) -> None: ...

    def set_references(self, items: Sequence[tuple[str, Reference]]) -> None:
        """Keep the entries of sources for this store's group, in one transaction (unchanged
        ones are not written); the search reads them at once (no index to rewrite)."""
        self.acquire_write_lock()
        rows = [reference_values(source, ref, self._group) for source, ref in items]
        if not rows:
            return
        query = UPSERT_REFERENCE.format(s=self._schema).encode()
        with server_errors(self.store), self._conn.transaction(), self._conn.cursor() as cur:
            cur.executemany(query, rows)

    def forget_references(self, stored: Sequence[str]) -> None:
        """Delete the entries of sources (as stored) in the transaction that removes their
        documents."""
        self._rows(
            f"DELETE FROM {self._schema}.doc_references WHERE source = ANY(%s) RETURNING 1",
            (list(stored),),
        )

    def references_of(self, library: str) -> dict[str, Reference]:
        """The entries kept for the sources of one library (its path), by source, of this
        store's group."""
        if not self._readable:
            return {}
        rows = self._rows(
            f"SELECT source, reference FROM {self._schema}.doc_references"
            " WHERE library = %s AND acl_group = to_regrole(%s)",
            (library, self._group),
        )
        return {read_source(s): Reference.from_json(str(r)) for s, r in rows}

    def lexical_search(self, query: str, limit: int) -> list[ScoredChunk]:
        """BM25 top ``limit`` ``(chunk_id, score)``, best first, ties by ascending chunk id;
        any English word of ``query`` matches (stop words and punctuation ignored). Scores are
        BM25's (> 0; k1 1.2, b 0.75, Tantivy's IDF), with N, avgdl and each word's document
        frequency counted over the chunks this role may read (:mod:`.queries`). Metadata terms
        (``author:``, ``year:``, ``title:``) keep the chunks of the documents whose entry
        matches them (see the module docstring)."""
        if limit <= 0 or not self._readable:
            return []
        free, terms = split_fields(query)
        if not terms:
            return bm25_top(self._rows(POSTINGS.format(s=self._schema), {"q": query}), limit)
        allowed, params = allowed_chunks(self._schema, terms)
        if not free:
            rows = self._rows(
                f"SELECT chunk_id, 1.0 FROM ({allowed}) a ORDER BY chunk_id LIMIT %s",
                [*params, limit],
            )
            return ranked(rows)
        named = allowed.replace("%s", "%(f{})s")
        values: dict[str, object] = {"q": free}
        for i, value in enumerate(params):
            named = named.replace("%(f{})s", f"%(f{i})s", 1)
            values[f"f{i}"] = value
        lexical = postings_query(" AND chunk_id IN ({allowed})")
        return bm25_top(self._rows(lexical.format(s=self._schema, allowed=named), values), limit)
