"""`verifai eval self-check` end to end: a real small collection (SciFact abstracts as text
files), the bundled embedder and verifier, the report and the result kept with the collection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SHARED_DATA
from tests.e2e.cli import run_verifai
from verifai_desktop.store.collection import Collection

pytestmark = pytest.mark.slow

DOC_IDS = (40156901, 23627419, 4983)
"""Abstracts with figures, a negated finding and a statement of aim."""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("self_check_home")


@pytest.fixture(scope="module")
def report(home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    corpus = SHARED_DATA / "scifact" / "original" / "corpus.jsonl"
    if not corpus.is_file():
        pytest.skip(f"{corpus} is not on this machine")
    docs = tmp_path_factory.mktemp("self_check_docs")
    for line in corpus.open(encoding="utf-8"):
        d = json.loads(line)
        if d["doc_id"] in DOC_IDS:
            text = d["title"] + "\n\n" + " ".join(s.strip() for s in d["abstract"])
            (docs / f"{d['doc_id']}.txt").write_text(text, encoding="utf-8")
    assert len(list(docs.glob("*.txt"))) == len(DOC_IDS)
    done = run_verifai("ingest", str(docs), "--collection", "papers", home=home)
    assert done.returncode == 0, done.stderr
    done = run_verifai(
        "eval", "self-check", "--collection", "papers", "--n", "2", "--json", home=home
    )
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_every_kind_the_documents_allow_is_checked(report: dict[str, Any]) -> None:
    kinds = report["kinds"]
    assert {"unchanged", "number_swap", "number_change", "negation_insert"} <= kinds.keys()
    for name, k in kinds.items():
        assert 1 <= k["n"] <= 2, name
        assert k["caught"] == k["n"] - k["green"]
        assert sum(k["shown"].values()) == k["n"]
        assert k["green"] == k["shown"]["SUPPORT"]
    assert report["collection"] == "papers" and report["preset"] == "balanced"
    assert report["passages"] >= 1 and report["seconds"] > 0


def test_the_result_is_kept_with_the_collection(
    report: dict[str, Any], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIFAI_HOME", str(home))
    with Collection.open("papers") as collection:
        assert collection.metadata("self_check") == report


def test_the_text_report_names_each_change(home: Path) -> None:
    done = run_verifai("eval", "self-check", "--collection", "papers", "--n", "1", home=home)
    assert done.returncode == 0, done.stderr
    assert "not a benchmark" in done.stdout
    assert "a changed figure" in done.stdout and "unchanged sentences shown green" in done.stdout
