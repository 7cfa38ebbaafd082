"""The verifier's training data and loop (``models/pool.py``, ``models/trainer.py``),
on real pool files and the real all-MiniLM-L6-v2 encoder."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pool as pl
import pytest


def test_every_pool_file_loads_with_the_readme_counts(pool_dir: Path) -> None:
    manifest_counts = {
        "lingnli": 52_302, "snli_dev_test": 16_137, "cad_snli": 11_155,
        "semi_auto_wiki": 15_788, "rte_fever": 12_761, "covidfact_rte": 3_679,
        "climate_fever": 6_070, "sufficient_facts": 5_646,
    }  # fmt: skip
    assert set(pl.GENERAL_NLI) | set(pl.CLAIM_EVIDENCE) == set(manifest_counts)
    for source, n in manifest_counts.items():
        pairs = pl.load_source(pool_dir, source)
        assert len(pairs) == n, source
        assert {p.label for p in pairs} <= set(pl.LABELS)
        assert all(p.source == source for p in pairs)
    rte = Counter(p.label for p in pl.load_source(pool_dir, "rte_fever"))
    assert rte == {"SUPPORT": 6_399, "CONTRADICT": 6_362}


def test_a_bad_label_is_an_error_naming_the_line(tmp_path: Path) -> None:
    good = {"premise": "A man sleeps.", "hypothesis": "A man rests.", "label": "SUPPORT"}
    bad = {**good, "label": "entailment"}
    (tmp_path / "x.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ValueError, match=r"x\.jsonl:2"):
        pl.load_source(tmp_path, "x")


def test_a_source_without_no_evidence_gets_hard_negatives_and_equal_class_weight(
    pool_dir: Path,
) -> None:
    rte = pl.load_source(pool_dir, "rte_fever")[:600]
    balanced = pl.balance_source(rte, rng=random.Random(1))
    counts = Counter(p.label for p in balanced)
    made = [p for p in balanced if p.label == "NO_EVIDENCE"]
    assert len(made) == round((counts["SUPPORT"] + counts["CONTRADICT"]) / 2)
    own = {(p.hypothesis, p.premise) for p in rte}
    assert all((p.hypothesis, p.premise) not in own for p in made)
    assert all(p.pair_id.endswith("#ne") for p in made)
    # a hard negative shares words with its hypothesis (TF-IDF nearest foreign premise)
    overlap = [
        len(set(p.hypothesis.lower().split()) & set(p.premise.lower().split())) for p in made
    ]
    assert sum(o > 0 for o in overlap) / len(made) > 0.9
    totals: dict[str, float] = defaultdict(float)
    for p in balanced:
        totals[p.label] += p.weight
    assert totals["SUPPORT"] == pytest.approx(totals["CONTRADICT"])
    assert totals["SUPPORT"] == pytest.approx(totals["NO_EVIDENCE"])
    # a source that has all three classes gets no synthetic pairs
    snli = pl.load_source(pool_dir, "snli_dev_test")[:300]
    assert len(pl.balance_source(snli, rng=random.Random(1))) == 300


def test_the_licensed_run_uses_only_shippable_sources_and_holds_back_lingnli_dev(
    pool_dir: Path,
) -> None:
    s1, s2 = pl.build_stages(pool_dir, licensed_only=True, limit_per_source=200)
    assert {p.source for p in s1.pairs} == {"snli_dev_test", "cad_snli"}
    assert {p.source for p in s2.pairs} == {"rte_fever", "snli_dev_test", "cad_snli"}
    a1, a2 = pl.build_stages(pool_dir, licensed_only=False, limit_per_source=200)
    assert {p.source for p in a1.pairs} == set(pl.GENERAL_NLI)
    assert not any(p.source == "lingnli" and p.split == "dev" for p in a1.pairs)
    for st in (s1, s2, a1, a2):
        assert sum(p.weight for p in st.pairs) / len(st.pairs) == pytest.approx(1.0)


@pytest.mark.slow
def test_resume_from_a_checkpoint_continues_the_same_schedule(
    pool_dir: Path, tmp_path: Path
) -> None:
    import torch
    import train_verifier as tv
    from trainer import CHECKPOINT, Trainer

    # Batches of 8: stage 1 is 3 steps (24 pairs), stage 2 is 2 epochs of 2 steps (15 pairs),
    # so a stop after 4 steps is inside an epoch of stage 2, with optimiser moments to resume.
    fever = pl.balance_source(pl.load_source(pool_dir, "rte_fever")[:10], rng=random.Random(2))
    assert len(fever) == 15
    stages = (
        pl.Stage("general_nli", tuple(pl.load_source(pool_dir, "cad_snli")[:24]), 1, 5e-5, 48),
        pl.Stage("claim_evidence", tuple(fever), 2, 3e-5, 64),
    )
    base = str(tv.base_model_dir())

    straight = Trainer(tmp_path / "a", stages, base=base, batch_size=8, threads=1)
    assert straight.train() is True

    first = Trainer(tmp_path / "b", stages, base=base, batch_size=8, threads=1)
    assert first.train(max_steps=4) is False  # stops inside stage 2 (stage 1 = 3 steps)
    assert (
        json.loads((tmp_path / "b" / "progress.jsonl").read_text().splitlines()[-1])["stage"] == 1
    )
    second = Trainer(tmp_path / "b", stages, base=base, batch_size=8, threads=1)
    second.load_checkpoint()
    assert second.pos.global_step == 4
    assert second.train() is True

    a = straight.model.state_dict()
    b = second.model.state_dict()
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6, msg=key)
    assert (tmp_path / "b" / "hf" / "config.json").is_file()

    # Stopping at the stage boundary keeps a checkpoint without optimiser moments (the next
    # stage starts a new optimiser), and resuming from it ends on the same weights.
    staged = Trainer(tmp_path / "c", stages, base=base, batch_size=8, threads=1)
    assert staged.train(stop_after_stage=1) is False
    saved = torch.load(tmp_path / "c" / CHECKPOINT, weights_only=False)
    assert (saved["position"]["stage"], saved["position"]["step"]) == (1, 0)
    assert saved["optimizer"]["state"] == {}
    third = Trainer(tmp_path / "c", stages, base=base, batch_size=8, threads=1)
    third.load_checkpoint()
    assert third.train(stop_after_stage=1) is True  # already past stage 1: runs to the end
    c = third.model.state_dict()
    for key in a:
        torch.testing.assert_close(a[key], c[key], rtol=0, atol=1e-6, msg=key)

    other = Trainer(tmp_path / "b", stages[:1], base=base, batch_size=8, threads=1)
    with pytest.raises(ValueError, match="other data or settings"):
        other.load_checkpoint()
