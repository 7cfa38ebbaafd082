"""`verifai eval retrieval` end to end on a small slice of SciFact (real models, real indexes).

The slice: the first 10 SciFact test claims, every document they judge relevant, and the first
documents of the corpus as distractors (120 documents in all), written as a BEIR folder.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import run_verifai
from verifai_desktop.evaluate.beir import load_beir
from verifai_desktop.evaluate.metrics import evaluate_run

N_QUERIES = 10
N_DOCS = 120
MODES = ["hybrid", "rrf", "lexical", "semantic"]


def _verifai(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return run_verifai(*args, home=home)


@pytest.fixture(scope="module")
def mini_beir(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """A 120-document, 10-claim BEIR folder cut from SciFact."""
    src = shared_data / "scifact" / "beir"
    full = load_beir(src, "test")
    qids = list(full.qrels)[:N_QUERIES]
    relevant = {d for q in qids for d in full.qrels[q]}
    chosen = [d for d in full.corpus if d.doc_id in relevant]
    for d in full.corpus:
        if len(chosen) >= N_DOCS:
            break
        if d.doc_id not in relevant:
            chosen.append(d)
    root = tmp_path_factory.mktemp("mini") / "scifact-mini"
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for d in chosen:
            fh.write(json.dumps({"_id": d.doc_id, "title": d.title, "text": d.text}) + "\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in qids:
            fh.write(json.dumps({"_id": q, "text": full.queries[q]}) + "\n")
    with (root / "qrels" / "test.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q in qids:
            for doc_id, grade in full.qrels[q].items():
                fh.write(f"{q}\t{doc_id}\t{grade}\n")
    return root


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("verifai_home")


@pytest.fixture(scope="module")
def all_modes(mini_beir: Path, home: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """JSON output and run file of one `--mode all` evaluation (ingests the slice)."""
    run_file = home / "run.json"
    proc = _verifai(
        "eval",
        "retrieval",
        "--beir",
        str(mini_beir),
        "--mode",
        "all",
        "--json",
        "--run-file",
        str(run_file),
        home=home,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), json.loads(run_file.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_every_mode_is_reported_with_metrics_in_range(
    all_modes: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    report, _ = all_modes
    assert report["dataset"] == "scifact-mini"
    assert report["split"] == "test"
    assert report["documents"] == N_DOCS
    assert report["queries"] == N_QUERIES
    assert report["collection"] == "beir-scifact-mini"
    assert report["collection_reused"] is False
    assert [m["mode"] for m in report["modes"]] == MODES
    for m in report["modes"]:
        assert m["queries"] == N_QUERIES
        for name in ("nDCG@10", "Recall@100", "MAP@10", "P@10"):
            assert 0.0 <= m[name] <= 1.0, (m["mode"], name)
        assert (m["lexical_weight"] is None) == (m["mode"] != "hybrid")
    hybrid = report["modes"][0]
    assert hybrid["lexical_weight"] + hybrid["semantic_weight"] == pytest.approx(1.0)


@pytest.mark.slow
def test_reported_metrics_are_those_of_the_ranked_lists(
    all_modes: tuple[dict[str, Any], dict[str, Any]],
    mini_beir: Path,
) -> None:
    report, runs = all_modes
    dataset = load_beir(mini_beir, "test")
    corpus_ids = {d.doc_id for d in dataset.corpus}
    assert sorted(runs) == sorted(MODES)
    for m in report["modes"]:
        run = runs[m["mode"]]
        assert sorted(run) == sorted(dataset.queries)
        for ranked in run.values():
            assert 0 < len(ranked) <= 100
            assert len(set(ranked)) == len(ranked)
            assert set(ranked) <= corpus_ids
        recomputed = evaluate_run(run, dataset.qrels).as_dict()
        for name in ("nDCG@10", "Recall@100", "MAP@10", "P@10"):
            assert m[name] == pytest.approx(recomputed[name], abs=1e-12)
    # Every chunk has a vector and 300 chunks are fetched, so semantic search ranks 100 of
    # the 120 documents for every claim: the chunk depth reaches Recall@100's cut-off.
    assert {len(r) for r in runs["semantic"].values()} == {100}


@pytest.mark.slow
def test_second_run_reuses_the_collection_and_repeats_the_figures(
    all_modes: tuple[dict[str, Any], dict[str, Any]],
    mini_beir: Path,
    home: Path,
) -> None:
    first, _ = all_modes
    proc = _verifai(
        "eval", "retrieval", "--beir", str(mini_beir), "--mode", "lexical", "--json", home=home
    )
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert again["collection_reused"] is True
    assert [m["mode"] for m in again["modes"]] == ["lexical"]
    before = next(m for m in first["modes"] if m["mode"] == "lexical")
    for name in ("nDCG@10", "Recall@100", "MAP@10", "P@10"):
        assert again["modes"][0][name] == before[name]


def test_missing_split_is_a_clear_error(mini_beir: Path, tmp_path: Path) -> None:
    proc = _verifai("eval", "retrieval", "--beir", str(mini_beir), "--split", "dev", home=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: could not read dev.tsv")
    assert "--split" in proc.stderr
