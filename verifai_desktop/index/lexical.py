"""The BM25 lexical index (Tantivy) over chunk texts, with English stemming and stop words.

Tantivy scores with BM25 (Robertson & Zaragoza, 2009; k1 = 1.2, b = 0.75). Documents and queries
go through the same analyzer: simple tokenizer, tokens over 40 chars dropped, lowercase, the
English stop-word list, the Snowball English stemmer. Queries are never handed to Tantivy's query
parser: they are analysed into terms and OR-ed as term queries, so user punctuation such as
``COVID-19: (why?)`` cannot break them.

Each chunk also carries its document's reference-manager metadata (issue 43): ``author`` (family
names, lower-cased, accents folded), ``title`` (analysed like the text) and ``year``, which the
``author:``, ``title:`` and ``year:`` terms of a query must match
(:mod:`verifai_desktop.index.fields`). The index folder's layout is versioned
(:data:`LEXICAL_SCHEMA`, recorded in the sidecar): an index of another version counts as stale
and is rebuilt from the catalog when the collection opens, so existing collections keep working.

tantivy is imported on first use, so importing this module (and the collection store above it)
stays cheap for callers that only list collections.
"""

from __future__ import annotations

import functools
import json
import logging
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from verifai_desktop.index.fields import FieldTerm, split_fields
from verifai_desktop.private import make_private_dir, write_private_text
from verifai_desktop.reference import Reference

if TYPE_CHECKING:
    import tantivy

log = logging.getLogger(__name__)

ANALYZER_NAME = "en_stem_stop"
NAME_ANALYZER = "names"
WRITER_HEAP_BYTES = 64_000_000
LEXICAL_SCHEMA = 2
"""1: ``chunk_id``, ``doc_id``, ``text``; 2: ``author``, ``title``, ``year`` (issue 43)."""
_NO_YEAR = 0


def english_analyzer() -> tantivy.TextAnalyzer:
    """Simple tokenizer + remove-long(40) + lowercase + English stop words + English stemmer."""
    import tantivy  # deferred: a native library, loaded when an index is first used

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def name_analyzer() -> tantivy.TextAnalyzer:
    """Simple tokenizer + lowercase + ASCII folding: author names (``Müller`` -> ``muller``)."""
    import tantivy  # deferred: see english_analyzer

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


@functools.cache
def _name_query_analyzer() -> tantivy.TextAnalyzer:
    return name_analyzer()


@functools.cache
def _query_analyzer() -> tantivy.TextAnalyzer:
    """The analyzer queries go through (built once per process)."""
    return english_analyzer()


def query_terms(query: str) -> tuple[str, ...]:
    """Analyse a free-text query into unique index terms, in first-seen order.

    Stop words are removed (as in VerifAI's lexical query) and terms are stemmed exactly as the
    indexed text was, so ``"The running studies"`` gives ``("run", "studi")``.
    """
    seen: dict[str, None] = {}
    for token in _query_analyzer().analyze(query):
        seen.setdefault(token, None)
    return tuple(seen)


def _schema() -> tantivy.Schema:
    import tantivy  # deferred: see english_analyzer

    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("chunk_id", stored=True, indexed=True, fast=True)
    builder.add_integer_field("doc_id", stored=False, indexed=True, fast=True)
    builder.add_text_field("text", stored=False, tokenizer_name=ANALYZER_NAME, index_option="freq")
    builder.add_text_field("author", stored=False, tokenizer_name=NAME_ANALYZER)
    builder.add_text_field("title", stored=False, tokenizer_name=ANALYZER_NAME)
    builder.add_integer_field("year", stored=False, indexed=True, fast=True)
    return builder.build()


def _saved(sidecar: Path) -> tuple[int, int]:
    """``(generation, schema)`` recorded in a sidecar; ``(-1, 0)`` when unreadable."""
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
        return int(data["generation"]), int(data.get("schema", 1))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return -1, 0


def saved_generation(sidecar: Path) -> int:
    """Catalog generation recorded in a lexical index's ``sidecar``; -1 when unknown or when
    the index is of another layout than :data:`LEXICAL_SCHEMA` (it must be rebuilt).

    Reads the JSON file only: Tantivy is not loaded.
    """
    generation, schema = _saved(sidecar)
    return generation if schema == LEXICAL_SCHEMA else -1


def _field_values(ref: Reference | None) -> dict[str, object]:
    """The metadata fields of a chunk whose document has entry ``ref`` (none without one)."""
    if ref is None:
        return {}
    return {"author": " ".join(ref.authors), "title": ref.title, "year": ref.year or _NO_YEAR}


class LexicalIndex:
    """A Tantivy index of chunks keyed by ``chunk_id``, stored in one folder.

    Args:
        folder: the index folder (created if missing).
        sidecar: JSON file recording the catalog generation the committed index reflects.
    """

    def __init__(self, folder: Path, sidecar: Path) -> None:
        self.folder = folder
        self.sidecar = sidecar
        make_private_dir(folder)
        self._index = self._open()
        self._writer: tantivy.IndexWriter | None = None
        self._dirty = False

    def _open(self) -> tantivy.Index:
        import tantivy  # deferred: see english_analyzer

        if _saved(self.sidecar)[1] not in (0, LEXICAL_SCHEMA):  # another layout: rebuilt
            log.info("lexical index at %s is of an older layout; recreating it", self.folder)
            shutil.rmtree(self.folder, ignore_errors=True)
            make_private_dir(self.folder)
            self.sidecar.unlink(missing_ok=True)
        try:
            index = tantivy.Index(_schema(), path=str(self.folder), reuse=True)
        except ValueError as exc:
            # An unreadable or schema-incompatible folder is derived data: start it afresh.
            log.warning("lexical index at %s unreadable (%s); recreating it", self.folder, exc)
            shutil.rmtree(self.folder, ignore_errors=True)
            make_private_dir(self.folder)
            self.sidecar.unlink(missing_ok=True)
            index = tantivy.Index(_schema(), path=str(self.folder), reuse=False)
        index.register_tokenizer(ANALYZER_NAME, english_analyzer())
        index.register_tokenizer(NAME_ANALYZER, name_analyzer())
        return index

    # -- generation ----------------------------------------------------------------------
    def generation(self) -> int:
        """Catalog generation of the last committed state; -1 when unknown."""
        return saved_generation(self.sidecar)

    def _write_generation(self, generation: int) -> None:
        write_private_text(
            self.sidecar, json.dumps({"generation": generation, "schema": LEXICAL_SCHEMA})
        )

    # -- writing -------------------------------------------------------------------------
    def _w(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        return self._writer

    def add(
        self,
        chunk_ids: Sequence[int],
        doc_id: int,
        texts: Sequence[str],
        reference: Reference | None = None,
    ) -> None:
        """Add chunks of one document, with its reference-manager entry's author, title and
        year when it has one (not visible until :meth:`commit`)."""
        self.add_many(
            (
                (int(chunk_id), doc_id, text)
                for chunk_id, text in zip(chunk_ids, texts, strict=True)
            ),
            {doc_id: reference} if reference is not None else None,
        )

    def add_many(
        self,
        rows: Iterable[tuple[int, int, str]],
        references: Mapping[int, Reference] | None = None,
    ) -> None:
        """Add ``(chunk_id, doc_id, text)`` rows, with the metadata fields of the documents in
        ``references`` (by doc_id) (not visible until :meth:`commit`)."""
        import tantivy  # deferred: see english_analyzer

        writer = self._w()
        refs = references or {}
        for chunk_id, doc_id, text in rows:
            writer.add_document(
                tantivy.Document(
                    chunk_id=int(chunk_id),
                    doc_id=int(doc_id),
                    text=text,
                    **_field_values(refs.get(int(doc_id))),
                )
            )
        self._dirty = True

    def delete_document(self, doc_id: int) -> None:
        """Delete every chunk of a document (not visible until :meth:`commit`)."""
        self._w().delete_documents_by_term("doc_id", int(doc_id))
        self._dirty = True

    def commit(self, generation: int) -> None:
        """Publish pending changes, then record ``generation`` in the sidecar."""
        if self._dirty:
            self._w().commit()
            self._dirty = False
        if self.generation() != generation:
            self._write_generation(generation)
        self._index.reload()

    def rebuild(
        self,
        rows: Iterable[tuple[int, int, str]],
        generation: int,
        references: Mapping[int, Reference] | None = None,
    ) -> None:
        """Replace the whole index with ``(chunk_id, doc_id, text)`` rows (and the metadata of
        the documents in ``references``, by doc_id) and commit."""
        writer = self._w()
        writer.delete_all_documents()
        self.add_many(rows, references)
        self._dirty = True
        self.commit(generation)

    def close(self) -> None:
        """Release the Tantivy writer (its lock) after waiting for merges."""
        if self._writer is not None:
            if self._dirty:
                self._writer.rollback()
            self._writer.wait_merging_threads()
            self._writer = None

    # -- reading -------------------------------------------------------------------------
    def reload(self) -> None:
        """Pick up commits made since the last search (by this or another process)."""
        self._index.reload()

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """BM25 top hits for a free-text query.

        Returns:
            ``(chunk_id, bm25_score)`` pairs, best first, ties broken by ascending chunk_id;
            empty when the query has no indexable term (only stop words or punctuation).
        """
        import tantivy  # deferred: see english_analyzer

        free, fields = split_fields(query)
        terms = query_terms(free)
        if (not terms and not fields) or limit <= 0:
            return []
        schema = self._index.schema
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", t)) for t in terms
        ]
        if fields:
            must = [(tantivy.Occur.Must, q) for q in (_field_query(schema, f) for f in fields)]
            if terms:  # the free text ranks the chunks that the fields let through
                clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(clauses))]
            clauses = [*clauses, *must]
        query_obj = tantivy.Query.boolean_query(clauses)
        searcher = self._index.searcher()
        # Ask for a few extra hits so that equal scores at the cut are ordered by chunk_id.
        result = searcher.search(query_obj, limit=limit + 16, count=False)
        hits = result.hits
        if not hits:
            return []
        ids = searcher.fast_field_values("chunk_id", [addr for _, addr in hits])
        pairs = [
            (int(cid), float(score))
            for (score, _), cid in zip(hits, ids, strict=True)
            if cid is not None
        ]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs[:limit]

    def num_chunks(self) -> int:
        """Number of chunks visible to searches."""
        return int(self._index.searcher().num_docs)


def _field_query(schema: tantivy.Schema, term: FieldTerm) -> tantivy.Query:
    """The query one metadata term must match: every word of an author or title term (as the
    field was analysed), or the year range."""
    import tantivy  # deferred: see english_analyzer

    if term.field == "year":
        first, last = term.years
        return tantivy.Query.range_query(schema, "year", tantivy.FieldType.Integer, first, last)
    analyzer = _name_query_analyzer() if term.field == "author" else _query_analyzer()
    words = list(dict.fromkeys(analyzer.analyze(term.value)))
    if not words:  # only stop words: matches nothing rather than everything
        return tantivy.Query.boolean_query([])
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, tantivy.Query.term_query(schema, term.field, w)) for w in words]
    )
