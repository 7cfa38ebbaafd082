"""Hybrid weight sweep on SciFact (VerifAI's Table I layout), tuned on TRAIN, checked on TEST.

1. Train split (809 claims): fetch each engine's top chunks once per claim, replay VerifAI's
   weighted fusion for lexical weight 0.0 .. 1.0 (step 0.1) plus RRF, score each at document
   level (nDCG@10, Recall@100, MAP@10, P@10) and pick the weight with the best nDCG@10.
2. Test split (300 claims): the same replay at every weight, shown for reference only (never
   used for choosing), and the real ``Retriever.search`` hybrid path at the chosen weight,
   with the share of claims whose top 10 documents agree between the replay and the real path.

Usage::

    VERIFAI_HOME=/tmp/evalhome .venv/bin/python benchmarks/retrieval_sweep.py [--out FILE.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BEIR = REPO.parent / "shared" / "data" / "scifact" / "beir"

if __package__ in (None, ""):
    sys.path.insert(0, str(REPO))

from verifai_desktop.evaluate import retrieval as ev  # noqa: E402
from verifai_desktop.evaluate.beir import load_beir  # noqa: E402
from verifai_desktop.evaluate.metrics import RetrievalMetrics, evaluate_run  # noqa: E402
from verifai_desktop.settings import load_settings  # noqa: E402

HEADER = "| {:<16} | nDCG@10 | Recall@100 | MAP@10 |  P@10  |".format("row")
RULE = "|" + "-" * 18 + "|---------|------------|--------|--------|"


def _line(label: str, m: RetrievalMetrics) -> str:
    return (
        f"| {label:<16} | {m.ndcg_at_10:.4f}  |   {m.recall_at_100:.4f}   | {m.map_at_10:.4f} "
        f"| {m.precision_at_10:.4f} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep and print markdown tables; returns the exit code."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR)
    parser.add_argument("--collection", default=None, help="default: beir-<dataset>")
    parser.add_argument("--tune-split", default="train")
    parser.add_argument("--eval-split", default="test")
    parser.add_argument("--depth", type=int, default=300, help="chunks per engine and query")
    parser.add_argument("--out", type=Path, default=None, help="also append the tables here")
    args = parser.parse_args(argv)

    tune = load_beir(args.beir, args.tune_split)
    test = load_beir(args.beir, args.eval_split)
    lines: list[str] = []

    def out(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    settings = load_settings()
    collection = ev.open_beir_collection(tune, args.collection, settings=settings)
    with collection:
        retriever = ev.primed_retriever(
            collection, [*tune.queries.values(), *test.queries.values()], settings.retrieval
        )
        start = time.perf_counter()
        tune_cands = ev.collect_candidates(retriever, tune.queries, chunk_depth=args.depth)
        test_cands = ev.collect_candidates(retriever, test.queries, chunk_depth=args.depth)
        fetch_s = time.perf_counter() - start
        start = time.perf_counter()
        tune_rows = ev.weight_sweep(tune_cands, tune.qrels)
        test_rows = ev.weight_sweep(test_cands, test.qrels)
        sweep_s = time.perf_counter() - start
        chosen = ev.best_weight(tune_rows)

        out(f"### Weight sweep on {tune.name} {tune.split} ({len(tune.queries)} claims)")
        out()
        out("Hybrid score = w * BM25/top + (1 - w) * cosine/top per chunk; document = best chunk;")
        out(f"{args.depth} chunks per engine and claim. Candidates fetched in {fetch_s:.0f} s, ")
        out(f"22 fusions scored in {sweep_s:.1f} s.")
        out()
        out(HEADER)
        out(RULE)
        for row in tune_rows:
            mark = " *" if row.lexical_weight == chosen else ""
            out(_line(f"w = {row.lexical_weight:.1f}{mark}", row.metrics))
        out(_line("RRF (k = 60)", evaluate_run(ev.fuse_rrf(tune_cands), tune.qrels)))
        out()
        out(f"Chosen on {tune.split}: lexical weight {chosen:.1f}, semantic {1 - chosen:.1f} (*).")
        out()
        out(f"### Same sweep on {test.name} {test.split} (reference only, not used to choose)")
        out()
        out(HEADER)
        out(RULE)
        for row in test_rows:
            mark = " *" if row.lexical_weight == chosen else ""
            out(_line(f"w = {row.lexical_weight:.1f}{mark}", row.metrics))
        out(_line("RRF (k = 60)", evaluate_run(ev.fuse_rrf(test_cands), test.qrels)))
        out()

        real = ev.evaluate_modes(
            collection,
            test,
            modes=("hybrid",),
            lexical_weight=chosen,
            semantic_weight=1.0 - chosen,
            chunk_depth=args.depth,
            retriever=retriever,
        )[0]
        replay = ev.fuse_weighted(test_cands, chosen)
        agree = ev.check_fusion_agrees(real.run, replay)
        out(f"Real hybrid path at w = {chosen:.1f} on {test.split}:")
        out()
        out(HEADER)
        out(RULE)
        out(_line("real search", real.metrics))
        out(_line("numpy replay", evaluate_run(replay, test.qrels)))
        out()
        out(f"Top-10 documents identical for {agree:.1%} of claims.")

    if args.out is not None:
        with args.out.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
