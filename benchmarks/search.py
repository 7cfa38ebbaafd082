"""Search latency per mode over the SciFact test claims: p50 / p95 / mean milliseconds.

Loads (or builds once) the ``beir-scifact`` collection, warms the retriever up, then times
``Retriever.search`` (the call the app makes: top 10 passages, the settings' candidate depth)
for every claim of the split in every mode with ``time.perf_counter``. ``--profile`` also times
the query embedding alone, which is usually most of a hybrid search on a CPU.

Usage::

    VERIFAI_HOME=/tmp/evalhome .venv/bin/python benchmarks/search.py [--beir DIR] [--split test]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from verifai_desktop.evaluate.beir import load_beir
from verifai_desktop.evaluate.retrieval import open_beir_collection
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import load_settings

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BEIR = REPO.parent / "shared" / "data" / "scifact" / "beir"


def _row(label: str, samples_ms: list[float]) -> str:
    arr = np.asarray(samples_ms)
    return (
        f"| {label:<26} | {np.percentile(arr, 50):7.1f} | {np.percentile(arr, 95):7.1f} "
        f"| {statistics.fmean(samples_ms):7.1f} | {len(samples_ms):5d} |"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the latency table; returns the exit code."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR, help="BEIR folder (SciFact)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--collection", default=None, help="default: beir-<dataset>")
    parser.add_argument("--modes", default="hybrid,rrf,lexical,semantic")
    parser.add_argument("-k", type=int, default=None, help="passages returned (default: settings)")
    parser.add_argument("--lexical-weight", type=float, default=None)
    parser.add_argument("--warmup", type=int, default=20, help="untimed queries first")
    parser.add_argument("--profile", action="store_true", help="also time query embedding alone")
    args = parser.parse_args(argv)

    settings = load_settings()
    rs = settings.retrieval
    k = args.k if args.k is not None else rs.k
    lexical_weight = args.lexical_weight if args.lexical_weight is not None else rs.lexical_weight
    semantic_weight = rs.semantic_weight if args.lexical_weight is None else 1.0 - lexical_weight
    dataset = load_beir(args.beir, args.split)
    queries = list(dataset.queries.values())
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]

    timed = dataclasses.replace(
        rs, k=k, lexical_weight=lexical_weight, semantic_weight=semantic_weight
    )
    collection = open_beir_collection(dataset, args.collection, settings=settings)
    with collection:
        retriever = Retriever(collection, timed)
        by_mode = {m: retriever.with_settings(dataclasses.replace(timed, mode=m)) for m in modes}
        for q in queries[: args.warmup]:
            for mode in modes:
                by_mode[mode].search(q)
        print(
            f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"query embedding on 1 ONNX Runtime thread, python {platform.python_version()}"
        )
        print(
            f"{dataset.name}/{dataset.split}: {len(queries)} claims, {len(dataset.corpus)} "
            f"documents; k={k}, candidates={rs.candidates}, weights "
            f"{lexical_weight:.2f}/{semantic_weight:.2f}, rrf_k={rs.rrf_k}, warm-up {args.warmup}"
        )
        print()
        print(f"| {'mode':<26} | {'p50 ms':>7} | {'p95 ms':>7} | {'mean ms':>7} | {'n':>5} |")
        print(f"|{'-' * 28}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 7}|")
        steps: dict[str, list[float]] = {}
        for mode in modes:
            samples: list[float] = []
            for q in queries:
                start = time.perf_counter()
                by_mode[mode].search(q)
                samples.append((time.perf_counter() - start) * 1000.0)
                if mode == "hybrid":
                    for step, ms in by_mode[mode].last_timings_ms.items():
                        steps.setdefault(step, []).append(ms)
            print(_row(mode, samples))
        if args.profile:
            # Steps of the hybrid searches above, as Retriever.last_timings_ms reports them.
            for step in ("lexical", "embed", "semantic", "fuse"):
                if steps.get(step):
                    print(_row(f"  hybrid step {step}", steps[step]))
            embedder = retriever.embedder
            samples = []
            for q in queries:
                start = time.perf_counter()
                embedder.embed([q])
                samples.append((time.perf_counter() - start) * 1000.0)
            print(_row("query embedding alone", samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
