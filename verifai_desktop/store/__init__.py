"""The collection store: the contract the layers above read through, and the embedded store.

Modules, bottom up (imports go one way, down this list):

- ``sources``: where a document comes from, a file or a benchmark corpus
  (:func:`~verifai_desktop.store.sources.is_file_source`).
- ``records``: :class:`~verifai_desktop.store.records.DocumentRecord` and
  :class:`~verifai_desktop.store.records.ChunkRecord`, what the store hands out.
- ``migrations``, ``catalog``: :class:`~verifai_desktop.store.catalog.Catalog`, the source of
  truth (SQLite), and the upgrades of older catalogs when they open.
- ``lock``, ``naming``, ``walk``: the write lock, collection names and folders, walking the
  folders given to an ingest.
- ``history``: the answer history and verdict feedback of a collection.
- ``base``: :class:`~verifai_desktop.store.base.CollectionStore`, the store's contract
  (documents, chunks, lexical and vector search, embedder, status, metadata, history).
- ``indexes``: the search indexes derived from the catalog (Tantivy BM25, usearch HNSW).
- ``folders``: collection folders on disk: listing, renaming, deleting, metadata and history
  by name.
- ``roots``: the folders and files a collection follows.
- ``target``: :class:`~verifai_desktop.store.target.IngestTarget`, the contract plus the writes
  an ingest run makes (every store implements it).
- ``writer``: the ingest runs that write files and pre-parsed documents into a collection.
- ``collection``: :class:`~verifai_desktop.store.collection.Collection`, an opened collection
  of the embedded store (implements the contract).
- ``watch``: folder watching and syncing a collection with its roots.
- ``repair``: rebuilding a damaged collection from its source files.
- ``pg``: the PostgreSQL store (:class:`~verifai_desktop.store.pg.store.PgStore`), a collection
  on a server shared by many desktops, access-controlled by row-level security (the
  ``postgres`` extra; psycopg is imported only when one is opened).
"""
