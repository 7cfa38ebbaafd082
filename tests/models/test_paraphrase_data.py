"""The paraphrase training claims (issue 39, ``models/data/paraphrase_train.jsonl``) and the
stage-3 pairs cut from them (``models/paraphrase_data.py``): disjoint from every dev, held-out
and test passage; each claim trained against a window of the app that holds its evidence."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import paraphrase_data as prd
import perturb_data as pd
import pool as pl
import pytest
import verifier_data as vd

from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.check import premise_windows

DEV = Path(prd.__file__).resolve().parent / "data" / "paraphrase_dev.jsonl"


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def test_training_claims_come_from_no_dev_held_out_or_test_passage(shared_data: Path) -> None:
    rows = _rows(prd.TRAIN)
    assert len(rows) > 600
    dev = {r["source"] for r in _rows(DEV)}
    dev |= {r["source"] for r in _rows(DEV.parent / "name_binding_dev.jsonl")}
    figures = {f"pubmedqa:{json.loads(line)['pmid']}" for line in
               (DEV.parent / "figure_questions.jsonl").open() if line.strip()}  # fmt: skip
    sources = {r["source"] for r in rows}
    assert not sources & (dev | figures)

    claims = vd.load_claims(shared_data / "scifact" / "original" / "claims_train.jsonl")
    _, held = vd.split_claims(claims, held_out_fraction=0.15, seed=13)
    held_ids = {int(c["id"]) for c in held}  # type: ignore[call-overload]
    allowed = dict(pd.scifact_training_abstracts(shared_data / "scifact" / "original", held_ids))
    allowed |= dict(pd.pubmedqa_training_abstracts(shared_data / "pubmedqa" / "ori_pqal.json"))
    test_pmids = set(json.loads((shared_data / "pubmedqa" / "test_ground_truth.json").read_text()))
    for r in rows:
        assert allowed.get(r["source"]) == r["premise"], r["id"]
        assert r["source"].split(":")[1] not in test_pmids
    kinds = Counter(r["kind"] for r in rows)
    dev_kinds = {r["kind"] for r in _rows(DEV) if not r["kind"].startswith("generated")}
    assert set(kinds) == dev_kinds | {"not_stated"}
    assert kinds["not_stated"] > 0 and Counter(r["label"] for r in rows)["NO_EVIDENCE"] > 0


def test_a_claim_is_trained_on_the_windows_holding_the_words_its_note_quotes() -> None:
    text = (
        "We enrolled 120 adults. In the treated arm 40% relapsed. "
        "In the placebo arm 65% relapsed. No serious adverse events occurred."
    )
    row = {"premise": text, "hypothesis": "About two in five patients on treatment relapsed.",
           "note": "Rests on 'In the treated arm 40% relapsed'.", "label": "SUPPORT"}  # fmt: skip
    windows = prd.claim_windows(row, random.Random(1))
    assert windows and all("In the treated arm 40% relapsed." in w for w in windows)
    spans = premise_windows(text, "sentences", split_sentences(text))
    assert set(windows) <= {text[a:b] for a, b in spans}
    assert len(windows) == prd.WINDOWS_PER_CLAIM

    # No quote found: the window sharing the claim's figures (the placebo arm's 65 %).
    wrong = dict(row, hypothesis="In the treated arm 65% relapsed.", label="CONTRADICT",
                 note="65% is the placebo arm; the treated arm had 40%.")  # fmt: skip
    (window,) = prd.claim_windows(wrong, random.Random(1))
    assert "65%" in window and "40%" in window


def test_paraphrase_pairs_are_a_shippable_third_stage_with_replay(tmp_path: Path) -> None:
    pairs = prd.paraphrase_pairs(seed=13)
    assert pairs == prd.paraphrase_pairs(seed=13)
    assert {p.source for p in pairs} == set(pl.PARAPHRASE) <= pl.SHIPPABLE
    assert all(p.source in pl.LICENCES for p in pairs)
    assert {p.label for p in pairs} == set(pl.LABELS)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "source": "docs:1", "label": "SUPPORT",
                               "hypothesis": "h", "premise": "p.", "note": ""}) + "\n")  # fmt: skip
    with pytest.raises(ValueError, match="docs:1"):
        prd.paraphrase_pairs(bad)
