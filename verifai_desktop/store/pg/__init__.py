"""The PostgreSQL store (``pip install 'verifai-desktop[postgres]'``): a collection in a
PostgreSQL database with pgvector, shared by many desktops, access-controlled by the server.

Modules, bottom up: ``schema`` (tables, indexes, row-level security, upgrades), ``connect``
(connecting, with a clear error per failure), ``values`` (sources and metadata as the server
keeps them, its errors as the app's), ``store`` (:class:`~verifai_desktop.store.pg.
store.PgStore`, the store contract over them). Nothing here imports psycopg until a PostgreSQL
store is opened.
"""
