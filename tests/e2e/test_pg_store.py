"""The PostgreSQL store (store/pg/) against a real PostgreSQL 16 with pgvector, started from the
``pgserver`` package (the test extra), with the bundled embedder and files of docs/clean.

One server and one collection ``team`` serve the module. Roles: ``vowner`` (ingests, member of
both groups), groups ``team_a`` and ``team_b`` (no login), ``alice`` (in team_a), ``bob`` (in
team_b) and ``eve`` (in no group). The two deep-rules chapters are ingested for team_a through
the real ``verifai ingest --store URL --acl team_a`` command; the privacy chapter and the SciFact
description for team_b through :meth:`PgStore.add_paths`. Other collections: ``readers`` (readers
during an ingest) and ``old`` (a schema-1 collection upgraded). ``carol`` (in team_a) is asked a
password by the server (the credentials tests).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import pty
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import numpy as np
import pytest
from keyring.backends.fail import Keyring as FailKeyring

from tests.conftest import DOCS_CLEAN, REPO_ROOT
from tests.e2e.cli import run_verifai
from tests.e2e.pg import MemoryKeyring, Server, team_server, tls_refused
from tests.unit.test_codec import ANSWER
from verifai_desktop.codec import answer_to_json
from verifai_desktop.domain import DocStatus, NliLabel
from verifai_desktop.errors import HistoryNotFound, StoreUnavailable
from verifai_desktop.recognition import Recognition, WordBox
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import RetrievalSettings, Settings
from verifai_desktop.store.catalog import DocumentMeta
from verifai_desktop.store.history_records import AnswerScan, Feedback
from verifai_desktop.store.pg.credentials import KEYRING_SERVICE
from verifai_desktop.store.pg.schema import DATA_TABLES, HISTORY_TABLES, SCHEMA_VERSION
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.writer import ingest_paths

pytest.importorskip(
    "pgserver", reason="pgserver is not installed (the test extra): no PostgreSQL to test with"
)
pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

DOCS = DOCS_CLEAN.resolve()
"""The sample collection as ingest records its files' sources: resolved, so a lookup by source
also works where ``../shared`` is a symbolic link."""
TEAM_A = ("deep_rules_02_intro.md", "deep_rules_09_overfitting.md")
TEAM_B = ("deep_rules_12_privacy.md", "scifact_data_description.md")


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A PostgreSQL server with pgvector and the roles of :mod:`tests.e2e.pg`."""
    with team_server(tmp_path_factory.mktemp("pgdata")) as server:
        yield server


@pytest.fixture(scope="module")
def team(pg: Server) -> Server:
    """Collection ``team`` with two documents per group (one through the CLI)."""
    proc = run_verifai(
        "ingest",
        *(str(DOCS / n) for n in TEAM_A),
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
        report = ingest_paths(store, [DOCS / n for n in TEAM_B])
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
        report = ingest_paths(store, [DOCS / n for n in TEAM_B])
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
        assert alice.document(str(DOCS / TEAM_B[0])) is None
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
        ("answers", True, True),
        ("chunks", True, True),
        ("doc_references", True, True),
        ("documents", True, True),
        ("feedback", True, True),
        ("lexeme_df", True, True),
        ("lexical_stats", True, True),
        ("metadata", True, True),
        ("postings", True, True),
    ]
    assert {r[0] for r in forced} == {
        "answers",
        "chunks",
        "config",
        "doc_references",
        "documents",
        "feedback",
        "lexeme_df",
        "lexical_stats",
        "metadata",
        "postings",
        "schema_version",
    }
    assert team.rows("SELECT rolname FROM pg_roles WHERE rolbypassrls AND NOT rolsuper") == []
    assert team.rows("SELECT proname FROM pg_proc WHERE prosecdef") == []


def _chunks_of(store: PgStore, name: str) -> list[int]:
    doc = store.document(str(DOCS / name))
    assert doc is not None
    return store.document_chunk_ids(doc.doc_id)


def test_a_failing_commit_leaves_the_document_as_it_was(team: Server) -> None:
    """A chunk the server refuses (a vector of the wrong dimension) half-way through a
    document: neither the new document nor any of its chunks is written; a document written
    again keeps its old chunks."""
    source = str(DOCS / TEAM_A[0])
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
    source = str(DOCS / TEAM_A[1])
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
    """A TCP port whose peer answers PostgreSQL's TLS request with "no"."""
    with tls_refused() as port:
        yield port


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
        team.psql(f"UPDATE verifai_team.schema_version SET version = {SCHEMA_VERSION};")


def test_the_cli_and_the_store_import_no_postgres_library() -> None:
    code = (
        "import sys, verifai_desktop.cli, verifai_desktop.store.pg.store; "
        "print(sorted(m for m in ('psycopg', 'pgvector', 'pgserver') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- many readers during an ingest ----------------------------------------------------------

READERS_DOCS = (*TEAM_A, *TEAM_B, "deep_rules_03_when_to_use_dl.md", "scifact_covid_claims.txt")


def _read_whole(store: PgStore, seen: list[int], errors: list[BaseException]) -> None:
    """One reader's pass: every document it sees has all its chunks, and every search hit
    reads back with its document."""
    try:
        store.refresh()  # as the retriever does before each search
        docs = store.documents()
        for d in docs:
            chunk_ids = store.document_chunk_ids(d.doc_id)
            assert len(chunk_ids) == d.chunk_count > 0, (d.path.name, len(chunk_ids))
            records = store.chunks(chunk_ids)
            assert sorted(records) == sorted(chunk_ids)
        hits = _search(store, "overfitting privacy covid claims deep learning")
        assert set(hits) <= {d.path.name for d in store.documents()}
        seen.append(len(docs))
    except BaseException as exc:
        errors.append(exc)


def test_readers_during_an_ingest_see_each_document_whole_or_not_at_all(pg: Server) -> None:
    """A real `verifai ingest --store` of six documents in a child process; two readers on
    their own connections, opened before the first document, read and search in a loop while
    it writes: no read fails, each document they see has every chunk, and they see the
    collection grow."""
    with PgStore.open(pg.url("vowner"), "readers", create=True, acl="team_a"):
        pass
    ingest = subprocess.Popen(
        [sys.executable, "-m", "verifai_desktop", "ingest"]
        + [str(DOCS / n) for n in READERS_DOCS]
        + ["--collection", "readers", "--store", pg.url("vowner"), "--acl", "team_a"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    seen: dict[str, list[int]] = {"alice": [], "vowner": []}
    errors: list[BaseException] = []

    def reader(role: str) -> None:
        with PgStore.open(pg.url(role), "readers") as store:
            while ingest.poll() is None:
                _read_whole(store, seen[role], errors)
            _read_whole(store, seen[role], errors)

    threads = [threading.Thread(target=reader, args=(role,)) for role in seen]
    for t in threads:
        t.start()
    _, err = ingest.communicate(timeout=600)
    for t in threads:
        t.join(timeout=120)
    assert ingest.returncode == 0, err[-2000:]
    assert errors == []
    for role, counts in seen.items():
        assert counts == sorted(counts) and counts[-1] == len(READERS_DOCS), (role, counts)
        assert len(set(counts)) > 2, (role, counts)  # it read while documents were arriving


# -- credentials -----------------------------------------------------------------------------

PASSWORD = "Kx7-correct-horse-81"


@pytest.fixture
def carol(team: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    """A role of team_a the server asks a password of (scram-sha-256 on its socket); libpq's
    own sources (PGPASSWORD, the password file) hold none. Yields its store URL."""
    if not team.rows("SELECT 1 FROM pg_roles WHERE rolname = 'carol'"):
        team.psql(f"CREATE ROLE carol LOGIN PASSWORD '{PASSWORD}' IN ROLE team_a;")
        hba = team.pgdata / "pg_hba.conf"
        hba.write_text("local all carol scram-sha-256\n" + hba.read_text())
        team.psql("SELECT pg_reload_conf();")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no_pgpass"))
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    try:
        yield team.url("carol")
    finally:
        keyring.set_keyring(previous)


def test_a_password_from_the_keyring_or_the_prompt_never_reaches_logs_or_messages(
    carol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StoreUnavailable, match="keyring set verifai-desktop-postgresql") as err:
        PgStore.open(carol, "team")
    assert err.value.kind == "authentication"
    account = f"carol@{carol.split('host=', 1)[1]}:5432/postgres"
    keyring.set_password(KEYRING_SERVICE, account, PASSWORD)
    with PgStore.open(carol, "team") as store:
        assert _names(store) == list(TEAM_A)  # connected as carol, with her group's rows
    asked: list[str] = []

    def prompt(name: str) -> str:
        asked.append(name)
        return PASSWORD

    keyring.set_password(KEYRING_SERVICE, account, "not-" + PASSWORD)
    with pytest.raises(StoreUnavailable, match="refused the system keyring's password") as err:
        PgStore.open(carol, "team", password_prompt=prompt)
    assert asked == [] and err.value.kind == "authentication"  # the keyring's is tried alone
    keyring.delete_password(KEYRING_SERVICE, account)
    with PgStore.open(carol, "team", password_prompt=prompt) as store:
        assert _names(store) == list(TEAM_A)
    assert asked == [account]
    assert PASSWORD not in caplog.text and PASSWORD not in str(err.value)


def test_without_a_keyring_backend_the_error_says_so(carol: str) -> None:
    keyring.set_keyring(FailKeyring())  # type: ignore[no-untyped-call]
    with pytest.raises(StoreUnavailable, match="no system keyring is available") as err:
        PgStore.open(carol, "team")
    assert err.value.kind == "authentication"


def test_the_cli_asks_for_the_password_on_a_terminal_without_echo(
    carol: str, tmp_path: Path
) -> None:
    """`verifai -v status --store URL` in a pseudo-terminal: asked once, the password typed is
    not echoed, and neither the terminal, the debug log on stderr nor the log file shows it."""
    home = tmp_path / "home"
    env = {**os.environ, "VERIFAI_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    argv = [sys.executable, "-m", "verifai_desktop", "-v", "status"]
    argv += ["--collection", "team", "--store", carol, "--json"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: verifai on the terminal
        os.execve(sys.executable, argv, env)
    shown = b""
    try:
        while b"Password for carol@" not in shown:
            shown += os.read(fd, 1024)
        os.write(fd, PASSWORD.encode() + b"\n")
        while True:
            try:
                piece = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not piece:
                break
            shown += piece
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = shown.decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 0, text[-2000:]
    assert text.count("Password for carol@") == 1
    assert "deep_rules_02_intro.md" in text  # her group's documents, listed after the prompt
    assert PASSWORD not in text
    logs = [p.read_text(encoding="utf-8", errors="replace") for p in home.rglob("*.log")]
    assert logs and not any(PASSWORD in log for log in logs)


# -- the answer history ----------------------------------------------------------------------


def test_each_role_keeps_and_reads_its_own_history_alone(team: Server) -> None:
    """The history contract through :class:`PgHistory` (the real `verifai ask` and `history`
    commands on it are in test_pg_ask.py): rows belong to the role that kept them."""
    settings = Settings()
    with (
        PgStore.open(team.url("alice"), "team") as alice_store,
        PgStore.open(team.url("bob"), "team") as bob_store,
        PgStore.open(team.url("eve"), "team") as eve_store,
        alice_store.history() as alice,
        bob_store.history() as bob,
        eve_store.history() as eve,
    ):
        first = alice.add(ANSWER, settings, {"/docs/a.md": "a" * 64})
        theirs = bob.add(ANSWER, settings, {})
        assert [a.answer_id for a in alice.answers()] == [first]
        assert alice.require(first).answer_json == answer_to_json(ANSWER, settings)
        assert [a.answer_id for a in bob.answers()] == [theirs]
        assert bob.get(first) is None and not bob.delete(first) and bob.clear() == 1
        last = alice.last()
        assert last is not None and last.answer_id == first
        with pytest.raises(HistoryNotFound):
            bob.set_feedback(Feedback(first, 0, 1, "SUPPORT", "right"))
        alice.set_feedback(Feedback(first, 0, 1, "SUPPORT", "right"))
        alice.set_feedback(Feedback(first, 0, 1, "SUPPORT", "wrong", NliLabel.CONTRADICT))
        assert [f.verdict for f in alice.feedback()] == ["wrong"] and bob.feedback() == []
        assert eve.scan() == AnswerScan((), ()) and eve.last() is None
        with pytest.raises(StoreUnavailable, match="may not keep answers") as err:
            eve.add(ANSWER, settings, {})
        assert err.value.kind == "permission"
    # Not even by SQL of its own can a role write or take another role's rows.
    import psycopg

    with psycopg.connect(team.url("bob"), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO verifai_team.answers (created, question, answer_json, settings_json,"
                " documents_json, app_version, asked_by) VALUES (0, 'q', '{}', '{}', '{}', '0',"
                " 'alice')"
            )
        taken = conn.execute("UPDATE verifai_team.answers SET asked_by = 'bob'").rowcount
        assert taken == 0
    with PgStore.open(team.url("alice"), "team") as store, store.history() as alice:
        assert [a.answer_id for a in alice.answers()] == [first]
        alice.clear()


def test_a_collection_of_schema_1_is_upgraded_by_its_owner(pg: Server) -> None:
    """A collection made before the history tables: its readers are told to wait for the
    owner; the owner's next open adds the tables, their row-level security and the grants of
    the groups that read it."""
    with PgStore.open(pg.url("vowner"), "old", create=True, acl="team_a") as store:
        ingest_paths(store, [DOCS / TEAM_A[0]])
    pg.psql(
        "DROP TABLE verifai_old.feedback, verifai_old.answers, verifai_old.postings,"
        " verifai_old.lexical_stats, verifai_old.doc_references, verifai_old.lexeme_df;"
        " ALTER TABLE verifai_old.chunks DROP COLUMN ocr;"
        " UPDATE verifai_old.schema_version SET version = 1;"
    )
    with pytest.raises(StoreUnavailable, match="its owner must open it once") as err:
        PgStore.open(pg.url("alice"), "old")
    assert err.value.kind == "schema"
    PgStore.open(pg.url("vowner"), "old").close()
    assert pg.rows("SELECT version FROM verifai_old.schema_version") == [(SCHEMA_VERSION,)]
    policies = pg.rows("SELECT tablename FROM pg_policies WHERE schemaname = 'verifai_old'")
    assert sorted(r[0] for r in policies) == sorted(DATA_TABLES + HISTORY_TABLES)
    with PgStore.open(pg.url("alice"), "old") as store, store.history() as history:
        kept = history.add(ANSWER, Settings(), {})
        assert history.require(kept).question == ANSWER.question


def test_recognised_chunks_keep_their_ocr_and_an_old_schema_gains_the_column(
    team: Server,
) -> None:
    """Issue 28: a schema-2 collection (no ``chunks.ocr``) is upgraded by its owner on open,
    its chunks read as text-layer chunks; a chunk recognised by OCR keeps its provenance."""
    team.psql(
        "ALTER TABLE verifai_team.chunks DROP COLUMN ocr;"
        " DROP TABLE verifai_team.postings, verifai_team.lexical_stats,"
        " verifai_team.doc_references, verifai_team.lexeme_df;"
        " UPDATE verifai_team.schema_version SET version = 2;"
    )
    with PgStore.open(team.url("vowner"), "team", acl="team_a") as store:
        assert team.rows("SELECT version FROM verifai_team.schema_version") == [(SCHEMA_VERSION,)]
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
