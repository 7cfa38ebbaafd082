"""The collection store: the SQLite catalog, the derived indexes and the single writer.

- ``catalog``: :class:`~verifai_desktop.store.catalog.Catalog`, the source of truth (SQLite).
- ``migrations``: upgrades of older catalogs when they open (schema 2: reference-list tags).
- ``collection``: :class:`~verifai_desktop.store.collection.Collection`, the facade over a
  collection folder (catalog + Tantivy BM25 + usearch HNSW).
- ``writer``: the ingest run that writes files into a collection.
"""
