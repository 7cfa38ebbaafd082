"""SciFact train claims, split once per run: pairs to train on, pairs to fit calibration on.

``train_verifier.py`` trains on pairs from 85 % of the SciFact train claims
(:func:`scifact_train_pairs`) and writes the ids of the other 15 % to
``OUT/held_out_claim_ids.json``; ``calibrate_verifier.py`` fits the feature layer on pairs
from those held-out claims only (:func:`held_out_pairs`), which the model never saw. Pairs are
built by ``verifier_data.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pool as pl
import verifier_data as vd


def scifact_train_pairs(
    data: Path, *, seed: int, held_out: float = 0.15, mined_numbers: int = 80
) -> tuple[list[pl.PoolPair], list[int]]:
    """SciFact-train-derived pairs (``verifier_data.build_scifact_pairs``) and held-out ids.

    Abstracts cited by dev or test claims, or by held-out train claims, are not mined.
    """
    sci = data / "scifact" / "original"
    corpus = vd.load_corpus(sci / "corpus.jsonl")
    claims = vd.load_claims(sci / "claims_train.jsonl")
    train_claims, held = vd.split_claims(claims, held_out_fraction=held_out, seed=seed)
    rng = random.Random(seed)
    pairs = vd.build_scifact_pairs(train_claims, corpus, rng=rng)
    exclude: set[int] = set()
    for split in ("dev", "test"):
        for c in vd.load_claims(sci / f"claims_{split}.jsonl"):
            exclude.update(int(d) for d in c.get("cited_doc_ids", []))  # type: ignore[attr-defined]
    for c in held:
        exclude.update(int(d) for d in c["cited_doc_ids"])  # type: ignore[attr-defined]
    pairs += vd.mine_corpus_number_pairs(corpus, exclude_docs=exclude, rng=rng, limit=mined_numbers)
    seen: set[tuple[str, str]] = set()
    out = []
    for p in pairs:
        if (p.premise, p.hypothesis) not in seen:
            seen.add((p.premise, p.hypothesis))
            out.append(
                pl.PoolPair(p.premise, p.hypothesis, p.label, "scifact", "train", f"sf:{p.source}")
            )
    return out, sorted(int(c["id"]) for c in held)  # type: ignore[call-overload]


def held_out_pairs(
    run_dir: Path,
    claims: list[dict[str, object]],
    corpus: dict[int, tuple[str, tuple[str, ...]]],
    *,
    seed: int,
) -> list[vd.Pair]:
    """Feature-layer pairs from the train claims ``run_dir``'s model never saw.

    The mixed pairs of :func:`verifier_data.build_scifact_pairs` (rationale sentences, windows,
    hard negatives, perturbations), then the evaluation's own form, claim + whole cited
    abstract (source ``held_abstract``): the mixed pairs alone left whole abstracts mostly
    unlabelled.
    """
    held_ids = set(json.loads((run_dir / "held_out_claim_ids.json").read_text()))
    held = [c for c in claims if int(c["id"]) in held_ids]  # type: ignore[call-overload]
    pairs = vd.build_scifact_pairs(held, corpus, rng=random.Random(seed + 1))
    return pairs + [
        vd.Pair(
            " ".join(corpus[int(d)][1]),
            str(c["claim"]),
            vd.claim_doc_label(c, int(d))[0],
            "held_abstract",
        )
        for c in held
        for d in c["cited_doc_ids"]  # type: ignore[attr-defined]
    ]
