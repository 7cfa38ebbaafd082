"""Where the paraphrase dev set's right-claims bar lies: the rules' ceiling and other calibrations.

    .venv/bin/python models/right_green_ceiling.py [--cache-dir DIR] [--oracle] [--calibrations]

Issue 39 asks for 0.80 of right paraphrases shown green while 0.95 of wrong ones are not. Two
measurements, both on the app's verification path (``evaluate_pairs``, sentence windows, every
rule on), the bundled model's raw logits memoised in ``--cache-dir`` (``logits_cache.py``; delete
it when the model changes) and calibrated as each variant says:

``--oracle``: a verifier that answers P(SUPPORT) 0.9 for the windows holding the passage words
each right (gold SUPPORT) written claim's note quotes (every window of its passage when they are
not found again) and the bundled verifier for everything else. The share of right claims shown
green is then the ceiling the rules leave, whatever the verifier.

``--calibrations``: the shipped temperature and feature layer against temperature only, no
calibration, and logistic feature layers (:func:`fitting.fit_feature_layer`) refitted on
train-only pairs: the pairs of the SciFact train claims held out from the verifier's training
(seed 13, 15 %, as ``scifact_split.py``), and the windows of the paraphrase *training* claims
(``paraphrase_train.jsonl``; the windows holding the note's quote, with the claim's label, and
two others as NO_EVIDENCE). Each at SUPPORT thresholds 0.40 and 0.50 (CONTRADICT 0.60, the
balanced preset). README, "Ninth round".
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))
import paraphrase_data as pd
import verifier_data as vd
from choose_thresholds import DATA
from fitting import fit_feature_layer
from logits_cache import cached_verifier, load_cache, save_cache
from paraphrase_dev import DEV, summary

from verifai_desktop.evaluate.verifier import EvalPair, evaluate_pairs, load_nli
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import Verifier, premise_windows
from verifai_desktop.verify.features import feature_layer_from_dict
from verifai_desktop.verify.negation import positive_form
from verifai_desktop.verify.nli import OnnxVerifier, bundled_dir, softmax
from verifai_desktop.verify.presets import effective_thresholds

LABELS = {"SUPPORT": 0, "CONTRADICT": 1, "NO_EVIDENCE": 2}


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", text.lower()))


class Oracle:
    """P(SUPPORT) 0.9 for the windows that hold the passage words a right claim's note quotes
    (every window of the passage when none is found again); ``inner`` for every other pair.

    The app may rewrite a claim before the verifier reads it (figures as the window writes
    them, both sides' positive forms): a hypothesis that is none of the dev set's claims stands
    for the claim sharing most of its words (Jaccard), right or wrong, and a quote counts in its
    positive form too."""

    def __init__(self, inner: Verifier, claims: dict[str, list[str] | None]) -> None:
        self.inner, self.claims = inner, claims
        self._words = {claim: _words(claim) for claim in claims}

    def load(self) -> None:
        self.inner.load()

    def _quotes(self, hypothesis: str) -> list[str] | None:
        if hypothesis not in self.claims:
            words = _words(hypothesis)
            hypothesis = max(
                self._words, key=lambda c: len(words & self._words[c]) / len(words | self._words[c])
            )
        return self.claims[hypothesis]

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        probs = np.array(self.inner.classify(pairs), dtype=np.float32)
        for n, (window, hypothesis) in enumerate(pairs):
            quotes = self._quotes(hypothesis)
            if quotes is not None and (
                not quotes or any(q in window or positive_form(q) in window for q in quotes)
            ):
                probs[n] = (0.9, 0.05, 0.05)
        return probs


def claim_quotes(path: Path = DEV) -> dict[str, list[str] | None]:
    """Every written claim -> the passage words its note quotes for a right (gold SUPPORT)
    claim, None for a wrong one."""
    out: dict[str, list[str] | None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["kind"].startswith("generated"):
            continue
        if row["label"] != "SUPPORT":
            out[row["hypothesis"]] = None
            continue
        spans = pd.quoted_spans(row.get("note") or "", row["premise"])
        out[row["hypothesis"]] = [row["premise"][a:b] for a, b in spans]
    return out


def bars(
    verifier: Verifier, pairs: list[EvalPair], balanced: VerifySettings, support: float
) -> str:
    """The issue's bars for ``pairs`` at SUPPORT threshold ``support`` (``balanced`` otherwise)."""
    thresholds = dataclasses.replace(balanced, support_threshold=support)
    result = evaluate_pairs(
        verifier,
        pairs,
        dataset="paraphrase_dev",
        system="ceiling",
        granularity=thresholds.premise,
        thresholds=thresholds,
    )
    return "; ".join(summary(result.kinds, result.gold, result.shown))


def training_pairs(seed: int = 13) -> tuple[list[tuple[str, str]], list[int], list[bool]]:
    """Train-only pairs for a feature layer: (pairs, gold, is_whole_abstract)."""
    sci = DATA / "scifact" / "original"
    corpus = vd.load_corpus(sci / "corpus.jsonl")
    claims = vd.load_claims(sci / "claims_train.jsonl")
    _, held = vd.split_claims(claims, held_out_fraction=0.15, seed=seed)
    rows = [(p.premise, p.hypothesis, p.label, False)
            for p in vd.build_scifact_pairs(held, corpus, rng=random.Random(seed + 1))]  # fmt: skip
    for c in held:
        for d in c["cited_doc_ids"]:  # type: ignore[attr-defined]
            label = vd.claim_doc_label(c, int(d))[0]
            rows.append((" ".join(corpus[int(d)][1]), str(c["claim"]), label, True))
    rng = random.Random(seed)
    for line in pd.TRAIN.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        quoted = pd.claim_windows(row, rng)
        rows += [(w, row["hypothesis"], row["label"], False) for w in quoted]
        text = row["premise"]
        spans = pd.quoted_spans(row["note"], text) if row["label"] != "NO_EVIDENCE" else []
        others = [
            text[a:b]
            for a, b in premise_windows(text, "sentences", split_sentences(text))
            if text[a:b] not in quoted and not any(text[s:e] in text[a:b] for s, e in spans)
        ]
        unquoted = rng.sample(others, min(2, len(others)))
        rows += [(w, row["hypothesis"], "NO_EVIDENCE", False) for w in unquoted]
    return [(a, b) for a, b, _, _ in rows], [LABELS[r[2]] for r in rows], [r[3] for r in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", type=Path, default=None, help="folder of the logits memo")
    parser.add_argument("--oracle", action="store_true", help="the rules' ceiling")
    parser.add_argument("--calibrations", action="store_true", help="other calibrations")
    args = parser.parse_args(argv)
    model_dir = bundled_dir()
    config = json.loads((model_dir / "verifier.json").read_text(encoding="utf-8"))
    temperature = float(config["temperature"])
    balanced = effective_thresholds(VerifySettings(), OnnxVerifier(model_dir).card.presets)
    cache = load_cache(args.cache_dir) if args.cache_dir else {}

    def calibrated(t: float, layer: object | None) -> Verifier:
        return cached_verifier(model_dir, cache, calibrated=False, calibration=(t, layer))  # type: ignore[no-any-return]

    shipped = calibrated(temperature, feature_layer_from_dict(config["feature_layer"]))
    pairs = load_nli(DEV)
    print(f"shipped calibration, S 0.40: {bars(shipped, pairs, balanced, 0.40)}", flush=True)
    if args.oracle:
        claims = claim_quotes()
        right = [q for q in claims.values() if q is not None]
        found = sum(1 for q in right if q)
        print(f"right claims: {len(right)}, quoted passage words found again for {found}")
        oracle = bars(Oracle(shipped, claims), pairs, balanced, 0.40)
        print(f"oracle on right claims, S 0.40: {oracle}")
    if args.calibrations:
        fit_pairs, gold, whole = training_pairs()
        probs = softmax(shipped.logits(fit_pairs), temperature)  # type: ignore[attr-defined]
        windows = np.flatnonzero(~np.asarray(whole))

        def layer(idx: NDArray[np.intp], c: float) -> object:
            chosen = [fit_pairs[i] for i in idx]
            return fit_feature_layer(probs[idx], chosen, [gold[i] for i in idx], c=c)

        variants = [
            ("temperature only", calibrated(temperature, None)),
            ("none (T 1, no layer)", calibrated(1.0, None)),
            (
                "layer refitted, all pairs, C 0.05",
                calibrated(temperature, layer(np.arange(len(gold)), 0.05)),
            ),
            ("layer refitted, windows only, C 0.5", calibrated(temperature, layer(windows, 0.5))),
        ]
        for name, verifier in variants:
            for support in (0.40, 0.50, 0.60):
                result = bars(verifier, pairs, balanced, support)
                print(f"{name}, S {support:.2f}: {result}", flush=True)
    if args.cache_dir:
        args.cache_dir.mkdir(parents=True, exist_ok=True)
        save_cache(args.cache_dir, cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
