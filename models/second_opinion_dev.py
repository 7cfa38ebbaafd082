"""Measure a second opinion from the generator on green sentences, on dev texts only.

    .venv/bin/python models/second_opinion_dev.py [--n 20] [--gguf FILE] [--cache FILE]

Perturbation pairs from the self-check dev part of the SciFact abstracts cited by train claims
only (as ``self_check_dev.py``; never trained on)
go through the app's path (all checks, the card's ``balanced`` preset). Every pair shown green
whose sentence holds a figure or a negation, or whose P(SUPPORT) margin over the next label is
below 0.3, is judged again by a local GGUF LLM (llama.cpp, greedy, its answer constrained by a
grammar to SUPPORT / CONTRADICT / NO_EVIDENCE: ``evaluate.verifier.LlmJudgeVerifier``) over the
deciding window; any answer but SUPPORT turns green into unsure. Printed per kind: not shown
green before and after, and the seconds per judged sentence on this CPU. Nothing here changes
the app: it measures whether the second opinion should be on by default.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from choose_thresholds import Memo
from self_check_dev import dev_abstracts

from verifai_desktop import modelstore
from verifai_desktop.domain import ShownLabel
from verifai_desktop.evaluate.verifier import LlmJudgeVerifier
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import verify_pairs
from verifai_desktop.verify.nli import get_verifier
from verifai_desktop.verify.numbers import find_numbers
from verifai_desktop.verify.perturb import PerturbKind, sample_pairs
from verifai_desktop.verify.presets import effective_thresholds

_NEGATION = re.compile(r"\b(?:not|no|never|without|n't|neither|nor)\b", re.IGNORECASE)
LOW_MARGIN = 0.3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20, help="pairs per kind (default: 20)")
    ap.add_argument("--gguf", type=Path, default=None, help="judge GGUF (default: bundled 0.5B)")
    ap.add_argument("--cache", type=Path, default=None, help="memo file of probabilities")
    args = ap.parse_args()
    inner = get_verifier("bundled")
    verifier = Memo(inner, args.cache)
    thresholds = effective_thresholds(
        replace(VerifySettings(), preset="balanced"), inner.card.presets
    )
    pairs = sample_pairs(dev_abstracts(), n_per_kind=args.n, seed=13)
    result = verify_pairs(
        verifier,
        [(p.premise, p.hypothesis) for p in pairs],
        granularity="sentences",
        thresholds=thresholds,
    )
    verifier.save()
    gguf = args.gguf or modelstore.ensure_bundled_generator()
    judge = LlmJudgeVerifier(gguf)
    judge.load()
    after = list(result.shown)
    judged = 0
    t0 = time.perf_counter()
    for i, (pair, shown) in enumerate(zip(pairs, result.shown, strict=True)):
        if shown is not ShownLabel.SUPPORT:
            continue
        p = result.probs[i]
        margin = float(p[0] - max(p[1], p[2]))
        if not (find_numbers(pair.hypothesis) or _NEGATION.search(pair.hypothesis)) and (
            margin >= LOW_MARGIN
        ):
            continue
        start, end = result.spans[i]
        judged += 1
        if judge.judge(pair.premise[start:end], pair.hypothesis).value != "SUPPORT":
            after[i] = ShownLabel.UNSURE
    seconds = time.perf_counter() - t0
    print(f"judge {Path(gguf).name}: {judged} sentences judged, "
          f"{seconds / max(judged, 1):.2f} s each")  # fmt: skip
    print(f"{'kind':<16} {'n':>4} {'not green before':>17} {'after':>6}")
    for kind in PerturbKind:
        idx = [i for i, p in enumerate(pairs) if p.kind is kind]
        if not idx:
            continue
        before = sum(result.shown[i] is not ShownLabel.SUPPORT for i in idx)
        now = sum(after[i] is not ShownLabel.SUPPORT for i in idx)
        print(f"{kind.value:<16} {len(idx):4d} {before:17d} {now:6d}")
    print("(unchanged: 'not green' counts false alarms; every other kind: catches)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
