"""What a verifier export changes (issue 40, item 4): the shown labels of the dev sets with the
bundled verifier and with another export of it, every change listed, and the verifier's pairs
per second each way, side by side in one run.

Made to choose the bundled verifier's int8 scheme: ``--other`` is a folder exported with
``verifai models export-verifier --int8 --int8-scheme rows`` from the model rebuilt out of the
shipped one (``models/verifier_from_onnx.py``), ``--reference`` the verifier shipped before.
Both go through the app's one verification path
(:func:`~verifai_desktop.verify.check.verify_pairs`: the app's premise granularity, every check
on) with the same thresholds, the reference's balanced preset; each folder keeps its own
calibration (``verifier.json``). Dev sets only (as :mod:`benchmarks.verify_gate`):
``paraphrase`` (``models/data/paraphrase_dev.jsonl``), ``scifact`` (SciFact dev claims with
their cited abstracts) and ``healthver`` (HealthVer dev). The two verifiers run set by set, the
reference first; pairs/s is the verifier's own rate (windows it was asked, over the seconds
spent inside it), with one intra-op thread per core.

Usage: .venv/bin/python benchmarks/verifier_int8.py --other DIR [--reference DIR]
       [--sets paraphrase,scifact,healthver] [--limit N]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_gate import SETS, Counting, _uptime

from verifai_desktop.evaluate.verifier import EvalPair
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import Verifier, verify_pairs
from verifai_desktop.verify.nli import BUNDLED_NAME, get_verifier
from verifai_desktop.verify.presets import effective_thresholds


def compare(
    name: str,
    pairs: Sequence[EvalPair],
    verifiers: Sequence[Verifier],
    th: VerifySettings,
) -> None:
    """Print one set's row (reference, other) and its changed labels."""
    items = [(p.premise, p.hypothesis) for p in pairs]
    runs = []
    for verifier in verifiers:
        timed = Counting(verifier)
        result = verify_pairs(timed, items, granularity=th.premise, thresholds=th)
        runs.append((result.shown, timed.pairs, timed.seconds))
    (before, n0, s0), (after, n1, s1) = runs
    changed = [n for n in range(len(pairs)) if before[n] != after[n]]
    gold = Counter(p.label.value for p in pairs)
    right0 = sum(before[n].value == p.label.value for n, p in enumerate(pairs))
    right1 = sum(after[n].value == p.label.value for n, p in enumerate(pairs))
    print(
        f"| {name} | {len(pairs)} | {n0:,} / {n1:,} | {n0 / s0:.1f} / {n1 / s1:.1f} "
        f"({s0 / s1:.2f}x) | {right0} / {right1} | {len(changed)} |",
        flush=True,
    )
    moves = Counter((pairs[n].label.value, before[n].value, after[n].value) for n in changed)
    for (g, was, now), count in sorted(moves.items()):
        print(f"|   gold {g} ({gold[g]}): shown {was} -> {now} | {count} | | | | |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--other", type=Path, required=True, help="the export to compare")
    parser.add_argument(
        "--reference", default=BUNDLED_NAME, help="verifier name or folder (default: bundled)"
    )
    parser.add_argument("--sets", default="paraphrase,scifact,healthver")
    parser.add_argument("--limit", type=int, default=None, help="first N pairs of each set")
    args = parser.parse_args()
    reference = get_verifier(args.reference)
    other = get_verifier(str(args.other))
    th = effective_thresholds(VerifySettings(), reference.card.presets)
    for verifier in (reference, other):
        verifier.load()
    print(f"load before: {_uptime()}", file=sys.stderr)
    print(
        f"premise {th.premise}, thresholds S {th.support_threshold} / C {th.contradict_threshold}"
        f"; reference {reference.model_dir}, other {other.model_dir}\n"
    )
    print(
        "| dev set | pairs | verifier pairs (ref. / other) | verifier pairs/s (ref. / other) "
        "| shown right (ref. / other) | shown labels changed |"
    )
    print("|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        compare(name, SETS[name]()[: args.limit], (reference, other), th)
    print(f"\nload after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
