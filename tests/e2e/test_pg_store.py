"""The PostgreSQL store (store/pg/) against a real PostgreSQL 16 with pgvector, started from the
``pgserver`` package (the test extra), with the bundled embedder and files of docs/clean.

One server and one collection ``team`` serve the module. Roles: ``vowner`` (ingests, member of
both groups), groups ``team_a`` and ``team_b`` (no login), ``alice`` (in team_a), ``bob`` (in
team_b) and ``eve`` (in no group). The two deep-rules chapters are ingested for team_a through
the real ``verifai ingest --store URL --acl team_a`` command; the privacy chapter and the SciFact
description for team_b through :meth:`PgStore.add_paths`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import DOCS_CLEAN, REPO_ROOT
from tests.e2e.cli import run_verifai
from verifai_desktop.domain import DocStatus
from verifai_desktop.errors import StoreUnavailable
from verifai_desktop.recognition import Recognition, WordBox
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import RetrievalSettings
from verifai_desktop.store.catalog import DocumentMeta
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.writer import ingest_paths

pgserver = pytest.importorskip(
    "pgserver", reason="pgserver is not installed (the test extra): no PostgreSQL to test with"
)
pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

TEAM_A = ("deep_rules_02_intro.md", "deep_rules_09_overfitting.md")
TEAM_B = ("deep_rules_12_privacy.md", "scifact_data_description.md")
ROLES = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE ROLE vowner LOGIN;
GRANT CREATE ON DATABASE postgres TO vowner;
CREATE ROLE team_a;
CREATE ROLE team_b;
GRANT team_a, team_b TO vowner;
CREATE ROLE alice LOGIN IN ROLE team_a;
CREATE ROLE bob LOGIN IN ROLE team_b;
CREATE ROLE eve LOGIN;
CREATE DATABASE novector;
"""


class Server:
    """The running server: its socket folder and ``psql`` as the superuser."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.host = str(server.get_uri()).split("host=", 1)[1]

    def url(self, role: str, database: str = "postgres") -> str:
        """A URL for ``role`` (no password: the socket trusts local roles)."""
        return f"postgresql://{role}@/{database}?host={self.host}"

    def psql(self, sql: str) -> str:
        return str(self.server.psql(sql))

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        """The rows of ``query`` run as the superuser."""
        import psycopg

        with psycopg.connect(str(self.server.get_uri())) as conn:
            return conn.execute(query.encode()).fetchall()


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A PostgreSQL server with pgvector and the roles above, stopped after the module."""
    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    try:
        s = Server(server)
        s.psql(ROLES)
        yield s
    finally:
        server.cleanup()


@pytest.fixture(scope="module")
def team(pg: Server) -> Server:
    """Collection ``team`` with two documents per group (one through the CLI)."""
    proc = run_verifai(
        "ingest",
        *(str(DOCS_CLEAN / n) for n in TEAM_A),
        "--collection",
        "team",
        "--store",
        pg.url("vowner"),
        "--acl",
        "team_a",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["counts"] == {"indexed": 2}
    with PgStore.open(pg.url("vowner"), "team", acl="team_b") as store:
        report = ingest_paths(store, [DOCS_CLEAN / n for n in TEAM_B])
    assert dict(report.counts) == {"indexed": 2}
    return pg


def _names(store: PgStore) -> list[str]:
    return [d.path.name for d in store.documents()]


def _search(store: PgStore, query: str, mode: str = "hybrid") -> list[str]:
    settings = RetrievalSettings(mode=mode)  # type: ignore[arg-type]
    return [p.path.name for p in Retriever(store, settings).search(query, k=5)]


def test_search_finds_the_document_in_both_fusion_modes(team: Server) -> None:
    with PgStore.open(team.url("vowner"), "team") as store:
        assert _names(store) == sorted([*TEAM_A, *TEAM_B])
        for mode in ("hybrid", "rrf"):
            hits = _search(store, "how to detect and avoid overfitting", mode)
            assert hits[0] == "deep_rules_09_overfitting.md", (mode, hits)
        vector = store.embedder().embed(["overfitting"])[0]
        assert store.hybrid_search("overfitting regularization", vector, 10) == (
            store.lexical_search("overfitting regularization", 10),
            store.vector_search(vector, 10),
        )
        # Query text is never tsquery syntax.
        tricky = store.lexical_search("overfitting's \\ back'slash: & | ! (test) <-> :*", 5)
        assert tricky == store.lexical_search("overfitting back slash test", 5) != []
        assert store.lexical_search("the of and & | !", 5) == []


def test_the_retriever_asks_the_server_once_for_both_engines(
    team: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hybrid and RRF search take both engines' hits from one statement (a spy counts the
    calls; the hits and their fusion are real)."""
    with PgStore.open(team.url("vowner"), "team") as store:
        calls: list[str] = []

        def spy(name: str) -> Callable[..., Any]:
            method = getattr(store, name)

            def counted(*args: Any) -> Any:
                calls.append(name)
                return method(*args)

            return counted

        for name in ("lexical_search", "vector_search", "hybrid_search"):
            monkeypatch.setattr(store, name, spy(name))
        for mode in ("hybrid", "rrf"):
            assert _search(store, "overfitting", mode)
        assert calls == ["hybrid_search", "hybrid_search"]
        assert _search(store, "overfitting", "lexical") and _search(
            store, "overfitting", "semantic"
        )
        assert calls[2:] == ["lexical_search", "vector_search"]


def test_ingest_for_a_group_the_role_is_not_in_is_refused(team: Server) -> None:
    with pytest.raises(StoreUnavailable, match="not a member of 'team_a'") as err:
        PgStore.open(team.url("bob"), "team", acl="team_a")
    assert err.value.kind == "permission"
    with pytest.raises(StoreUnavailable, match="no role named") as err:
        PgStore.open(team.url("vowner"), "team", acl="no_such_group")


def test_ingest_again_skips_unchanged_files_by_hash(team: Server) -> None:
    with PgStore.open(team.url("vowner"), "team", acl="team_b") as store:
        report = ingest_paths(store, [DOCS_CLEAN / n for n in TEAM_B])
    assert dict(report.counts) == {"skipped": 2}


def test_disjoint_groups_see_disjoint_documents_and_chunks(team: Server) -> None:
    with (
        PgStore.open(team.url("alice"), "team") as alice,
        PgStore.open(team.url("bob"), "team") as bob,
    ):
        assert _names(alice) == list(TEAM_A)
        assert _names(bob) == list(TEAM_B)
        a_ids = {c for d in alice.documents() for c in alice.document_chunk_ids(d.doc_id)}
        b_ids = {c for d in bob.documents() for c in bob.document_chunk_ids(d.doc_id)}
        assert a_ids and b_ids and not a_ids & b_ids
        assert alice.num_chunks() == len(a_ids)
        # Neither by search nor by id nor by source does a role reach the other group's text.
        assert set(_search(alice, "privacy of patient data")) <= set(TEAM_A)
        assert set(_search(bob, "overfitting")) <= set(TEAM_B)
        assert alice.chunks(sorted(b_ids)) == {}
        assert alice.document(str(DOCS_CLEAN / TEAM_B[0])) is None
    proc = run_verifai(
        "search", "privacy", "--collection", "team", "--store", team.url("bob"), "--json"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = {Path(p["path"]).name for p in json.loads(proc.stdout)["passages"]}
    assert found and found <= set(TEAM_B)


def test_a_role_in_no_group_sees_an_empty_collection(team: Server) -> None:
    with PgStore.open(team.url("eve"), "team") as eve:
        assert eve.documents() == []
        assert eve.num_chunks() == 0
        assert _search(eve, "overfitting") == []
    proc = run_verifai("status", "--collection", "team", "--store", team.url("eve"), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["documents"] == []


def test_row_level_security_is_forced_and_nothing_bypasses_it(team: Server) -> None:
    forced = team.rows(
        "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class"
        " WHERE relnamespace = 'verifai_team'::regnamespace AND relkind = 'r' ORDER BY relname"
    )
    assert [r for r in forced if r[1] or r[2]] == [
        ("chunks", True, True),
        ("documents", True, True),
        ("metadata", True, True),
    ]
    assert {r[0] for r in forced} == {"chunks", "config", "documents", "metadata", "schema_version"}
    assert team.rows("SELECT rolname FROM pg_roles WHERE rolbypassrls AND NOT rolsuper") == []
    assert team.rows("SELECT proname FROM pg_proc WHERE prosecdef") == []


def _chunks_of(store: PgStore, name: str) -> list[int]:
    doc = store.document(str(DOCS_CLEAN / name))
    assert doc is not None
    return store.document_chunk_ids(doc.doc_id)


def test_a_failing_commit_leaves_the_document_as_it_was(team: Server) -> None:
    """A chunk the server refuses (a vector of the wrong dimension) half-way through a
    document: neither the new document nor any of its chunks is written; a document written
    again keeps its old chunks."""
    source = str(DOCS_CLEAN / TEAM_A[0])
    with PgStore.open(team.url("vowner"), "team", acl="team_a") as store:
        before = _chunks_of(store, TEAM_A[0])
        old = store.chunks(before)
        chunks = tuple(r.chunk for r in old.values())
        vectors = np.empty(len(chunks), dtype=object)  # the last one of 3 dimensions, not 384
        vectors[:] = [np.ones(384, np.float32)] * (len(chunks) - 1) + [np.ones(3, np.float32)]
        for meta in (
            DocumentMeta(source, "changed", "f" * 64, 1, 1, None),
            DocumentMeta("/nowhere/new.md", "new", "e" * 64, 1, 1, None),
        ):
            with pytest.raises(Exception, match="dimensions"):
                store.commit([(meta, DocStatus.INDEXED, "", chunks, vectors)])
        assert _chunks_of(store, TEAM_A[0]) == before
        assert store.chunks(before) == old
        assert store.document("/nowhere/new.md") is None
        assert store.num_chunks() == sum(d.chunk_count for d in store.documents())


KILLED_WRITER = """
import sys, time
from pathlib import Path
from verifai_desktop.domain import DocStatus
from verifai_desktop.store.catalog import DocumentMeta
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.writer import ingest_paths

class Stalls:
    def __init__(self, n): self.n = n
    def __len__(self): return self.n
    def __iter__(self):
        print("in transaction", flush=True)
        time.sleep(600)
        yield from ()

store = PgStore.open(sys.argv[1], "team", acl="team_a")
doc = store.document(sys.argv[2])
records = store.chunks(store.document_chunk_ids(doc.doc_id))
chunks = tuple(r.chunk for r in records.values())
meta = DocumentMeta(sys.argv[2], "half written", "0" * 64, 1, 1, None)
store.commit([(meta, DocStatus.INDEXED, "", chunks, Stalls(len(chunks)))])
"""


def test_a_writer_killed_mid_document_leaves_no_partial_document(team: Server) -> None:
    """SIGKILL while a document's transaction is open (its row updated and its old chunks
    deleted, the new ones not yet written): the document stays whole as it was."""
    source = str(DOCS_CLEAN / TEAM_A[1])
    with PgStore.open(team.url("vowner"), "team") as store:
        before = (store.document(source), _chunks_of(store, TEAM_A[1]))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(KILLED_WRITER), team.url("vowner"), source],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "in transaction"
        with PgStore.open(team.url("alice"), "team") as reader:  # a reader never waits
            assert reader.document(source) == before[0]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    with PgStore.open(team.url("vowner"), "team") as store:
        assert (store.document(source), _chunks_of(store, TEAM_A[1])) == before


@pytest.fixture
def refuses_tls() -> Iterator[int]:
    """A TCP port whose peer answers PostgreSQL's TLS request with "no" (pgserver listens on
    a Unix socket only, where libpq never uses TLS)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(8)  # SSLRequest
            conn.sendall(b"N")
            conn.recv(1)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    listener.close()


def test_connection_failures_say_what_failed(team: Server, refuses_tls: int) -> None:
    cases = {
        "unreachable": f"postgresql://vowner@/postgres?host={team.host}/missing",
        "tls": f"postgresql://vowner@127.0.0.1:{refuses_tls}/postgres?sslmode=require",
        "authentication": team.url("nobody"),
        "url": f"postgresql://vowner:secret@/postgres?host={team.host}",
        "extension": team.url("alice", "novector"),
    }
    for kind, url in cases.items():
        with pytest.raises(StoreUnavailable) as err:
            PgStore.open(url, "team")
        assert err.value.kind == kind, (kind, str(err.value))
        assert "secret" not in str(err.value)
    team.psql("UPDATE verifai_team.schema_version SET version = 99;")
    try:
        with pytest.raises(StoreUnavailable, match="newer") as err:
            PgStore.open(team.url("alice"), "team")
        assert err.value.kind == "schema"
    finally:
        team.psql("UPDATE verifai_team.schema_version SET version = 1;")


def test_the_cli_and_the_store_import_no_postgres_library() -> None:
    code = (
        "import sys, verifai_desktop.cli, verifai_desktop.store.pg.store; "
        "print(sorted(m for m in ('psycopg', 'pgvector', 'pgserver') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_recognised_chunks_keep_their_ocr_and_an_old_schema_gains_the_column(
    team: Server,
) -> None:
    """Issue 28: a schema-1 collection (no ``chunks.ocr``) is upgraded by its owner on open,
    its chunks read as text-layer chunks; a chunk recognised by OCR keeps its provenance."""
    team.psql(
        "ALTER TABLE verifai_team.chunks DROP COLUMN ocr;"
        " UPDATE verifai_team.schema_version SET version = 1;"
    )
    with PgStore.open(team.url("vowner"), "team", acl="team_a") as store:
        assert team.rows("SELECT version FROM verifai_team.schema_version") == [(2,)]
        old = store.chunks(_chunks_of(store, TEAM_A[0]))
        assert [r.chunk.ocr for r in old.values()] == [None] * len(old)
        first, *rest = sorted((r.chunk for r in old.values()), key=lambda c: c.ordinal)
        ocr = Recognition("tesseract", 0.875, (WordBox(0, 3, 72.0, 90.5, 90.0, 101.0, 0.875),))
        chunks = (dataclasses.replace(first, ocr=ocr), *rest)
        vectors = np.full((len(chunks), 384), 384**-0.5, dtype=np.float32)
        meta = DocumentMeta("/scans/recognised.pdf", "scan", "d" * 64, 1, 1, None)
        store.commit([(meta, DocStatus.INDEXED, "", chunks, vectors)])
        doc = store.document("/scans/recognised.pdf")
        assert doc is not None
        again = store.chunks(store.document_chunk_ids(doc.doc_id))
        assert sorted((r.chunk for r in again.values()), key=lambda c: c.ordinal) == list(chunks)
        store.remove_sources(["/scans/recognised.pdf"])
