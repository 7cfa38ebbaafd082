"""What the contradiction search's subject gate changes (issue 40, item 4): on answers to
PubMedQA dev questions, the conflicting passages listed per sentence with the gate off and on,
every change listed, and the verifier pairs and seconds each way, in one run.

The gate (``find_conflicts(subject_gate=True)``,
:func:`~verifai_desktop.contradictions.about_subject`) leaves a candidate passage unasked when
it holds fewer than a quarter of the subject words of each of the sentence's parts; the subject
rule would hold its windows' CONTRADICT back anyway. The answers are the app's
(``verifai eval answers`` path: hybrid retrieval over the 1,000 PQA-L abstracts, generation,
verification; generations cached per prompt in ``<data root>/cache/generations.json``, so a
second run writes nothing again). Each answer's contradiction search is run twice where the
app runs it, gate off first, each with the app's verifier alone (no memo shared between the
two), and the app goes on with the gated result.

Usage: .venv/bin/python benchmarks/conflict_gate.py [--skip 40] [--limit 40]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_gate import Counting, _uptime

from verifai_desktop import contradictions
from verifai_desktop.evaluate.answers import evaluate_pubmedqa
from verifai_desktop.settings import load_settings
from verifai_desktop.verify.nli import get_verifier

PUBMEDQA = Path(__file__).resolve().parents[1].parent / "shared/data/pubmedqa/ori_pqal.json"


@dataclasses.dataclass
class Tally:
    """Both runs' totals."""

    claims: int = 0
    listed: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    with_conflict: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    pairs: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    seconds: list[float] = dataclasses.field(default_factory=lambda: [0.0, 0.0])
    wall: list[float] = dataclasses.field(default_factory=lambda: [0.0, 0.0])
    changes: list[str] = dataclasses.field(default_factory=list)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pubmedqa", type=Path, default=PUBMEDQA)
    parser.add_argument("--skip", type=int, default=40)
    parser.add_argument("--limit", type=int, default=40)
    args = parser.parse_args()
    settings = load_settings()
    verifier = get_verifier(settings.models.verifier)
    verifier.load()
    tally = Tally()
    search = contradictions.find_conflicts

    def both(retriever: Any, _app_verifier: Any, claims: Sequence[str], thresholds: Any,
             **kwargs: Any) -> Any:  # fmt: skip
        kwargs.pop("subject_gate", None)
        runs = []
        for n, gate in enumerate((False, True)):
            timed = Counting(verifier)
            t0 = time.perf_counter()
            found = search(retriever, timed, claims, thresholds, subject_gate=gate, **kwargs)
            tally.wall[n] += time.perf_counter() - t0
            tally.pairs[n] += timed.pairs
            tally.seconds[n] += timed.seconds
            listed = [{int(e.passage.chunk_id) for e in per_claim} for per_claim in found]
            tally.listed[n] += sum(map(len, listed))
            tally.with_conflict[n] += sum(1 for ids in listed if ids)
            runs.append((found, listed))
        tally.claims += len(claims)
        for claim, off, on in zip(claims, runs[0][1], runs[1][1], strict=True):
            if off != on:
                tally.changes.append(f"| {claim[:90]} | {sorted(off - on)} | {sorted(on - off)} |")
        return runs[1][0]

    contradictions.find_conflicts = both  # type: ignore[assignment]
    print(f"load before: {_uptime()}", file=sys.stderr)
    evaluate_pubmedqa(
        args.pubmedqa, limit=args.limit, k=settings.retrieval.k, skip=args.skip, settings=settings
    )
    first, last = args.skip + 1, args.skip + args.limit
    print(f"PubMedQA PQA-L questions {first}..{last} (dev); {tally.claims} answer sentences\n")
    print(
        "| subject gate | verifier pairs | verifier s | search s | sentences with a conflict "
        "| conflicts listed |"
    )
    print("|---|---|---|---|---|---|")
    for n, name in enumerate(("off (before)", "on")):
        print(
            f"| {name} | {tally.pairs[n]:,} | {tally.seconds[n]:.1f} | {tally.wall[n]:.1f} "
            f"| {tally.with_conflict[n]} | {tally.listed[n]} |"
        )
    print(f"\n{len(tally.changes)} sentences' lists changed\n")
    if tally.changes:
        print("| sentence | chunk ids no longer listed | chunk ids now listed |")
        print("|---|---|---|")
        print("\n".join(tally.changes))
    print(f"\nload after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
