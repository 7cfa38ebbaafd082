"""Issue 41: team access on a real PostgreSQL 16 with pgvector that holds against its own users,
and clear errors (never a traceback) on every PostgreSQL path.

The roles of :mod:`tests.e2e.pg`, plus two groups whose names differ only in case (``"Finance"``
with member ``fin_upper``, ``finance`` with member ``fin_lower``; the owner ``vowner`` is in
both) and ``mallory``, who may create schemas in the database too. The notes are short
Markdown files written by the module, each about its own subject, ingested through the real
``verifai ingest --store`` command unless a test says otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.e2e.cli import run_verifai
from tests.e2e.pg import Server, team_server
from tests.unit.test_codec import ANSWER
from verifai_desktop.errors import StoreUnavailable
from verifai_desktop.settings import Settings
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.roots import roots_of

pytest.importorskip(
    "pgserver", reason="pgserver is not installed (the test extra): no PostgreSQL to test with"
)
pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

MORE_ROLES = """
CREATE ROLE "Finance";
CREATE ROLE finance;
GRANT "Finance", finance TO vowner;
CREATE ROLE fin_upper LOGIN IN ROLE "Finance";
CREATE ROLE fin_lower LOGIN IN ROLE finance;
CREATE ROLE mallory LOGIN;
GRANT CREATE ON DATABASE postgres TO mallory;
"""

NOTES = {
    "budget.md": "# Budget\n\nThe travel budget for the field office is 12,000 euros a year.\n",
    "salaries.md": "# Salaries\n\nSalaries are reviewed every March by the pay committee.\n",
    "orchids.md": "# Orchids\n\nOrchids in the greenhouse are watered twice a week.\n",
    "telescope.md": "# Telescope\n\nThe telescope's mirror is cleaned before each winter.\n",
}


@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with team_server(tmp_path_factory.mktemp("pgdata")) as server:
        server.psql(MORE_ROLES)
        yield server


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of one-note folders: ``notes/<stem>/<stem>.md`` for each note."""
    root = tmp_path_factory.mktemp("notes")
    for name, text in NOTES.items():
        folder = root / Path(name).stem
        folder.mkdir()
        (folder / name).write_text(text, encoding="utf-8")
    return root


def _note(notes: Path, name: str) -> Path:
    return notes / Path(name).stem / name


def _ingest(pg: Server, role: str, collection: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_verifai(
        "ingest", *args, "--collection", collection, "--store", pg.url(role), "--json"
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    out: dict[str, object] = json.loads(proc.stdout)
    return out


def _refused(proc: subprocess.CompletedProcess[str]) -> str:
    """stderr of a command that failed with a clear error (exit 1, one ``error:`` line)."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, proc.stderr[-3000:]
    return errors[0]


def _names(store: PgStore) -> list[str]:
    return [d.path.name for d in store.documents()]


@pytest.fixture(scope="module")
def shared(pg: Server, notes: Path) -> Server:
    """Collection ``shared``: the orchids note for team_a, the telescope note for team_b."""
    _ok(_ingest(pg, "vowner", "shared", str(_note(notes, "orchids.md")), "--acl", "team_a"))
    _ok(_ingest(pg, "vowner", "shared", str(_note(notes, "telescope.md")), "--acl", "team_b"))
    return pg


# -- 1. a document's group changes with --acl ---------------------------------------------------


def test_ingesting_a_file_again_for_another_group_moves_it(pg: Server, notes: Path) -> None:
    budget = _note(notes, "budget.md")
    first = _ok(_ingest(pg, "vowner", "moves", str(budget), "--acl", "team_a"))
    assert first["counts"] == {"indexed": 1}
    with PgStore.open(pg.url("alice"), "moves") as alice:
        assert _names(alice) == ["budget.md"]
    again = _ok(_ingest(pg, "vowner", "moves", str(budget), "--acl", "team_b"))
    assert again["counts"] == {"indexed": 1}  # read again and moved, not "skipped"
    with (
        PgStore.open(pg.url("alice"), "moves") as alice,
        PgStore.open(pg.url("bob"), "moves") as bob,
    ):
        assert _names(alice) == [] and alice.num_chunks() == 0
        assert _names(bob) == ["budget.md"]
        doc = bob.document(str(budget))
        assert doc is not None and len(bob.document_chunk_ids(doc.doc_id)) == doc.chunk_count > 0
    groups = pg.rows(
        "SELECT 'documents', acl_group::text FROM verifai_moves.documents"
        " UNION SELECT 'chunks', acl_group::text FROM verifai_moves.chunks ORDER BY 1"
    )
    assert groups == [("chunks", "team_b"), ("documents", "team_b")]
    third = _ok(_ingest(pg, "vowner", "moves", str(budget), "--acl", "team_b"))
    assert third["counts"] == {"skipped": 1}


# -- 2. group names differing only in case --------------------------------------------------------


def test_roles_differing_only_in_case_read_only_their_own(pg: Server, notes: Path) -> None:
    _ok(_ingest(pg, "vowner", "cases", str(_note(notes, "salaries.md")), "--acl", "Finance"))
    _ok(_ingest(pg, "vowner", "cases", str(_note(notes, "budget.md")), "--acl", "finance"))
    with (
        PgStore.open(pg.url("fin_upper"), "cases") as upper,
        PgStore.open(pg.url("fin_lower"), "cases") as lower,
    ):
        assert _names(upper) == ["salaries.md"]
        assert _names(lower) == ["budget.md"]
        assert {p.path.name for p in _search(lower, "salaries reviewed pay committee")} <= {
            "budget.md"
        }
    with pytest.raises(StoreUnavailable, match="not a member of 'Finance'"):
        PgStore.open(pg.url("fin_lower"), "cases", acl="Finance")
    with pytest.raises(StoreUnavailable) as err:
        PgStore.open(pg.url("vowner"), "cases", acl="FINANCE")
    assert err.value.reason == (
        "no role named 'FINANCE'; role names are case-sensitive, there is Finance and finance"
    )
    labels = pg.rows(
        "SELECT DISTINCT d.title, c.acl_group::text FROM verifai_cases.documents d"
        " JOIN verifai_cases.chunks c USING (doc_id) ORDER BY 1"
    )
    assert labels == [("Budget", "finance"), ("Salaries", '"Finance"')]


def _search(store: PgStore, query: str) -> list[object]:
    from verifai_desktop.retrieve import Retriever
    from verifai_desktop.settings import RetrievalSettings

    return list(Retriever(store, RetrievalSettings()).search(query, k=5))


# -- 3. a schema made or changed by someone else ---------------------------------------------------


def test_a_schema_another_role_made_first_is_never_written_into(pg: Server, notes: Path) -> None:
    """mallory makes ``verifai_trap`` first, grants the owner every right on it and turns off
    FORCE ROW LEVEL SECURITY on her tables: the owner's ingest is refused, naming the schema and
    mallory, and nothing of the note reaches her tables."""
    PgStore.open(pg.url("mallory"), "trap", create=True).close()
    pg.psql(
        "SET ROLE mallory;"
        " GRANT USAGE, CREATE ON SCHEMA verifai_trap TO vowner;"
        " GRANT ALL ON ALL TABLES IN SCHEMA verifai_trap TO vowner WITH GRANT OPTION;"
        " GRANT ALL ON ALL SEQUENCES IN SCHEMA verifai_trap TO vowner WITH GRANT OPTION;"
        " ALTER TABLE verifai_trap.documents NO FORCE ROW LEVEL SECURITY;"
        " ALTER TABLE verifai_trap.chunks NO FORCE ROW LEVEL SECURITY;"
    )
    error = _refused(_ingest(pg, "vowner", "trap", str(_note(notes, "salaries.md"))))
    assert "schema verifai_trap is owned by role 'mallory', not by 'vowner'" in error
    assert pg.rows(
        "SELECT (SELECT count(*) FROM verifai_trap.documents),"
        " (SELECT count(*) FROM verifai_trap.chunks), (SELECT count(*) FROM verifai_trap.metadata)"
    ) == [(0, 0, 0)]


@pytest.mark.parametrize(
    ("change", "undo", "named"),
    [
        (
            "CREATE POLICY everyone ON verifai_guarded.chunks FOR SELECT USING (true)",
            "DROP POLICY everyone ON verifai_guarded.chunks",
            "policy everyone on chunks is not one this app makes",
        ),
        (
            "ALTER TABLE verifai_guarded.documents NO FORCE ROW LEVEL SECURITY",
            "ALTER TABLE verifai_guarded.documents FORCE ROW LEVEL SECURITY",
            "row-level security is not enabled and forced on documents",
        ),
        (
            "CREATE TABLE verifai_guarded.extra (x int); ALTER TABLE verifai_guarded.extra"
            " OWNER TO mallory",
            "DROP TABLE verifai_guarded.extra",
            "extra is owned by 'mallory'",
        ),
    ],
)
def test_a_collection_changed_behind_the_owner_is_not_written_into(
    pg: Server, notes: Path, change: str, undo: str, named: str
) -> None:
    orchids = str(_note(notes, "orchids.md"))
    _ok(_ingest(pg, "vowner", "guarded", orchids, "--acl", "team_a"))
    pg.psql("DELETE FROM verifai_guarded.documents WHERE title <> 'Orchids';")
    pg.psql(change + ";")
    try:
        error = _refused(
            _ingest(pg, "vowner", "guarded", str(_note(notes, "telescope.md")), "--acl", "team_b")
        )
        assert "schema verifai_guarded (owner 'vowner') is not as VerifAI makes it" in error
        assert named in error
        assert pg.rows("SELECT title FROM verifai_guarded.documents") == [("Orchids",)]
    finally:
        pg.psql(undo + ";")
    _ok(_ingest(pg, "vowner", "guarded", str(_note(notes, "telescope.md")), "--acl", "team_b"))


# -- 6. metadata per group; feedback only on one's own answers -----------------------------------


def test_each_group_keeps_its_own_roots(pg: Server, notes: Path) -> None:
    folder_a, folder_b = notes / "orchids", notes / "telescope"
    _ok(_ingest(pg, "vowner", "roots", str(folder_a), "--acl", "team_a"))
    _ok(_ingest(pg, "vowner", "roots", str(folder_b), "--acl", "team_b"))
    import psycopg

    with psycopg.connect(pg.url("bob"), autocommit=True) as conn:
        seen = [r[0] for r in conn.execute("SELECT value::text FROM verifai_roots.metadata")]
    assert len(seen) == 1 and str(folder_b) in seen[0] and str(folder_a) not in seen[0]
    for group, folder in (("team_a", folder_a), ("team_b", folder_b)):
        with PgStore.open(pg.url("vowner"), "roots", acl=group) as store:
            assert [r.path for r in roots_of(store)] == [folder.resolve()]


def test_feedback_cannot_be_attached_to_another_roles_answer(shared: Server) -> None:
    """bob, writing SQL of his own, can neither attach a judgement to alice's answer nor tell
    her answer's id from one that does not exist: the same refusal for both."""
    with PgStore.open(shared.url("alice"), "shared") as store, store.history() as alice:
        answer_id = alice.add(ANSWER, Settings(), {})
    import psycopg

    insert = (
        "INSERT INTO verifai_shared.feedback (answer_id, sentence, passage, shown, verdict,"
        " created) VALUES (%s, 0, 1, 'SUPPORT', 'wrong', 0)"
    )
    refusals = []
    with psycopg.connect(shared.url("bob"), autocommit=True) as conn:
        for target in (answer_id, answer_id + 1000):
            with pytest.raises(psycopg.Error) as err:
                conn.execute(insert, (target,))
            refusals.append((type(err.value), err.value.diag.message_primary))
    assert refusals[0] == refusals[1]
    assert refusals[0][0] is psycopg.errors.InsufficientPrivilege
    assert "row-level security" in str(refusals[0][1])
    assert shared.rows("SELECT count(*) FROM verifai_shared.feedback") == [(0,)]


# -- 8. clear errors, never a traceback -----------------------------------------------------------


def test_an_ingest_by_a_role_that_does_not_own_the_collection_is_a_clear_error(
    shared: Server, notes: Path
) -> None:
    before = shared.rows("SELECT key, value::text, acl_group::text FROM verifai_shared.metadata")
    error = _refused(
        _ingest(shared, "alice", "shared", str(_note(notes, "budget.md")), "--acl", "team_a")
    )
    assert "schema verifai_shared is owned by role 'vowner', not by 'alice'" in error
    assert "only the collection's owner ingests into it" in error
    after = shared.rows("SELECT key, value::text, acl_group::text FROM verifai_shared.metadata")
    assert after == before


def test_an_acl_given_in_quotes_is_a_clear_error(shared: Server, notes: Path) -> None:
    error = _refused(
        _ingest(shared, "vowner", "shared", str(_note(notes, "budget.md")), "--acl", '"team_a"')
    )
    assert error.endswith(
        """no role named '"team_a"'; give the role's name without quotes, as it is: team_a"""
    )


def test_two_first_opens_of_a_new_collection_at_once_both_open_it(pg: Server) -> None:
    """Two sessions create the same new collection at the same moment (as two first ingests
    do), in five rounds: each opens it, one of them having made it."""
    from verifai_desktop.index.embedder import get_embedder

    assert get_embedder(Settings().models.embedder).dim > 0  # loaded once, before the race
    for round_ in range(5):
        name = f"race{round_}"
        start = threading.Barrier(2)
        failures: list[BaseException] = []

        def first_ingest(
            name: str = name,
            start: threading.Barrier = start,
            failures: list[BaseException] = failures,
        ) -> None:
            start.wait()
            try:
                PgStore.open(pg.url("vowner"), name, create=True, acl="team_a").close()
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=first_ingest) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert failures == [], failures
        assert pg.rows(f"SELECT count(*) FROM verifai_{name}.schema_version") == [(1,)]


def test_the_connection_lost_mid_ingest_is_a_clear_error(pg: Server) -> None:
    """The server ends the ingest's connection (as a server restart does) once a document is
    written: the command says the connection was lost and exits 1; every document written is
    whole."""
    argv = ["ingest", str(DOCS_CLEAN), "--collection", "lost", "--store", pg.url("vowner")]
    ingest = subprocess.Popen(
        [sys.executable, "-m", "verifai_desktop", *argv, "--acl", "team_a"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    deadline = time.monotonic() + 300
    while not pg.rows(
        "SELECT 1 FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid"
        " WHERE n.nspname = 'verifai_lost' AND c.relname = 'documents'"
    ) or not pg.rows("SELECT 1 FROM verifai_lost.documents LIMIT 1"):
        assert ingest.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    ended = pg.rows(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'vowner'"
    )
    assert ended and all(r[0] for r in ended)
    out, err = ingest.communicate(timeout=300)
    proc = subprocess.CompletedProcess(ingest.args, ingest.returncode, out, err)
    assert "the connection to the server was lost" in _refused(proc)
    counts = pg.rows(
        "SELECT d.chunk_count, count(c.chunk_id) FROM verifai_lost.documents d"
        " LEFT JOIN verifai_lost.chunks c USING (doc_id) GROUP BY d.doc_id"
    )
    assert counts and all(written == kept for written, kept in counts)


def test_a_file_name_that_is_not_utf8_is_ingested_and_read_back(pg: Server, tmp_path: Path) -> None:
    """As in the embedded store: ``caf\\xe9.md`` (Latin-1 bytes) is ingested, listed and found
    under its own name, and skipped when unchanged."""
    folder = tmp_path / "latin1"
    folder.mkdir()
    raw = os.path.join(os.fsencode(folder), b"caf\xe9.md")
    with open(raw, "wb") as f:
        f.write(b"# Coffee\n\nThe espresso machine is descaled every Friday afternoon.\n")
    path = Path(os.fsdecode(raw))
    first = _ok(_ingest(pg, "vowner", "latin", str(path), "--acl", "team_a"))
    assert first["counts"] == {"indexed": 1}
    with PgStore.open(pg.url("alice"), "latin") as alice:
        assert [d.path for d in alice.documents()] == [path]
        hits = _search(alice, "when is the espresso machine descaled")
        assert [h.path for h in hits] == [path]  # type: ignore[attr-defined]
    with PgStore.open(pg.url("vowner"), "latin", acl="team_a") as owner:
        assert [r.path for r in roots_of(owner)] == [path]
    again = _ok(_ingest(pg, "vowner", "latin", str(folder), "--acl", "team_a"))
    assert again["counts"] == {"skipped": 1}
