"""The PostgreSQL store's schema: one PostgreSQL schema per collection, its tables, row-level
security, and the upgrades between schema versions.

A collection ``NAME`` lives in the schema ``verifai_NAME`` of the database the URL names:

- ``schema_version``: one row, the version of these tables (:data:`SCHEMA_VERSION`).
- ``config``: the embedder, its dimension, the display name and the owner role (no document
  data; every role that may connect can read it).
- ``documents``: one row per source, as the embedded catalog's, plus ``acl_group``.
- ``chunks``: text, offsets, location, sentence spans, the reference tag, prompt-injection cues,
  ``tsv`` (``to_tsvector('english', text)``, GIN index) and ``embedding`` (``vector(dim)``,
  HNSW index with cosine distance), plus ``acl_group``.
- ``metadata``: JSON records by key (the roots an ingest followed), plus ``acl_group``.
- ``answers`` and ``feedback``: the answer history (:mod:`verifai_desktop.store.pg.history`),
  the columns of the embedded ``history.sqlite`` plus ``asked_by``, the role that asked.

``acl_group`` is a PostgreSQL role (``regrole``). Every table holding document data has row-level
security enabled and forced (the table owner is held to it too), with one policy: a row is
visible, and may be written, when ``pg_has_role(current_user, acl_group, 'MEMBER')``. No role is
given ``BYPASSRLS`` and no function is ``SECURITY DEFINER``: the engine decides what a role
reads. A role dropped after ingest makes its rows invisible (``pg_has_role`` of an unknown role
id is NULL), not an error.

The history tables have row-level security enabled and forced too, with the policy
``asked_by = the connecting role`` (a role id, so that a role created later under a dropped
role's name reads nothing of it): each row is visible to, and written by, the role that asked
alone -- the collection's owner included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from verifai_desktop.errors import InvalidCollectionName, StoreUnavailable

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 3
"""1: the first PostgreSQL schema (issue 27); 2: the answer history (``answers``,
``feedback``); 3: ``chunks.ocr`` (OCR provenance, issue 28)."""

SCHEMA_PREFIX = "verifai_"
"""The PostgreSQL schema of collection ``NAME`` is ``verifai_NAME``."""

_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")

DATA_TABLES = ("documents", "chunks", "metadata")
"""The tables holding document data: row-level security on each, SELECT granted per group."""

HISTORY_TABLES = ("answers", "feedback")
"""The answer history: rows visible to the role that asked alone; granted per group."""

_VISIBLE = "pg_has_role(current_user, acl_group::oid, 'MEMBER')"

_ASKER = "quote_ident(current_user)::regrole"
"""The connecting role, as a role id."""

_HISTORY = """
CREATE TABLE {s}.answers (
    answer_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created double precision NOT NULL,
    question text NOT NULL,
    answer_json text NOT NULL,
    settings_json text NOT NULL,
    documents_json text NOT NULL,
    app_version text NOT NULL,
    asked_by regrole NOT NULL DEFAULT {asker}
);
CREATE INDEX answers_asked_by ON {s}.answers (asked_by, answer_id);
CREATE TABLE {s}.feedback (
    feedback_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    answer_id bigint NOT NULL REFERENCES {s}.answers(answer_id) ON DELETE CASCADE,
    sentence integer NOT NULL,
    passage integer NOT NULL,
    shown text NOT NULL,
    verdict text NOT NULL,
    label text,
    note text NOT NULL DEFAULT '',
    created double precision NOT NULL,
    asked_by regrole NOT NULL DEFAULT {asker},
    UNIQUE (answer_id, sentence, passage)
)
"""

_CREATE = """
CREATE TABLE {s}.schema_version (version integer NOT NULL);
CREATE TABLE {s}.config (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE {s}.documents (
    doc_id bigserial PRIMARY KEY,
    source text NOT NULL UNIQUE,
    title text NOT NULL DEFAULT '',
    sha256 text NOT NULL DEFAULT '',
    size_bytes bigint NOT NULL DEFAULT 0,
    mtime_ns bigint NOT NULL DEFAULT 0,
    format text,
    status text NOT NULL,
    reason text NOT NULL DEFAULT '',
    chunk_count integer NOT NULL DEFAULT 0,
    ingested_at double precision NOT NULL,
    acl_group regrole NOT NULL
);
CREATE TABLE {s}.chunks (
    chunk_id bigserial PRIMARY KEY,
    doc_id bigint NOT NULL REFERENCES {s}.documents(doc_id) ON DELETE CASCADE,
    ordinal integer NOT NULL,
    text text NOT NULL,
    char_start integer NOT NULL,
    char_end integer NOT NULL,
    loc_kind text NOT NULL,
    loc_number integer,
    loc_heading text NOT NULL DEFAULT '',
    sentence_spans jsonb NOT NULL,
    is_reference boolean NOT NULL DEFAULT false,
    instruction_cues jsonb NOT NULL DEFAULT '[]',
    ocr jsonb,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    embedding vector({dim}) NOT NULL,
    acl_group regrole NOT NULL
);
CREATE INDEX chunks_doc ON {s}.chunks (doc_id, ordinal);
CREATE INDEX chunks_tsv ON {s}.chunks USING gin (tsv);
CREATE INDEX chunks_embedding ON {s}.chunks USING hnsw (embedding vector_cosine_ops);
CREATE TABLE {s}.metadata (
    key text PRIMARY KEY,
    value jsonb NOT NULL,
    acl_group regrole NOT NULL
);
GRANT USAGE ON SCHEMA {s} TO PUBLIC;
GRANT SELECT ON {s}.schema_version, {s}.config TO PUBLIC;
"""


def _history_statements(schema: str) -> list[str]:
    statements = _split(_HISTORY.format(s=schema, asker=_ASKER))
    for table in HISTORY_TABLES:
        statements += [
            f"ALTER TABLE {schema}.{table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {schema}.{table} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY {table}_by_asker ON {schema}.{table} FOR ALL"
            f" USING (asked_by = {_ASKER}) WITH CHECK (asked_by = {_ASKER})",
        ]
    return statements


def _ocr_statements(schema: str) -> list[str]:
    return [f"ALTER TABLE {schema}.chunks ADD COLUMN ocr jsonb"]


MIGRATIONS: tuple[Callable[[str], list[str]], ...] = (_history_statements, _ocr_statements)
"""The statements upgrading the tables of version ``i + 1`` to ``i + 2`` (``MIGRATIONS[0]``:
1 -> 2, the answer history; ``MIGRATIONS[1]``: 2 -> 3, ``chunks.ocr``) of a schema; run by the
collection's owner in one transaction when it opens a collection of an older version (the
groups granted the collection are granted what is new)."""


def _split(sql: str) -> list[str]:
    return [part.strip() for part in sql.split(";") if part.strip()]


def schema_name(collection: str) -> str:
    """The PostgreSQL schema of a collection.

    Args:
        collection: lowercase letters, digits and ``_``, starting with a letter, at most 40.

    Raises:
        InvalidCollectionName: another name (a PostgreSQL collection name is an identifier).
    """
    if _NAME.fullmatch(collection) is None:
        raise InvalidCollectionName(
            collection,
            "lowercase letters, digits and '_' in a PostgreSQL store (starting with a letter, "
            "at most 40 characters)",
        )
    return SCHEMA_PREFIX + collection


def create_statements(schema: str, dim: int) -> list[str]:
    """The statements creating a collection's tables, indexes, grants and policies.

    Args:
        schema: from :func:`schema_name` (an identifier, safe to format in).
        dim: the embedder's vector dimension (e.g. 384).
    """
    statements = _split(_CREATE.format(s=schema, dim=int(dim)))
    for table in DATA_TABLES:
        statements += [
            f"ALTER TABLE {schema}.{table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {schema}.{table} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY {table}_by_group ON {schema}.{table} FOR ALL"
            f" USING ({_VISIBLE}) WITH CHECK ({_VISIBLE})",
        ]
    statements += _history_statements(schema)
    statements.append(f"INSERT INTO {schema}.schema_version VALUES ({SCHEMA_VERSION})")
    return statements


def grant_statements(schema: str, group: str) -> list[str]:
    """What a group needs to read a collection and keep its own answer history (row-level
    security does the rest).

    Args:
        schema: from :func:`schema_name`.
        group: a role name, quoted by the caller (``psycopg.sql.Identifier``) when formatted.
    """
    history = ", ".join(f"{schema}.{table}" for table in HISTORY_TABLES)
    return [f"GRANT SELECT ON {schema}.{table} TO {group}" for table in DATA_TABLES] + [
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {history} TO {group}"
    ]


def create_collection(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, name: str, embedder: str, dim: int
) -> None:
    """Create a collection's schema, owned by the connecting role, in one transaction."""
    with conn.transaction():
        conn.execute(f"CREATE SCHEMA {schema}".encode())
        for statement in create_statements(schema, dim):
            conn.execute(statement.encode())
        config = {"embedder": embedder, "dim": str(dim), "display_name": name}
        for key, value in config.items():
            conn.execute(f"INSERT INTO {schema}.config VALUES (%s, %s)".encode(), (key, value))
        conn.execute(f"INSERT INTO {schema}.config VALUES ('owner', current_user)".encode())


def check_version(conn: psycopg.Connection[tuple[object, ...]], schema: str, where: str) -> None:
    """Check a collection's schema version; upgrade an older one (its owner only).

    Raises:
        StoreUnavailable: not a VerifAI collection, made by a newer version, or older and this
            role does not own it (kind ``schema``).
    """
    from psycopg import errors

    try:
        row = conn.execute(f"SELECT version FROM {schema}.schema_version".encode()).fetchone()
    except errors.UndefinedTable:
        raise StoreUnavailable(
            where, "schema", f"schema {schema} exists but is not a VerifAI collection"
        ) from None
    version = int(str(row[0])) if row else 0
    if version > SCHEMA_VERSION:
        raise StoreUnavailable(
            where,
            "schema",
            f"collection schema version {version} is newer than this app reads "
            f"({SCHEMA_VERSION}); update VerifAI Desktop",
        )
    if version == SCHEMA_VERSION:
        return
    try:
        with conn.transaction():
            for migration in MIGRATIONS[version - 1 :]:
                for statement in migration(schema):
                    conn.execute(statement.encode())
            _grant_again(conn, schema)
            conn.execute(
                f"UPDATE {schema}.schema_version SET version = %s".encode(), (SCHEMA_VERSION,)
            )
    except errors.InsufficientPrivilege:
        raise StoreUnavailable(
            where,
            "schema",
            f"collection schema version {version} is older than this app's ({SCHEMA_VERSION});"
            " its owner must open it once to upgrade it",
        ) from None


def _grant_again(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> None:
    """Grant every group that may read the collection what :func:`grant_statements` grants
    now (after an upgrade added tables)."""
    from psycopg import sql

    rows = conn.execute(
        "SELECT DISTINCT grantee FROM information_schema.role_table_grants"
        " WHERE table_schema = %s AND table_name = 'documents' AND privilege_type = 'SELECT'"
        " AND grantee <> current_user",
        (schema,),
    ).fetchall()
    for (grantee,) in rows:
        group = sql.Identifier(str(grantee)).as_string(conn)
        for statement in grant_statements(schema, group):
            conn.execute(statement.encode())
