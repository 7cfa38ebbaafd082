"""Stage 3 of the verifier's training (issue 26): perturbation pairs of licensed abstracts
(``models/perturb_data.py``), the third stage (``models/pool.py``), and runs through it
(``models/trainer.py``, ``models/train_verifier.py``) on real data and the real MiniLM."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import perturb_data as pd
import pool as pl
import pytest
import verifier_data as vd

from verifai_desktop.evaluate.pubmedqa import load_pubmedqa
from verifai_desktop.verify.check import premise_windows
from verifai_desktop.verify.perturb import GOLD, PerturbKind

SEED = 13
AIM_OPENING = re.compile(
    r"We tested whether|We hypothesised that|We asked whether|We sought to determine whether|"
    r"This study aimed to examine whether"
)


def held_out_ids(shared_data: Path) -> list[int]:
    """The claims ``train_verifier.py`` holds out by default (seed 13, 15 %)."""
    claims = vd.load_claims(shared_data / "scifact" / "original" / "claims_train.jsonl")
    _, held = vd.split_claims(claims, held_out_fraction=0.15, seed=SEED)
    return sorted(int(c["id"]) for c in held)  # type: ignore[call-overload]


def cited(path: Path, ids: set[int] | None = None) -> set[int]:
    out: set[int] = set()
    for claim in vd.load_claims(path):
        if ids is None or int(claim["id"]) in ids:  # type: ignore[call-overload]
            out.update(int(d) for d in claim.get("cited_doc_ids", []))  # type: ignore[attr-defined]
    return out


@pytest.fixture(scope="module")
def every_pair(shared_data: Path) -> list[pl.PoolPair]:
    """Stage-3 pairs with no cap per kind: one per kind from every trainable abstract."""
    return pd.stage3_pairs(
        shared_data, n_per_kind=100_000, held_out_claim_ids=held_out_ids(shared_data), seed=SEED
    )


def passage_texts(shared_data: Path) -> dict[str, str]:
    sci = shared_data / "scifact" / "original"
    return {
        **{f"scifact:{d}": t for d, t in pd.train_cited_abstracts(sci).items()},
        **dict(pd.pubmedqa_training_abstracts(shared_data / "pubmedqa" / "ori_pqal.json")),
    }


def test_each_kind_gets_its_label_and_a_sentence_window_the_app_checks(
    every_pair: list[pl.PoolPair], shared_data: Path
) -> None:
    texts = passage_texts(shared_data)
    kinds = Counter((p.source, p.pair_id.split("#")[1]) for p in every_pair)
    for source in pl.PERTURBATION:
        assert {k for s, k in kinds if s == source} == {k.value for k in PerturbKind}, source
    shorter = 0
    for p in every_pair:
        source_id, kind_name = p.pair_id.split("#")
        kind = PerturbKind(kind_name)
        text = texts[source_id]
        assert p.label == GOLD[kind].value, p
        assert p.source == "perturb_" + source_id.split(":")[0]
        assert (p.split, p.weight) == ("train", 1.0)
        windows = {text[a:b] for a, b in premise_windows(text, "sentences")}
        if kind is PerturbKind.AIM:  # the aim stands in the window instead of the finding
            assert p.premise not in text and AIM_OPENING.search(p.premise), p
            assert p.hypothesis in text  # the finding as written
        else:
            assert p.premise in windows, p
            if kind is PerturbKind.UNCHANGED:
                assert p.hypothesis in p.premise
            else:  # changed: no sentence of the passage says it
                assert p.hypothesis not in text, p
        shorter += len(p.premise) < len(text)
    assert shorter > 0.9 * len(every_pair)  # windows of 1-3 sentences, not whole abstracts


def test_stage3_never_sees_a_dev_abstract_a_held_out_claims_abstract_or_a_reported_pmid(
    every_pair: list[pl.PoolPair], shared_data: Path
) -> None:
    import self_check_dev

    sci = shared_data / "scifact" / "original"
    train_cited = set(pd.train_cited_abstracts(sci))
    dev = self_check_dev.dev_abstracts()
    dev_ids = {int(d) for d, _ in dev}
    assert dev_ids < train_cited and 0.4 < len(dev_ids) / len(train_cited) < 0.6
    docs = {int(p.pair_id.split("#")[0].split(":")[1]) for p in every_pair
            if p.source == "perturb_scifact"}  # fmt: skip
    held = cited(sci / "claims_train.jsonl", set(held_out_ids(shared_data)))
    assert docs and docs <= train_cited
    assert not docs & dev_ids
    assert not docs & held
    assert not docs & (cited(sci / "claims_dev.jsonl") | cited(sci / "claims_test.jsonl"))
    # every trainable abstract gives pairs: the exclusions above are all that is left out
    assert docs == train_cited - dev_ids - held

    items = load_pubmedqa(shared_data / "pubmedqa" / "ori_pqal.json")
    pmids = {p.pair_id.split("#")[0].split(":")[1] for p in every_pair
             if p.source == "perturb_pubmedqa"}  # fmt: skip
    assert not pmids & {it.pmid for it in items[:100]}
    assert len(pmids) > 0.9 * (len(items) - 100)

    # no premise of a stage-3 pair is text of a dev abstract or a kept-out PubMedQA abstract
    reported = ["\n\n".join(c.strip() for c in it.contexts) for it in items[:100]]
    kept_out = "\0".join([t for _, t in dev] + reported)
    windows = [p.premise for p in every_pair if not p.pair_id.endswith("#aim")]
    assert not [w for w in windows if w in kept_out]


def test_stage3_follows_stages_1_and_2_and_replays_stage_2(
    pool_dir: Path, shared_data: Path
) -> None:
    pairs = pd.stage3_pairs(
        shared_data, n_per_kind=6, held_out_claim_ids=held_out_ids(shared_data), seed=SEED
    )
    assert Counter(p.pair_id.split("#")[1] for p in pairs) == dict.fromkeys(
        (k.value for k in PerturbKind), 6
    )
    two = pl.build_stages(pool_dir, licensed_only=True, limit_per_source=100)
    three = pl.build_stages(pool_dir, licensed_only=True, limit_per_source=100, stage3_pairs=pairs)
    assert len(two) == 2 and three[:2] == two  # stages 1-2 do not change with a stage 3
    st = three[2]
    assert (st.name, st.epochs, st.lr, st.max_len) == ("perturbation", 1, 2e-5, 192)
    mine = [p for p in st.pairs if p.source in pl.PERTURBATION]
    replay = [p for p in st.pairs if p.source not in pl.PERTURBATION]
    assert sorted((p.premise, p.hypothesis) for p in mine) == sorted(
        (p.premise, p.hypothesis) for p in pairs
    )
    key = {(p.premise, p.hypothesis, p.label, p.source) for p in two[1].pairs}
    assert len(replay) == len(pairs) and all(
        (p.premise, p.hypothesis, p.label, p.source) in key for p in replay
    )
    assert sum(p.weight for p in st.pairs) / len(st.pairs) == pytest.approx(1.0)
    for source in pl.PERTURBATION:  # each source's three classes weigh the same
        totals: dict[str, float] = defaultdict(float)
        for p in mine:
            if p.source == source:
                totals[p.label] += p.weight
        assert set(totals) == set(pl.LABELS)
        assert max(totals.values()) == pytest.approx(min(totals.values()))
    half = pl.build_stages(pool_dir, licensed_only=True, limit_per_source=100,
                           stage3_pairs=pairs, stage3_replay=0.5)  # fmt: skip
    assert len(half[2].pairs) == len(pairs) + round(0.5 * len(pairs))
    with pytest.raises(ValueError, match="third value"):  # before any pool file is read
        pl.build_stages(pool_dir / "missing", licensed_only=True, limit_per_source=100,
                        stage3_pairs=pairs, epochs=(1, 2))  # fmt: skip


@pytest.mark.slow
def test_a_three_stage_run_resumed_inside_stage_3_ends_on_the_same_weights(
    pool_dir: Path, shared_data: Path, tmp_path: Path
) -> None:
    import torch
    import train_verifier as tv
    from trainer import Trainer

    pairs = pd.stage3_pairs(
        shared_data, n_per_kind=2, held_out_claim_ids=held_out_ids(shared_data), seed=SEED
    )
    stages = pl.build_stages(pool_dir, licensed_only=True, limit_per_source=16,
                             max_lens=(32, 32, 32), stage3_pairs=pairs)  # fmt: skip
    assert [len(st.pairs) for st in stages] == [32, 21, 28]  # 2 + 2 x 2 + 2 steps of 16
    base = str(tv.base_model_dir())

    straight = Trainer(tmp_path / "a", stages, base=base, batch_size=16, threads=1)
    assert straight.train() is True
    assert {p.name for p in (tmp_path / "a").iterdir() if p.is_dir()} == {
        "stage1_general_nli", "stage2_claim_evidence", "stage3_perturbation", "hf"
    }  # fmt: skip

    first = Trainer(tmp_path / "b", stages, base=base, batch_size=16, threads=1)
    assert first.train(max_steps=7) is False  # the first step of stage 3
    last = json.loads((tmp_path / "b" / "progress.jsonl").read_text().splitlines()[-1])
    assert (last["stage"], last["batch"], last["global_step"]) == (2, 1, 7)
    second = Trainer(tmp_path / "b", stages, base=base, batch_size=16, threads=1)
    second.load_checkpoint()
    assert second.train() is True
    a, b = straight.model.state_dict(), second.model.state_dict()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=1e-6, msg=name)

    with pytest.raises(ValueError, match="other data or settings"):  # a stage-2-only run
        Trainer(tmp_path / "b", stages[:2], base=base, batch_size=16, threads=1).load_checkpoint()


@pytest.mark.slow
def test_the_command_runs_stage_3_resumes_inside_it_and_trains_it_alone_on_init(
    shared_data: Path, tmp_path: Path
) -> None:
    import train_verifier as tv

    common = ["--data", str(shared_data), "--licensed-only", "--limit-per-source", "16",
              "--batch-size", "16", "--threads", "1", "--dev-limit", "4",
              "--max-len", "32", "32", "32"]  # fmt: skip
    run = tmp_path / "run"
    three = [*common, "--out", str(run), "--stage3", "2"]
    assert tv.main([*three, "--stop-after-stage", "2"]) == 0
    assert tv.main([*three, "--resume", "--max-minutes", "0"]) == 0  # one step into stage 3
    progress = [json.loads(x) for x in (run / "progress.jsonl").read_text().splitlines()]
    assert (progress[-1]["stage"], progress[-1]["batch"], progress[-1]["done"]) == (2, 1, False)
    assert tv.main([*three, "--resume"]) == 0
    info = json.loads((run / "train_info.json").read_text())
    assert info["done"] is True and len(info["parts"]) == 3
    assert list(info["stages"]) == ["general_nli", "claim_evidence", "perturbation"]
    assert set(pl.PERTURBATION) <= set(info["stages"]["perturbation"]["sources"])
    assert set(pl.PERTURBATION) <= set(info["licences"])
    assert (run / "hf" / "config.json").is_file()

    # stage 3 alone on top of the model that ended stage 2 (a finished v2 run's model)
    again = tmp_path / "again"
    init = [*common, "--out", str(again), "--stage3", "2", "--init",
            str(run / "stage2_claim_evidence")]  # fmt: skip
    assert tv.main(init) == 0
    info = json.loads((again / "train_info.json").read_text())
    assert info["done"] is True and info["init"] == str((run / "stage2_claim_evidence").resolve())
    assert list(info["stages"]) == ["general_nli", "claim_evidence", "perturbation"]
    assert info["pairs"] == sum(st["pairs"] for st in info["stages"].values())
    progress = [json.loads(x) for x in (again / "progress.jsonl").read_text().splitlines()]
    assert progress[-1]["done"] is True and progress[-1]["global_step"] == 2  # stage 3 only
    assert (again / "stage1_perturbation" / "config.json").is_file()
    held = (run / "held_out_claim_ids.json").read_text()
    assert (again / "held_out_claim_ids.json").read_text() == held

    # a run that would hold out other claims, or mix licence classes, is refused
    other = [*common, "--stage3", "2", "--init", str(run / "hf")]
    assert tv.main([*other, "--out", str(tmp_path / "x"), "--held-out", "0.2"]) == 2
    unlicensed = [a for a in other if a != "--licensed-only"]
    assert tv.main([*unlicensed, "--out", str(tmp_path / "y")]) == 2
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
