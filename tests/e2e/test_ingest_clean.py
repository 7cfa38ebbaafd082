"""`verifai ingest` of all 26 files in docs/clean, then `verifai search` and `verifai status`.

One ingest of the whole clean set is shared by every test in this module (it is the slow part);
the search tests check that phrases known to be in a file come back with the right file and
page, slide, chapter or section.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DOCS_CLEAN
from tests.e2e.cli import run_verifai

pytestmark = pytest.mark.slow


def _verifai(home: Path, *args: str, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    return run_verifai(*args, home=home, timeout_s=timeout)


def _json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def clean_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A VERIFAI_HOME whose collection ``clean`` holds docs/clean; and the ingest JSON."""
    home = tmp_path_factory.mktemp("clean_home")
    report = _json(_verifai(home, "ingest", str(DOCS_CLEAN), "--collection", "clean", "--json"))
    return home, report


def test_every_clean_file_is_indexed(clean_home: tuple[Path, dict[str, Any]]) -> None:
    _, report = clean_home
    names = sorted(p.name for p in DOCS_CLEAN.iterdir())
    assert len(names) == 26
    assert sorted(Path(f["source"]).name for f in report["files"]) == names
    not_indexed = {
        Path(f["source"]).name: f["reason"] for f in report["files"] if f["status"] != "indexed"
    }
    assert not_indexed == {}
    assert all(f["chunks"] > 0 for f in report["files"])
    assert report["counts"] == {"indexed": 26}
    assert report["chunks_indexed"] == sum(f["chunks"] for f in report["files"])


def test_status_lists_every_document_and_reingest_skips_all(
    clean_home: tuple[Path, dict[str, Any]],
) -> None:
    home, report = clean_home
    status = _json(_verifai(home, "status", "--collection", "clean", "--json"))
    assert len(status["documents"]) == 26
    assert {d["status"] for d in status["documents"]} == {"indexed"}
    assert status["chunks"] == report["chunks_indexed"]
    assert status["indexes_current"] is True
    again = _json(_verifai(home, "ingest", str(DOCS_CLEAN), "--collection", "clean", "--json"))
    assert again["counts"] == {"skipped": 26}
    assert again["chunks_indexed"] == 0


# (query, mode, expected file, expected location label of the top passage)
SEARCHES = [
    (
        "participants were unenthusiastic about the proposal that GPs might provide heart "
        "failure rehabilitation programmes",
        "hybrid",
        "hindawi_rehab_res_pract_2010.pdf",
        "p. 4",
    ),
    (
        "all filters were placed at the bedside under ultrasound guidance",
        "lexical",
        "bmc_trauma_2010_dvt_prophylaxis_review.pdf",
        "p. 2",
    ),
    (
        "Everworker venn diagram",
        "lexical",
        "pandoc_reader_basic.pptx",
        "slide 2 Everworker venn diagram",
    ),
    (
        "April is the cruellest month, breeding lilacs out of the dead land",
        "semantic",
        "the_waste_land.epub",
        "ch. 1 The Waste Land",
    ),
]


@pytest.mark.parametrize(("query", "mode", "name", "label"), SEARCHES)
def test_search_finds_file_and_location(
    clean_home: tuple[Path, dict[str, Any]], query: str, mode: str, name: str, label: str
) -> None:
    home, _ = clean_home
    out = _json(
        _verifai(
            home, "search", query, "--collection", "clean", "--mode", mode, "-k", "5", "--json"
        )
    )
    top = out["passages"][0]
    assert (Path(top["path"]).name, top["location"]["label"]) == (name, label)
    scores = top["scores"]
    if mode == "hybrid":
        expected = 0.7 * scores["lexical"] + 0.3 * scores["semantic"]
        assert scores["fused"] == pytest.approx(expected)
    else:  # one engine: the top hit's score divided by itself
        assert scores["fused"] == 1.0
    ids = [p["chunk_id"] for p in out["passages"]]
    assert 1 <= len(ids) == len(set(ids)) <= 5


def test_hybrid_scores_follow_verifai_formula(clean_home: tuple[Path, dict[str, Any]]) -> None:
    home, _ = clean_home
    out = _json(
        _verifai(
            home, "search", "COVID-19: (why?) [transmission] AND", "--collection", "clean", "--json"
        )
    )
    passages = out["passages"]
    assert len(passages) == 10
    assert Path(passages[0]["path"]).name == "scifact_covid_claims.txt"
    for p in passages:
        scores = p["scores"]
        assert scores["fused"] == pytest.approx(0.7 * scores["lexical"] + 0.3 * scores["semantic"])
    fused = [p["scores"]["fused"] for p in passages]
    assert fused == sorted(fused, reverse=True)


def test_search_errors_name_the_missing_collection(clean_home: tuple[Path, dict[str, Any]]) -> None:
    home, _ = clean_home
    proc = _verifai(home, "search", "anything", "--collection", "nope")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: no collection named 'nope'")


README_QUESTION = "What does SPECTER use citations for?"


def test_the_readme_question_is_answered_right_and_green(
    clean_home: tuple[Path, dict[str, Any]],
) -> None:
    """The README's main command: the README question over the whole sample collection with
    the default settings (issue 40: "README answer still right and green"). The sentence that
    answers is on the SPECTER paper's page 1, a chunk retrieval ranks past the reading budget;
    ``generation.keep_best_sentence`` gives it last, cut to that sentence."""
    home, _ = clean_home
    answer = _json(_verifai(home, "ask", README_QUESTION, "--collection", "clean", "--json"))
    assert not answer["abstained"]
    assert answer["label_counts"]["contradicted"] == 0
    right = [
        s
        for s in answer["sentences"]
        if s["label"] == "supported" and "supervision signal" in s["text"]
    ]
    assert right, answer["answer"]
    given = {p["number"]: (p["file"], p["location"]["number"]) for p in answer["passages"]}
    cited = {given[number] for s in right for number in s["citations"]}
    assert ("acl2020_specter.pdf", 1) in cited, answer["passages"]
