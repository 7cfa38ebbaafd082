"""Evidence-aware reranking (issue 28): N, fusion and weight chosen on SciFact BEIR train,
test reported, with the added latency and the PubMedQA own-abstract rate.

1. Every query of both splits is searched once through the real hybrid path (default settings,
   300 chunks); the verifier's evidence probability (:func:`verifai_desktop.rerank.
   evidence_probabilities`, the app's path and thresholds) of each query's top ``--n-max``
   chunks (train; test: the chosen N only) is computed once and kept in ``--cache`` (a pickle;
   delete it when the verifier changes).
2. Every (N, fusion, weight) of the grid is replayed on the train queries (``--tune-queries``
   of them, a seeded sample) at document level (a document ranked by its best chunk); the best
   train nDCG@10 is chosen (ties: smaller N, then smaller weight). The test split is scored
   for the retrieval order and the chosen row only.
3. Latency: the rerank step alone at the chosen N, median of ``--latency-queries`` test
   queries with nothing memoised (seconds on this CPU; the load is printed).
4. PubMedQA: the first ``--pubmedqa-limit`` questions' own abstract in the top 6 and 10
   passages of the whole PubMedQA collection, without and with the chosen reranking.

Usage::

    VERIFAI_HOME=/tmp/evalhome .venv/bin/python benchmarks/rerank.py [--cache FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"

if __package__ in (None, ""):
    sys.path.insert(0, str(REPO))

from verifai_desktop.domain import Passage  # noqa: E402
from verifai_desktop.evaluate import retrieval as ev  # noqa: E402
from verifai_desktop.evaluate.beir import BeirDataset, load_beir  # noqa: E402
from verifai_desktop.evaluate.metrics import evaluate_run  # noqa: E402
from verifai_desktop.evaluate.pubmedqa import (  # noqa: E402
    build_collection,
    load_pubmedqa,
    passage_pmid,
)
from verifai_desktop.pipeline import AskSession  # noqa: E402
from verifai_desktop.rerank import evidence_probabilities, fuse  # noqa: E402
from verifai_desktop.settings import RERANK_FUSIONS, load_settings  # noqa: E402
from verifai_desktop.store.collection import Collection  # noqa: E402

CHUNKS = 300
N_GRID = (5, 10, 20)
"""Candidates reranked (N) tried on train; those above ``--n-max`` are left out."""
WEIGHTS = tuple(round(0.1 * i, 1) for i in range(1, 11))

Ranked = tuple[tuple[int, str], ...]  # (chunk id, corpus doc id), best first


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _docs(order: Sequence[tuple[int, str]], depth: int = 100) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for _, doc in order:
        if doc and doc not in seen:
            seen[doc] = None
            if len(seen) == depth:
                break
    return tuple(seen)


def _reordered(ranked: Ranked, evidence: np.ndarray, n: int, w: float, fusion: str) -> Ranked:
    head = ranked[:n]
    order = fuse(evidence[: len(head)], w, fusion)  # type: ignore[arg-type]
    return (*(head[int(i)] for i in order), *ranked[n:])


def _score(
    runs: Mapping[str, Ranked], qrels: Mapping[str, Mapping[str, int]]
) -> tuple[float, float, float]:
    """nDCG@10, Recall@10, Recall@100 of document rankings."""
    docs = {q: _docs(r) for q, r in runs.items()}
    m = evaluate_run(docs, {q: dict(v) for q, v in qrels.items() if q in docs})
    recall10 = []
    for q, ranking in docs.items():
        relevant = {d for d, g in qrels.get(q, {}).items() if g > 0}
        if relevant:
            recall10.append(len(relevant & set(ranking[:10])) / len(relevant))
    return m.ndcg_at_10, float(np.mean(recall10)), m.recall_at_100


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print markdown tables; returns the exit code."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--beir", type=Path, default=DATA / "scifact" / "beir")
    ap.add_argument("--pubmedqa", type=Path, default=DATA / "pubmedqa" / "ori_pqal.json")
    ap.add_argument("--tune-queries", type=int, default=100, help="train queries (seeded)")
    ap.add_argument("--n-max", type=int, default=max(N_GRID))
    ap.add_argument("--latency-queries", type=int, default=20)
    ap.add_argument("--pubmedqa-limit", type=int, default=100)
    ap.add_argument("--cache", type=Path, default=Path("rerank_evidence.pkl"))
    args = ap.parse_args(argv)

    settings = load_settings()
    session = AskSession(settings)
    verifier, thresholds = session.verifier, session.thresholds()
    tune = load_beir(args.beir, "train")
    test = load_beir(args.beir, "test")
    rng = random.Random(28)
    tune_ids = sorted(rng.sample(sorted(q for q in tune.qrels if q in tune.queries),
                                 args.tune_queries))  # fmt: skip
    cache: dict[tuple[str, str, int], float] = {}
    if args.cache.is_file():
        cache = pickle.loads(args.cache.read_bytes())
    print(f"verifier {settings.models.verifier}; thresholds S {thresholds.support_threshold} "
          f"C {thresholds.contradict_threshold}; {_load()}", flush=True)  # fmt: skip

    collection = ev.open_beir_collection(tune, settings=settings)
    with collection:
        queries = {**{q: tune.queries[q] for q in tune_ids}, **test.queries}
        retriever = ev.primed_retriever(collection, queries.values(), settings.retrieval)
        deep = retriever.with_settings(ev.at_depth(settings.retrieval, "hybrid", CHUNKS))

        def rank(split: BeirDataset, ids: Sequence[str], depth: int) -> dict[str, Ranked]:
            ranked: dict[str, Ranked] = {}
            texts: dict[str, tuple[Passage, ...]] = {}
            t0, computed = time.perf_counter(), 0
            for n, q in enumerate(ids):
                found = deep.search(split.queries[q])
                ranked[q] = tuple((int(p.chunk_id), ev.passage_doc_id(p) or "") for p in found)
                texts[q] = found[:depth]
                todo = [p for p in texts[q] if (split.split, q, int(p.chunk_id)) not in cache]
                if todo:
                    probs = evidence_probabilities(verifier, split.queries[q], todo, thresholds)
                    for p, e in zip(todo, probs, strict=True):
                        cache[(split.split, q, int(p.chunk_id))] = float(e)
                    computed += 1
                if computed and computed % 25 == 0:
                    args.cache.write_bytes(pickle.dumps(cache))
                    print(f"  {split.split}: {n + 1}/{len(ids)} queries, "
                          f"{time.perf_counter() - t0:.0f} s, {_load()}", flush=True)  # fmt: skip
            args.cache.write_bytes(pickle.dumps(cache))
            return ranked

        def evidence(split: str, ranked: Mapping[str, Ranked], depth: int) -> dict[str, np.ndarray]:
            return {
                q: np.array([cache[(split, q, c)] for c, _ in r[:depth]], dtype=np.float64)
                for q, r in ranked.items()
            }

        tune_ranked = rank(tune, tune_ids, args.n_max)
        tune_ev = evidence("train", tune_ranked, args.n_max)
        rows = []
        grid = [n for n in N_GRID if n <= args.n_max]
        for n in grid:
            for fusion in RERANK_FUSIONS:
                for w in WEIGHTS:
                    runs = {q: _reordered(r, tune_ev[q], n, w, fusion)
                            for q, r in tune_ranked.items()}  # fmt: skip
                    rows.append((_score(runs, tune.qrels), n, fusion, w))
        base_tune = _score(tune_ranked, tune.qrels)
        best = max(rows, key=lambda r: (round(r[0][0], 6), -r[1], -r[3]))
        (_, n_best, f_best, w_best) = best

        print(f"\n### SciFact BEIR train, {len(tune_ids)} claims (choosing)\n")
        print("| N | fusion | weight | nDCG@10 | Recall@10 | Recall@100 |")
        print("|---|---|---|---|---|---|")
        print(f"| - | retrieval order | - | {base_tune[0]:.4f} | {base_tune[1]:.4f} | "
              f"{base_tune[2]:.4f} |")  # fmt: skip
        for metrics, n, fusion, w in sorted(rows, key=lambda r: -r[0][0])[:10]:
            mark = " (chosen)" if (n, fusion, w) == (n_best, f_best, w_best) else ""
            print(f"| {n} | {fusion} | {w:.1f}{mark} | {metrics[0]:.4f} | {metrics[1]:.4f} | "
                  f"{metrics[2]:.4f} |")  # fmt: skip
        for n in grid:  # the best row per N, to see how N matters
            m, _, fusion, w = max((r for r in rows if r[1] == n), key=lambda r: r[0][0])
            print(f"| {n} (best of N) | {fusion} | {w:.1f} | {m[0]:.4f} | {m[1]:.4f} | "
                  f"{m[2]:.4f} |")  # fmt: skip

        # the test split is read by the verifier at the chosen N only
        test_ids = sorted(q for q in test.qrels if q in test.queries)
        test_ranked = rank(test, test_ids, n_best)
        test_ev = evidence("test", test_ranked, n_best)
        base_test = _score(test_ranked, test.qrels)
        chosen_test = _score(
            {q: _reordered(r, test_ev[q], n_best, w_best, f_best) for q, r in test_ranked.items()},
            test.qrels,
        )
        print(f"\n### SciFact BEIR test, {len(test_ids)} claims (reported, not used to choose)\n")
        print("| ranking | nDCG@10 | Recall@10 | Recall@100 |")
        print("|---|---|---|---|")
        print(f"| hybrid (default) | {base_test[0]:.4f} | {base_test[1]:.4f} | "
              f"{base_test[2]:.4f} |")  # fmt: skip
        print(f"| reranked: N {n_best}, {f_best}, weight {w_best:.1f} | {chosen_test[0]:.4f} | "
              f"{chosen_test[1]:.4f} | {chosen_test[2]:.4f} |")  # fmt: skip

        # latency of the rerank step alone, nothing memoised
        seconds, search_s = [], []
        for q in test_ids[: args.latency_queries]:
            t0 = time.perf_counter()
            found = retriever.search(test.queries[q], k=n_best)
            search_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            evidence_probabilities(verifier, test.queries[q], found[:n_best], thresholds)
            seconds.append(time.perf_counter() - t0)
        print(f"\nRerank step at N = {n_best}: median {statistics.median(seconds):.2f} s per "
              f"query (hybrid search {statistics.median(search_s) * 1000:.0f} ms), "
              f"{len(seconds)} test queries, {_load()}")  # fmt: skip

    # PubMedQA: the question's own abstract among the first 6 / 10 passages
    items = load_pubmedqa(args.pubmedqa)
    build_collection("bench-pubmedqa-rerank", items, settings=settings)
    print(f"\n### PubMedQA, first {args.pubmedqa_limit} questions, 1,000 abstracts\n")
    print("| ranking | own abstract in top 6 | in top 10 |")
    print("|---|---|---|")
    with Collection.open("bench-pubmedqa-rerank", settings=settings) as pqa:
        for label, on in (("hybrid (default)", False), (f"reranked (N {n_best})", True)):
            chosen = dataclasses.replace(
                settings.retrieval,
                rerank=on,
                rerank_candidates=n_best,
                rerank_fusion=f_best,
                rerank_weight=w_best,
            )
            s = AskSession(dataclasses.replace(settings, retrieval=chosen), verifier=verifier)
            hits6 = hits10 = 0
            for it in items[: args.pubmedqa_limit]:
                found = s.search(pqa, it.question, k=10)
                pmids = [passage_pmid(p) for p in found]
                hits6 += it.pmid in pmids[:6]
                hits10 += it.pmid in pmids
            n = args.pubmedqa_limit
            print(f"| {label} | {hits6 / n:.2f} | {hits10 / n:.2f} |")
    print(f"\n{_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
