"""`verifai ask`, `check`, `history`, `feedback` and `audit` on a PostgreSQL team collection, with
the bundled generator, verifier and embedder, as each role of a team would run them.

A real PostgreSQL with pgvector (:mod:`tests.e2e.pg`) holds collection ``trauma``: two short
notes for ``team_a`` (one states that pulmonary embolism is the third leading cause of death
after trauma) and a registry note for ``team_b`` that contradicts it. The owner, a member of
both groups, is shown the contradiction; alice (team_a) never gets the registry note cited,
retrieved, surfaced as a conflict or named anywhere in her output; each role's history, feedback
and audit records are its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import run_verifai
from tests.e2e.pg import Server, team_server

pytestmark = pytest.mark.slow

pytest.importorskip(
    "pgserver", reason="pgserver is not installed (the test extra): no PostgreSQL to test with"
)
pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

QUESTION = "How often is pulmonary embolism a cause of death after trauma?"
CLAIM = (
    "PE is the third leading cause of death in injured patients who survive beyond the "
    "first day of admission."
)
CONTRADICTION = (
    "In our registry, PE was a rare cause of death in injured patients who survived beyond "
    "the first day of admission."
)
SECRET = "registry"  # in the team_b note's name, title and text, in nothing of team_a's
TEAM_A = {
    "pe_review.md": "# Thromboembolism after trauma\n\nPulmonary embolism (PE) after trauma is "
    f"common and often fatal. {CLAIM} Thromboprophylaxis lowers the rate of PE.\n",
    "risk_note.md": "# Risk of thrombosis after trauma\n\nMultisystem traumatic injury is a "
    "significant risk factor for the development of a deep venous thrombosis (DVT). Without "
    "thromboprophylaxis, overall DVT rates exceed 50%. Although DVT alone is not "
    "life-threatening, a resulting pulmonary embolism (PE) carries potentially significant "
    "morbidity and mortality.\n",
}
TEAM_B = {
    "registry_note.md": "# Trauma registry note\n\nAll publications on prophylaxis for the "
    f"prevention of DVT after trauma were identified using PubMed. {CONTRADICTION} Only English "
    "language publications were included.\n",
}


class Team:
    """The server, the notes and a ``verifai`` runner for each role."""

    def __init__(self, server: Server, docs: Path, home: Path) -> None:
        self.server = server
        self.docs = docs
        self.home = home

    def run(self, role: str, *args: str) -> subprocess.CompletedProcess[str]:
        """``verifai ARGS --collection trauma --store URL-of-role``."""
        store = ("--collection", "trauma", "--store", self.server.url(role))
        return run_verifai(*args, *store, home=self.home)

    def json(self, role: str, *args: str) -> Any:
        """The JSON ``verifai ARGS --json`` prints for ``role`` (which must succeed)."""
        proc = self.run(role, *args, "--json")
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    docs = tmp_path_factory.mktemp("team_docs")
    for name, text in {**TEAM_A, **TEAM_B}.items():
        (docs / name).write_text(text, encoding="utf-8")
    with team_server(tmp_path_factory.mktemp("pgdata")) as server:
        t = Team(server, docs, tmp_path_factory.mktemp("home"))
        for group, names in (("team_a", TEAM_A), ("team_b", TEAM_B)):
            paths = [str(docs / n) for n in names]
            proc = t.run("vowner", "ingest", *paths, "--acl", group)
            assert proc.returncode == 0, proc.stderr[-3000:]
        yield t


@pytest.fixture(scope="module")
def outputs(team: Team) -> dict[str, Any]:
    """What each role's runs printed: alice asks and checks; the owner and bob check."""
    alice_ask = team.run("alice", "ask", QUESTION, "-k", "4", "--json")
    assert alice_ask.returncode == 0, alice_ask.stderr[-3000:]
    alice_check = team.run("alice", "check", CLAIM, "--json")
    assert alice_check.returncode == 0, alice_check.stderr[-3000:]
    return {
        "alice_printed": (alice_ask.stdout, alice_ask.stderr, alice_check.stderr),
        "alice_ask_stdout": alice_ask.stdout,
        "alice_ask": json.loads(alice_ask.stdout),
        "alice_check": json.loads(alice_check.stdout),
        "vowner_check": team.json("vowner", "check", CLAIM),
        "bob_check": team.json("bob", "check", CLAIM),
    }


def _files(entries: list[dict[str, Any]]) -> set[str]:
    return {str(e["file"]) for e in entries}


def test_the_owner_is_shown_the_contradiction_from_the_other_group(
    outputs: dict[str, Any],
) -> None:
    """The control: with both groups readable, the claim check finds the registry note's
    contradiction (so its absence for alice below is the server's doing)."""
    check = outputs["vowner_check"]
    labels = {d["file"]: d["label"] for d in check["documents"]}
    assert labels["registry_note.md"] == "CONTRADICT" and labels["pe_review.md"] == "SUPPORT"
    assert check["contradicting"][0]["verdict"]["evidence"].strip() == CONTRADICTION


def test_alice_never_gets_the_other_groups_document(outputs: dict[str, Any]) -> None:
    """Not retrieved, not cited, not re-cited, not a conflict, not named: neither in the
    answer nor in the claim check, on stdout or stderr."""
    answer = outputs["alice_ask"]
    assert answer["passages"] and answer["sentences"], "an answer from the passages given"
    assert any(s["verdicts"] for s in answer["sentences"]), "its sentences were verified"
    assert _files(answer["passages"]) <= set(TEAM_A)
    for sentence in answer["sentences"]:
        assert _files([c["passage"] for c in sentence["conflicts"]]) <= set(TEAM_A)
    for text in outputs["alice_printed"]:
        assert SECRET not in text.lower() and "rare cause" not in text
    check = outputs["alice_check"]
    assert _files(check["documents"]) <= set(TEAM_A)
    assert "pe_review.md" in _files(check["supporting"]) and check["contradicting"] == []
    assert SECRET not in json.dumps(check).lower()


def test_bob_checks_against_his_groups_document_alone(outputs: dict[str, Any]) -> None:
    check = outputs["bob_check"]
    assert _files(check["documents"]) == {"registry_note.md"}
    assert _files(check["supporting"]) | _files(check["contradicting"]) <= set(TEAM_B)


def _history(team: Team, role: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = team.json(role, "history")
    return listed


def test_each_role_sees_only_its_own_history(team: Team, outputs: dict[str, Any]) -> None:
    alice = _history(team, "alice")
    assert [(e["kind"], e["question"]) for e in alice] == [("check", CLAIM), ("answer", QUESTION)]
    shown = team.run("alice", "history", "--show", str(alice[1]["id"]))
    assert shown.stdout == outputs["alice_ask_stdout"]  # byte for byte as printed
    bob = _history(team, "bob")
    assert [(e["kind"], e["question"]) for e in bob] == [("check", CLAIM)]
    assert [e["question"] for e in _history(team, "vowner")] == [CLAIM]
    assert _history(team, "eve") == []  # a role in no group: an empty history, no error
    other = team.run("alice", "history", "--show", str(bob[0]["id"]))
    assert other.returncode == 1 and f"no saved answer {bob[0]['id']}" in other.stderr
    assert other.stdout == ""
    owners = team.server.rows(
        "SELECT asked_by::text, count(*) FROM verifai_trauma.answers GROUP BY 1 ORDER BY 1"
    )
    assert owners == [("alice", 2), ("bob", 1), ("vowner", 1)]
    kept = team.server.rows("SELECT settings_json, documents_json FROM verifai_trauma.answers")
    assert not any("postgresql" in " ".join(row) for row in kept)  # no store URL is kept


def test_feedback_is_given_on_ones_own_answers_alone(team: Team, outputs: dict[str, Any]) -> None:
    answer_id = str(_history(team, "alice")[1]["id"])
    flag = ("feedback", "add", "--id", answer_id, "--sentence", "1", "--flag")
    done = team.run("alice", *flag, "--note", "check the source")
    assert done.returncode == 0, done.stderr
    refused = team.run("bob", *flag)
    assert refused.returncode == 1 and f"no saved answer {answer_id}" in refused.stderr
    [entry] = [e for e in _history(team, "alice") if str(e["id"]) == answer_id]
    assert entry["feedback"] == 1
    rows = team.server.rows("SELECT asked_by::text, verdict, note FROM verifai_trauma.feedback")
    assert rows == [("alice", "flagged", "check the source")]


def test_an_audit_record_of_a_team_answer_verifies(team: Team, tmp_path: Path) -> None:
    answer_id = str(_history(team, "alice")[1]["id"])
    record = tmp_path / "record.json"
    done = team.run("alice", "audit", "export", "--id", answer_id, "--output", str(record))
    assert done.returncode == 0, done.stderr
    assert "postgresql" not in record.read_text(encoding="utf-8")
    checked = run_verifai(
        "audit", "check", str(record), "--store", team.server.url("alice"), home=team.home
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("ok: ")
    assert f"the same as answer {answer_id} in the collection's history" in checked.stdout
    # Bob may read neither the answer nor the documents it quotes: the record does not hold.
    as_bob = run_verifai(
        "audit", "check", str(record), "--store", team.server.url("bob"), "--json", home=team.home
    )
    assert as_bob.returncode == 1, as_bob.stderr
    report = json.loads(as_bob.stdout)
    assert report["history"] == f"answer {answer_id} is no longer in the history of 'trauma'"
    assert {p["kind"] for p in report["problems"]} == {"not_in_collection"}


def test_an_answer_outlives_the_connection_lost_while_it_is_written(team: Team) -> None:
    """Issue 41: the server ends alice's connection (as a restart does) while her answer is
    being written: the answer is still printed, verified against its passages, with warnings
    that the conflict search and the history could not use the server; exit 0, no traceback.
    (Last in the module: alice's history is counted above.)"""
    argv = ["ask", QUESTION, "-k", "4", "--json", "--collection", "trauma"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VERIFAI_HOME": str(team.home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifai_desktop", *argv, "--store", team.server.url("alice")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("Writing the answer"):
            ended = team.server.rows(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'alice'"
            )
            assert ended and all(r[0] for r in ended)
            break
    out, rest = proc.communicate(timeout=900)
    err = "".join(seen) + rest
    assert any(line.startswith("Writing the answer") for line in seen), err[-3000:]
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    answer = json.loads(out)
    assert answer["question"] == QUESTION and answer["sentences"]
    assert any(s["verdicts"] for s in answer["sentences"])
    assert _files(answer["passages"]) <= set(TEAM_A)
    assert "no search of the collection for conflicting passages" in err
    assert "warning: " in err and "the connection to the server was lost" in err
