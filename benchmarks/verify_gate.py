"""What the verifier's gate changes (issue 40, item 4): the shown labels of dev pairs with and
without :attr:`~verifai_desktop.verify.checks.Checks.gate`, every change listed, and the
verifier pairs and seconds each way, in one run.

The gate shows a premise window that shares no content word with the claim part
(:func:`~verifai_desktop.words.content_stems`) as NO_EVIDENCE without asking the verifier. Both
runs go through the app's one verification path
(:func:`~verifai_desktop.verify.check.verify_pairs`, the app's premise granularity and the
bundled verifier's balanced preset, every other check on), gate off first. Dev sets only:
``paraphrase`` (``models/data/paraphrase_dev.jsonl``), ``scifact`` (SciFact dev claims with
their cited abstracts) and ``healthver`` (HealthVer dev).

Usage: .venv/bin/python benchmarks/verify_gate.py [--sets paraphrase,scifact,healthver]
       [--limit N]
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.evaluate.verifier import EvalPair, load_healthver, load_nli, load_scifact
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import Verifier, verify_pairs
from verifai_desktop.verify.checks import ALL_CHECKS
from verifai_desktop.verify.nli import BUNDLED_NAME, get_verifier
from verifai_desktop.verify.presets import effective_thresholds

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
SETS = {
    "paraphrase": lambda: load_nli(REPO / "models" / "data" / "paraphrase_dev.jsonl"),
    "scifact": lambda: load_scifact(DATA / "scifact" / "original", "dev"),
    "healthver": lambda: load_healthver(DATA / "healthver" / "healthver_dev.csv"),
}


class Counting:
    """A verifier that counts the pairs it is asked and the seconds it spends
    (``benchmarks/verifier_int8.py`` and ``conflict_gate.py`` use it too)."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.pairs = 0
        self.seconds = 0.0

    def load(self) -> None:
        self.inner.load()

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        t0 = time.perf_counter()
        out = self.inner.classify(pairs)
        self.seconds += time.perf_counter() - t0
        self.pairs += len(pairs)
        return out


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def compare(name: str, pairs: Sequence[EvalPair], verifier: Verifier, th: VerifySettings) -> None:
    """Print one set's row and its changed labels."""
    items = [(p.premise, p.hypothesis) for p in pairs]
    runs = {}
    for gate in (False, True):
        counting = Counting(verifier)
        t0 = time.perf_counter()
        result = verify_pairs(
            counting,
            items,
            granularity=th.premise,
            thresholds=th,
            checks=dataclasses.replace(ALL_CHECKS, gate=gate),
        )
        runs[gate] = (result.shown, counting.pairs, time.perf_counter() - t0)
    (before, n0, s0), (after, n1, s1) = runs[False], runs[True]
    changed = [n for n in range(len(pairs)) if before[n] != after[n]]
    print(
        f"| {name} | {len(pairs)} | {n0:,} -> {n1:,} ({1 - n1 / max(n0, 1):.0%} fewer) "
        f"| {s0:.0f} -> {s1:.0f} | {len(changed)} |",
        flush=True,
    )
    moves = Counter((pairs[n].label.value, before[n].value, after[n].value) for n in changed)
    for (gold, was, now), count in sorted(moves.items()):
        print(f"|   gold {gold}: shown {was} -> {now} | {count} | | | |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="paraphrase,scifact,healthver")
    parser.add_argument("--limit", type=int, default=None, help="first N pairs of each set")
    args = parser.parse_args()
    inner = get_verifier(BUNDLED_NAME)
    th = effective_thresholds(VerifySettings(), inner.card.presets)
    print(f"load before: {_uptime()}", file=sys.stderr)
    print(
        f"premise {th.premise}, thresholds S {th.support_threshold} / C {th.contradict_threshold}\n"
    )
    print("| dev set | pairs | verifier pairs, gate off -> on | seconds | shown labels changed |")
    print("|---|---|---|---|---|")
    for name in args.sets.split(","):
        compare(name, SETS[name]()[: args.limit], inner, th)
    print(f"\nload after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
