"""Loading verifier evaluation files (``evaluate/verifier.load_nli``) from the real data."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from verifai_desktop.domain import NliLabel
from verifai_desktop.evaluate.verifier import load_nli


def test_pool_jsonl_loads_every_pair_with_its_label(shared_data: Path) -> None:
    path = shared_data / "nli_train" / "covidfact_rte.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    pairs = load_nli(path)

    assert len(pairs) == len(rows)
    assert Counter(p.label.value for p in pairs) == Counter(r["label"] for r in rows)
    first = pairs[0]
    assert (first.premise, first.hypothesis) == (rows[0]["premise"], rows[0]["hypothesis"])
    assert first.pair_id == f"covidfact_rte:{rows[0]['id']}"


def test_snli_jsonl_drops_rows_without_gold_label(shared_data: Path) -> None:
    path = next((shared_data / "nli" / "snli").glob("*.jsonl"))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    gold = [r for r in rows if r["gold_label"] != "-"]

    pairs = load_nli(path)

    assert len(pairs) == len(gold)
    assert {p.label for p in pairs} == set(NliLabel)
