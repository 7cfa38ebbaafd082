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
- ``metadata``: JSON records by key and group (the roots an ingest for that group followed),
  one row per ``(key, acl_group)``.
- ``postings``: the lexical search's inverted index, one row per lexeme of each chunk's
  ``tsv`` (``tf``: its positions, ``dl``: the chunk's distinct lexemes), plus ``acl_group``;
  a B-tree on ``(lexeme, acl_group)`` (text and role-id equality are leakproof, so under
  row-level security the search reads the postings of the query's lexemes through it, where
  ``tsv @@ query`` could not use the GIN index); deleted with their chunk.
- ``lexical_stats``: per group, its chunks and the sum of their ``dl`` (BM25's N and avgdl of
  the chunks a role reads are the sums over its groups' rows).
- ``lexeme_df``: per lexeme and group, the chunks of the group holding it (BM25's document
  frequency of a lexeme over the chunks a role reads is the sum over its groups' rows), so
  that a search knows every query word's IDF before it reads a posting; a lexeme no chunk of
  a group holds any more keeps a row of zero.
- ``doc_references``: a source's reference-manager entry per group, with ``authors``, ``year``
  and ``title`` as columns for the search's metadata terms (:mod:`.references`, issue 43).

``postings``, ``lexical_stats`` and ``lexeme_df`` are written by the store's writes in the
transaction that writes or deletes the chunks (:mod:`verifai_desktop.store.pg.store`); a role
reads the rows of its groups alone (row-level security as below), which say no more than the
chunks it reads.
- ``answers`` and ``feedback``: the answer history (:mod:`verifai_desktop.store.pg.history`),
  the columns of the embedded ``history.sqlite`` plus ``asked_by``, the role that asked.

``acl_group`` is a PostgreSQL role (``regrole``). Every table holding document data has row-level
security enabled and forced (the table owner is held to it too), with one policy: a row is
visible, and may be written, when ``acl_group`` is one of the roles the connecting role is a
member of (``pg_has_role(current_user, role, 'MEMBER')``, directly or through other roles). The
set is computed once a statement (an uncorrelated ``ARRAY(SELECT ... FROM pg_roles)``), not once
a row: schema 7 (issue 40) made the policy so, since calling ``pg_has_role`` for every posting
a search read took about half of its time on the server. No role is given ``BYPASSRLS`` and no
function is ``SECURITY DEFINER``: the engine decides what a role reads. A role dropped after
ingest makes its rows invisible (no longer in ``pg_roles``), not an error.

The history tables have row-level security enabled and forced too, with the policy
``asked_by = the connecting role`` (a role id, so that a role created later under a dropped
role's name reads nothing of it): each row is visible to, and written by, the role that asked
alone; a judgement (``feedback``) may only be attached to an answer its role can see. The
collection's owner owns these tables, so it (and any member of its role, and a superuser) can
turn the policy off and read every role's history: row-level security keeps users from each
other, not from the owner.

Before the owner writes (:func:`.ownership.check_owned`), the schema, every table in it, row-
level security (enabled and forced) and the policies are checked to be the ones this module
makes, owned by the writing role: a schema another role made first under the collection's name
is refused, never written into.

Role names are always quoted as identifiers (``psycopg.sql.Identifier``) wherever they become
SQL or a ``regrole``: ``Finance`` and ``finance`` are two roles.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from verifai_desktop.errors import InvalidCollectionName, StoreUnavailable

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 7
"""1: the first PostgreSQL schema (issue 27); 2: the answer history (``answers``,
``feedback``); 3: ``chunks.ocr`` (OCR provenance, issue 28); 4: ``metadata`` one row per key
and group, feedback only on an answer its role can see (issue 41); 5: ``postings`` and
``lexical_stats``, BM25's statistics kept at write time (issue 40); 6: ``doc_references``,
the reference-manager entries of documents (issue 43); 7: ``lexeme_df``, the document
frequencies kept at write time, and the group policy computing a role's groups once a
statement (issue 40)."""

SCHEMA_PREFIX = "verifai_"
"""The PostgreSQL schema of collection ``NAME`` is ``verifai_NAME``."""

_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")

DATA_TABLES = (
    "documents",
    "chunks",
    "metadata",
    "postings",
    "lexical_stats",
    "doc_references",
    "lexeme_df",
)
"""The tables holding document data: row-level security on each, SELECT granted per group."""

HISTORY_TABLES = ("answers", "feedback")
"""The answer history: rows visible to the role that asked alone; granted per group."""

_VISIBLE = (
    "acl_group::oid = ANY (ARRAY(SELECT oid FROM pg_catalog.pg_roles"
    " WHERE pg_has_role(current_user, oid, 'MEMBER')))"
)
"""The policy of :data:`DATA_TABLES`: the row's group is one of the connecting role's."""

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
    key text NOT NULL,
    value jsonb NOT NULL,
    acl_group regrole NOT NULL,
    PRIMARY KEY (key, acl_group)
);
{lexical};
{frequencies};
{references};
GRANT USAGE ON SCHEMA {s} TO PUBLIC;
GRANT SELECT ON {s}.schema_version, {s}.config TO PUBLIC;
"""


_LEXICAL = """
CREATE TABLE {s}.postings (
    chunk_id bigint NOT NULL REFERENCES {s}.chunks(chunk_id) ON DELETE CASCADE,
    lexeme text NOT NULL,
    tf integer NOT NULL,
    dl integer NOT NULL,
    acl_group regrole NOT NULL,
    PRIMARY KEY (chunk_id, lexeme)
);
CREATE INDEX postings_lexeme ON {s}.postings (lexeme, acl_group) INCLUDE (chunk_id, tf, dl);
CREATE TABLE {s}.lexical_stats (
    acl_group regrole PRIMARY KEY,
    chunks bigint NOT NULL,
    lexemes bigint NOT NULL
)
"""
"""The lexical search's tables (schema version 5)."""

_FREQUENCIES = """
CREATE TABLE {s}.lexeme_df (
    lexeme text NOT NULL,
    acl_group regrole NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (lexeme, acl_group)
)
"""
"""The lexical search's document frequencies per lexeme and group (schema version 7)."""

_REFERENCES = """
CREATE TABLE {s}.doc_references (
    source text NOT NULL,
    library text NOT NULL,
    reference text NOT NULL,
    authors text NOT NULL DEFAULT '',
    year integer,
    title text NOT NULL DEFAULT '',
    acl_group regrole NOT NULL,
    PRIMARY KEY (source, acl_group)
);
CREATE INDEX doc_references_library ON {s}.doc_references (library, acl_group)
"""
"""The reference-manager entries of sources (schema version 6; :mod:`.references`): the entry
as :meth:`Reference.to_json <verifai_desktop.reference.Reference.to_json>` and the columns a
query's ``author:``, ``year:`` and ``title:`` terms match."""


def _secured(schema: str, table: str) -> list[str]:
    """Row-level security of a table of :data:`DATA_TABLES`: enabled, forced, by group."""
    return [
        f"ALTER TABLE {schema}.{table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {schema}.{table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY {table}_by_group ON {schema}.{table} FOR ALL"
        f" USING ({_VISIBLE}) WITH CHECK ({_VISIBLE})",
    ]


def postings_statement(schema: str, where: str) -> str:
    """The statement adding the postings of the chunks ``where`` selects (a condition on
    ``c``, the chunks), from their ``tsv``: a lexeme's ``tf`` is its positions (at least 1),
    ``dl`` the chunk's distinct lexemes."""
    return (
        f"INSERT INTO {schema}.postings (chunk_id, lexeme, tf, dl, acl_group)"
        " SELECT c.chunk_id, u.lexeme, coalesce(array_length(u.positions, 1), 1),"
        f" length(c.tsv), c.acl_group FROM {schema}.chunks c, unnest(c.tsv) AS u WHERE {where}"
    )


def frequencies_statement(schema: str, rows: str, sign: str = "+") -> str:
    """The statement adding (``sign`` ``+``) or taking away (``-``) the postings ``rows``
    names (a relation with ``lexeme`` and ``acl_group``, one row per chunk holding the lexeme)
    to the document frequencies of ``lexeme_df``."""
    return (
        f"INSERT INTO {schema}.lexeme_df AS t (lexeme, acl_group, df)"
        f" SELECT lexeme, acl_group, {sign}count(*) FROM {rows} GROUP BY lexeme, acl_group"
        " ON CONFLICT (lexeme, acl_group) DO UPDATE SET df = t.df + excluded.df"
    )


def stats_statement(schema: str, rows: str, sign: str = "+") -> str:
    """The statement adding (``sign`` ``+``) or taking away (``-``) the chunks ``rows`` names
    (a relation with ``acl_group`` and ``dl``) to their groups' ``lexical_stats``; a group
    left with no chunks keeps a row of zeros."""
    return (
        f"INSERT INTO {schema}.lexical_stats AS t (acl_group, chunks, lexemes)"
        f" SELECT acl_group, {sign}count(*), {sign}sum(dl) FROM {rows} GROUP BY acl_group"
        " ON CONFLICT (acl_group) DO UPDATE SET chunks = t.chunks + excluded.chunks,"
        " lexemes = t.lexemes + excluded.lexemes"
    )


def _lexical_statements(schema: str) -> list[str]:
    """Schema 4 -> 5: the lexical tables, filled from the chunks there are. Row-level security
    is forced again only after the fill (the owner, who runs it, then reads every group's
    chunks, also those of groups it is no longer a member of)."""
    statements = _split(_LEXICAL.format(s=schema))
    for table in ("postings", "lexical_stats"):
        statements += _secured(schema, table)
        statements.append(f"ALTER TABLE {schema}.{table} NO FORCE ROW LEVEL SECURITY")
    statements.append(f"ALTER TABLE {schema}.chunks NO FORCE ROW LEVEL SECURITY")
    statements.append(postings_statement(schema, "true"))
    statements.append(
        stats_statement(schema, f"(SELECT acl_group, length(tsv) AS dl FROM {schema}.chunks) c")
    )
    for table in ("chunks", "postings", "lexical_stats"):
        statements.append(f"ALTER TABLE {schema}.{table} FORCE ROW LEVEL SECURITY")
    return statements


def _frequencies_statements(schema: str) -> list[str]:
    """Schema 6 -> 7: the policy of :data:`DATA_TABLES` computing the role's groups once a
    statement; ``lexeme_df``, counted from the postings there are (row-level security forced
    again after the fill, as in :func:`_lexical_statements`)."""
    statements = [
        f"ALTER POLICY {table}_by_group ON {schema}.{table}"
        f" USING ({_VISIBLE}) WITH CHECK ({_VISIBLE})"
        for table in DATA_TABLES
        if table != "lexeme_df"
    ]
    statements += _split(_FREQUENCIES.format(s=schema)) + _secured(schema, "lexeme_df")
    for table in ("postings", "lexeme_df"):
        statements.append(f"ALTER TABLE {schema}.{table} NO FORCE ROW LEVEL SECURITY")
    statements.append(frequencies_statement(schema, f"{schema}.postings"))
    for table in ("postings", "lexeme_df"):
        statements.append(f"ALTER TABLE {schema}.{table} FORCE ROW LEVEL SECURITY")
    return statements


def _references_statements(schema: str) -> list[str]:
    """Schema 5 -> 6: the ``doc_references`` table, under the documents' row-level security."""
    return _split(_REFERENCES.format(s=schema)) + _secured(schema, "doc_references")


def _policy_check(schema: str, table: str) -> str:
    """The ``WITH CHECK`` of a history table's policy: the row is the connecting role's, and a
    judgement names an answer that role can see (the foreign key alone would let any role
    attach rows to another's answers, and tell whether an answer id exists)."""
    if table == "feedback":
        return (
            f"asked_by = {_ASKER} AND EXISTS (SELECT 1 FROM {schema}.answers a"
            " WHERE a.answer_id = feedback.answer_id)"
        )
    return f"asked_by = {_ASKER}"


def _history_statements(schema: str) -> list[str]:
    statements = _split(_HISTORY.format(s=schema, asker=_ASKER))
    for table in HISTORY_TABLES:
        statements += [
            f"ALTER TABLE {schema}.{table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {schema}.{table} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY {table}_by_asker ON {schema}.{table} FOR ALL"
            f" USING (asked_by = {_ASKER}) WITH CHECK ({_policy_check(schema, table)})",
        ]
    return statements


def _ocr_statements(schema: str) -> list[str]:
    return [f"ALTER TABLE {schema}.chunks ADD COLUMN ocr jsonb"]


def _group_rows_statements(schema: str) -> list[str]:
    return [
        f"ALTER TABLE {schema}.metadata DROP CONSTRAINT metadata_pkey",
        f"ALTER TABLE {schema}.metadata ADD PRIMARY KEY (key, acl_group)",
        f"DROP POLICY feedback_by_asker ON {schema}.feedback",
        f"CREATE POLICY feedback_by_asker ON {schema}.feedback FOR ALL"
        f" USING (asked_by = {_ASKER}) WITH CHECK ({_policy_check(schema, 'feedback')})",
    ]


MIGRATIONS: tuple[Callable[[str], list[str]], ...] = (
    _history_statements,
    _ocr_statements,
    _group_rows_statements,
    _lexical_statements,
    _references_statements,
    _frequencies_statements,
)
"""The statements upgrading the tables of version ``i + 1`` to ``i + 2`` (``MIGRATIONS[0]``:
1 -> 2, the answer history; ``MIGRATIONS[1]``: 2 -> 3, ``chunks.ocr``; ``MIGRATIONS[2]``:
3 -> 4, ``metadata`` per group and the feedback policy; ``MIGRATIONS[3]``: 4 -> 5, the lexical
tables; ``MIGRATIONS[4]``: 5 -> 6, ``doc_references``; ``MIGRATIONS[5]``: 6 -> 7,
``lexeme_df`` and the policy computing a role's groups once a statement) of a schema; run by
the collection's owner in one transaction when it opens a collection of an older version (the
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
    parts = {
        "lexical": _LEXICAL.format(s=schema).strip(),
        "frequencies": _FREQUENCIES.format(s=schema).strip(),
        "references": _REFERENCES.format(s=schema).strip(),
    }
    statements = _split(_CREATE.format(s=schema, dim=int(dim), **parts))
    for table in DATA_TABLES:
        statements += _secured(schema, table)
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


def lock_key(schema: str) -> int:
    """The advisory lock key of a collection's schema (a signed 32-bit int of its CRC-32)."""
    key = zlib.crc32(schema.encode())
    return key - (1 << 32) if key >= 1 << 31 else key


def create_collection(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, name: str, embedder: str, dim: int
) -> bool:
    """Create a collection's schema, owned by the connecting role, in one transaction, unless
    it exists by then (another session created it first: the two wait for each other on a
    transaction advisory lock).

    Returns:
        True when this call created it, False when it was there.
    """
    with conn.transaction():
        # Two keys: a lock space apart from the session lock a writer holds (store.py).
        conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (lock_key(schema),))
        there = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        if there.fetchone() is not None:
            return False
        conn.execute(f"CREATE SCHEMA {schema}".encode())
        for statement in create_statements(schema, dim):
            conn.execute(statement.encode())
        config = {"embedder": embedder, "dim": str(dim), "display_name": name}
        for key, value in config.items():
            conn.execute(f"INSERT INTO {schema}.config VALUES (%s, %s)".encode(), (key, value))
        conn.execute(f"INSERT INTO {schema}.config VALUES ('owner', current_user)".encode())
    return True


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
