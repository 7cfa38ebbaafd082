"""VerifAI Desktop: cited answers from your own documents, every sentence verified offline.

The package is layered; a module imports only from its own layer and the layers below it,
never from a layer above, and modules and packages import each other in no cycle (an import
inside a function counts too; ``if TYPE_CHECKING:`` imports, for annotations only, do not).
Bottom to top:

1. ``foundation``: what flows and how it is kept: ``domain`` (frozen dataclasses and result
   types) with ``recognition`` (the provenance of OCR text), ``errors``, ``settings``,
   ``codec`` (answer JSON to and from domain types), and the
   small helpers every layer may use (``names``, ``private``, ``offline``, ``hashing``,
   ``logs``, ``hardware``).
2. ``model files``: which model files are used and where they come from (``modelstore``,
   ``hub``, ``onnx_tools``).
3. ``documents and indexes``: parsing and chunking (``ingest``), the BM25 and HNSW indexes and
   the embedder (``index``).
4. ``store``: a collection behind one protocol (documents, chunks, lexical and vector search,
   history); the embedded Tantivy/usearch/SQLite store is its first implementation.
5. ``stages``: hybrid retrieval (``retrieve``), generation (``generate``), NLI verification
   (``verify``), each knowing nothing of the others' internals.
6. ``use cases``: a question answered and verified (``pipeline``), the collection searched for
   contradicting evidence (``contradictions``), retrieved passages reordered by the verifier's
   evidence probability (``rerank``), an answer or claim check kept in its history
   (``keep``), audit records (``audit``).
7. ``presentation``: the labels' wording, colours and glyphs, Markdown, HTML
   (``presentation``), the export formats and answer files (``answer_files``), the audit
   record's HTML view (``audit_view``), a claim check's
   Markdown and HTML (``check_view``).
8. ``evaluation``: the benchmark runners behind ``verifai eval`` (``evaluate``).
9. ``front ends``: the ``verifai`` command (``cli``) and the Qt app (``ui``), the only place
   PySide6 is imported.

``tests/unit/test_layers.py`` states the same order as data and fails on an upward import, a
cycle, or a module over 600 lines (a module that long holds two jobs).
"""

__version__ = "0.1.0"
