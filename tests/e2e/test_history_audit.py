"""History, feedback and audit records end to end: a real `verifai ask` (bundled generator,
verifier and embedder) on copies of real documents, then `verifai history`, `verifai feedback`
and `verifai audit` as a user runs them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DOCS_CLEAN
from tests.e2e.cli import run_verifai
from verifai_desktop.codec import answer_from_dict, answer_to_json, settings_for

pytestmark = pytest.mark.slow

DOCS = ("deep_rules_02_intro.md", "deep_rules_09_overfitting.md", "deep_rules_12_privacy.md")
QUESTION = "What is overfitting?"
MODELS_DIR = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("history_home")


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copies of real documents the tests may edit."""
    folder = tmp_path_factory.mktemp("history_docs")
    for name in DOCS:
        shutil.copy(DOCS_CLEAN / name, folder / name)
        (folder / name).chmod(0o644)
    return folder


@pytest.fixture(scope="module")
def asked(home: Path, docs: Path) -> dict[str, Any]:
    done = run_verifai("ingest", str(docs), "--collection", "kept", home=home)
    assert done.returncode == 0, done.stderr
    done = run_verifai("ask", QUESTION, "--collection", "kept", "-k", "3", "--json", home=home)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    data["_stdout"] = done.stdout
    return data


def test_history_keeps_the_answer_byte_for_byte(asked: dict[str, Any], home: Path) -> None:
    listed = run_verifai("history", "--collection", "kept", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)
    assert entry["question"] == QUESTION and entry["changed_documents"] == []
    shown = run_verifai("history", "--collection", "kept", "--show", str(entry["id"]), home=home)
    assert shown.stdout == asked["_stdout"]  # exactly what `verifai ask --json` printed
    data = json.loads(shown.stdout)
    assert answer_to_json(answer_from_dict(data), settings_for(data)) == shown.stdout


def test_feedback_exported_for_training(asked: dict[str, Any], home: Path, tmp_path: Path) -> None:
    cited = [(i, v) for i, s in enumerate(asked["sentences"]) for v in s["verdicts"]]
    assert cited, "the grammar makes every sentence cite a passage"
    index, verdict = cited[0]
    wrong = "NO_EVIDENCE" if verdict["label"] != "NO_EVIDENCE" else "SUPPORT"
    args = ["feedback", "add", "--collection", "kept", "--id", "1", "--sentence", str(index + 1)]
    done = run_verifai(*args, "--passage", str(verdict["passage"]), "--wrong", wrong, home=home)
    assert done.returncode == 0, done.stderr
    done = run_verifai(*args, "--flag", "--note", "too vague", home=home)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "fb.jsonl"
    done = run_verifai("feedback", "export", "--collection", "kept", "--jsonl", str(out), home=home)
    assert done.returncode == 0, done.stderr
    assert "wrote 1 training pairs" in done.stdout and "1 judgements teach no label" in done.stdout
    sys.path.insert(0, str(MODELS_DIR))
    try:
        import pool
    finally:
        sys.path.remove(str(MODELS_DIR))
    [pair] = pool.load_jsonl(out, "extra")
    assert pair.label == wrong
    assert pair.premise == verdict["evidence"]
    assert pair.hypothesis and "[" not in pair.hypothesis


def test_audit_record_holds_until_a_cited_document_is_edited(
    asked: dict[str, Any], home: Path, docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit.json"
    done = run_verifai(
        "audit", "export", "--collection", "kept", "--last", "--output", str(out), home=home
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["schema"] == "verifai.audit/1" and record["question"] == QUESTION
    assert out.with_suffix(".html").read_text(encoding="utf-8").count("<mark>") == len(
        record["quotes"]
    )
    assert record["models"]["generator"]["sha256"] == asked["models"]["generator"]["sha256"]
    assert len(record["models"]["verifier"]["sha256"]) == 64
    for q in record["quotes"]:
        assert len(q["sha256"]) == 64 and Path(q["path"]).parent == docs
        assert q["char_start"] <= q["evidence_char_start"] < q["evidence_char_end"] <= q["char_end"]
    check = run_verifai("audit", "check", str(out), home=home)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("ok: ")

    cited = Path(record["quotes"][0]["path"])
    original = cited.read_text(encoding="utf-8")
    cited.write_text("A line added later.\n\n" + original, encoding="utf-8")
    check = run_verifai("audit", "check", str(out), "--json", home=home)
    assert check.returncode == 1
    found = json.loads(check.stdout)
    kinds = {(p["kind"], p["path"]) for p in found["problems"]}
    assert ("hash_changed", str(cited)) in kinds
    assert ("text_changed", str(cited)) in kinds
    assert ("not_in_collection", str(cited)) not in kinds  # the collection still has it
    reopened = run_verifai("history", "--collection", "kept", "--json", home=home)
    assert json.loads(reopened.stdout)[0]["changed_documents"] == [str(cited)]
