"""`verifai eval check` on a small real SciFact slice with the shipped verifier and embedder.

The corpus holds the gold abstracts of the claims asked plus unrelated abstracts, so the open
setting's candidate search has something to miss; the strength threshold is tuned on the train
claims and the dev claims are reported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli import run_verifai
from verifai_desktop.evaluate.check import STRENGTH_GRID

N_CLAIMS = 5
N_OTHER_ABSTRACTS = 20


def _with_evidence(path: Path, n: int) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["evidence"]][:n]


@pytest.fixture(scope="module")
def slice_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import SHARED_DATA

    src = SHARED_DATA / "scifact" / "original"
    out = tmp_path_factory.mktemp("scifact") / "original"
    out.mkdir()
    gold_docs: set[str] = set()
    for split in ("dev", "train"):
        claims = _with_evidence(src / f"claims_{split}.jsonl", N_CLAIMS)
        gold_docs |= {doc for c in claims for doc in c["evidence"]}  # type: ignore[attr-defined]
        lines = "".join(json.dumps(c) + "\n" for c in claims)
        (out / f"claims_{split}.jsonl").write_text(lines, encoding="utf-8")
    corpus, others = [], 0
    for line in (src / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if str(doc["doc_id"]) in gold_docs:
            corpus.append(line)
        elif others < N_OTHER_ABSTRACTS:
            corpus.append(line)
            others += 1
    (out / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    return out


def test_eval_check_reports_dev_at_the_strength_chosen_on_train(slice_dir: Path) -> None:
    done = run_verifai("eval", "check", "--scifact", str(slice_dir), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["split"], report["n_claims"], report["budget"]) == ("dev", N_CLAIMS, 10)
    tuning = {row["min_strength"]: row for row in report["tuning"]}
    assert sorted(tuning) == sorted(STRENGTH_GRID)
    chosen = report["chosen_strength"]
    assert tuning[chosen]["f1"] == max(row["f1"] for row in report["tuning"])
    result = report["result"]
    assert result["min_strength"] == chosen
    assert result["gold"] == report["diagnosis"]["gold"] >= N_CLAIMS
    assert 0 <= result["correct"] <= min(result["predicted"], result["gold"])
    diagnosis = report["diagnosis"]
    parts = ("right_label", "no_evidence", "wrong_label")
    assert sum(diagnosis[k] for k in parts) == diagnosis["checked"] <= diagnosis["gold"]
    # Every gold abstract is in a corpus of under 60: BM25 and the dense search find most.
    assert diagnosis["checked"] >= 0.75 * diagnosis["gold"]
    # A document is predicted correctly only with the gold label.
    assert result["correct"] <= diagnosis["right_label"]
