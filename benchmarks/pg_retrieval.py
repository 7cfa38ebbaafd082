"""SciFact BEIR retrieval through the PostgreSQL store beside the embedded store.

What is measured: nDCG@10, Recall@10 and Recall@100 (document level, BEIR/trec_eval rules:
a document scores by its best chunk) of the test claims in every search mode (hybrid weighted,
rrf, lexical, semantic), and the wall time of each search call (p50/p95, milliseconds; the
query vectors are computed up front, so this is the store's work: each engine asked for
``--depth`` chunks, the chunk records fetched, the fusion), for

- the embedded store (SQLite + Tantivy BM25 + usearch HNSW), the collection that
  ``verifai eval retrieval`` builds (``open_beir_collection``; reused when ``--home`` holds it);
- the PostgreSQL store (BM25 over an English ``tsvector``'s postings + pgvector HNSW), the same
  corpus ingested through the app's real ingest of pre-parsed documents (``ingest_documents``,
  as the embedded one), the same embedder, settings and chunking.

Both run through the real evaluation path (``evaluate_modes``: ``Retriever.search`` per claim
and mode), modes interleaved between the stores so that both see the same machine load. Then
where they differ: per mode the mean overlap of the two stores' top-10 documents, the claims
whose top-10 is identical, whose top-1 document differs, and whose nDCG@10 is higher in one
store; the documents each lexical engine matches per claim.

Without ``--store`` a throw-away PostgreSQL 16 with pgvector (``pgserver``, the test extra) runs
in a temporary folder, and the collection is written as a plain login role (row-level security
applies, as in a deployment). ``uptime`` is printed before and after, and the 1-minute load
beside the timings (2 cores: compare figures taken under the same load).

Usage::

    python benchmarks/pg_retrieval.py                       # full test split, temp homes
    python benchmarks/pg_retrieval.py --home /tmp/rr36      # reuse an embedded collection
    python benchmarks/pg_retrieval.py --limit-docs 300      # a small trial
    python benchmarks/pg_retrieval.py --store postgresql://me@db/verifai
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BEIR = REPO.parent / "shared" / "data" / "scifact" / "beir"

if __package__ in (None, ""):
    sys.path.insert(0, str(REPO))

from pg_local import (  # noqa: E402
    add_store_argument,
    load,
    postgres_url,
    server_line,
    stderr_progress,
    uptime,
)

from verifai_desktop.evaluate import retrieval as ev  # noqa: E402
from verifai_desktop.evaluate.beir import BeirDataset, iter_documents, load_beir  # noqa: E402
from verifai_desktop.evaluate.metrics import Qrels, per_query_metrics, recall_at_k  # noqa: E402
from verifai_desktop.settings import SEARCH_MODES, SearchMode, Settings  # noqa: E402
from verifai_desktop.store.base import CollectionStore  # noqa: E402
from verifai_desktop.store.outcomes import Outcome  # noqa: E402

STORES = ("embedded", "postgresql")
"""Row labels, in the order the stores are searched for each mode."""


def subset(dataset: BeirDataset, n_docs: int | None) -> BeirDataset:
    """The first ``n_docs`` corpus documents, the qrels inside them and the claims judged there
    (the whole dataset when ``n_docs`` is None)."""
    if n_docs is None:
        return dataset
    corpus = dataset.corpus[:n_docs]
    kept = {d.doc_id for d in corpus}
    qrels = {q: {d: g for d, g in rel.items() if d in kept} for q, rel in dataset.qrels.items()}
    qrels = {q: rel for q, rel in qrels.items() if any(g > 0 for g in rel.values())}
    queries = {q: text for q, text in dataset.queries.items() if q in qrels}
    return dataclasses.replace(dataset, corpus=corpus, queries=queries, qrels=qrels)


def open_postgres(url: str, dataset: BeirDataset, name: str, settings: Settings) -> CollectionStore:
    """Collection ``name`` on the server, the corpus ingested through ``ingest_documents``
    (documents already there with the same text are skipped)."""
    from verifai_desktop.store.pg.store import PgStore
    from verifai_desktop.store.writer import ingest_documents

    store = PgStore.open(url, name, create=True, settings=settings)
    start = time.perf_counter()
    report = ingest_documents(
        store,
        iter_documents(dataset.corpus),
        total=len(dataset.corpus),
        progress=stderr_progress(),
    )
    written = [o for o in report.outcomes if o.status is not Outcome.SKIPPED]
    print(
        f"PostgreSQL ingest: {len(written)} documents, {sum(o.chunk_count for o in written)} "
        f"chunks written in {time.perf_counter() - start:.0f} s (load {load()}), "
        f"{len(report.outcomes) - len(written)} unchanged; {store.num_chunks()} chunks in "
        f"collection {name}"
    )
    return store


def mean_recall_at_10(run: Mapping[str, Sequence[str]], qrels: Qrels) -> float:
    """Recall@10 averaged over the judged claims (as ``evaluate_run`` averages Recall@100)."""
    judged = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
    if not judged:
        return 0.0
    return sum(recall_at_k(run.get(q, ()), qrels[q], 10) for q in judged) / len(judged)


def result_row(label: str, r: ev.ModeResult, qrels: Qrels, load_1m: str) -> str:
    """One table row: metrics, latency percentiles and the load."""
    m = r.metrics
    return (
        f"| {r.mode:<8} | {label:<11} | {m.ndcg_at_10:.4f} | {mean_recall_at_10(r.run, qrels):.4f} "
        f"| {m.recall_at_100:.4f} | {r.latency_percentile_ms(50):7.1f} "
        f"| {r.latency_percentile_ms(95):7.1f} | {load_1m:>5} |"
    )


def difference_row(a: ev.ModeResult, b: ev.ModeResult, qrels: Qrels) -> str:
    """``b - a`` for every figure of :func:`result_row`."""
    dr10 = mean_recall_at_10(b.run, qrels) - mean_recall_at_10(a.run, qrels)
    return (
        f"| {a.mode:<8} | {'pg - emb':<11} | {b.metrics.ndcg_at_10 - a.metrics.ndcg_at_10:+.4f} "
        f"| {dr10:+.4f} | {b.metrics.recall_at_100 - a.metrics.recall_at_100:+.4f} "
        f"| {b.latency_percentile_ms(50) - a.latency_percentile_ms(50):+7.1f} "
        f"| {b.latency_percentile_ms(95) - a.latency_percentile_ms(95):+7.1f} |       |"
    )


def diagnosis_row(a: ev.ModeResult, b: ev.ModeResult, qrels: Qrels) -> str:
    """Where two runs of one mode differ, per claim (``a``: embedded, ``b``: PostgreSQL)."""
    claims = list(a.run)
    overlap = sum(len(set(a.run[q][:10]) & set(b.run.get(q, ())[:10])) for q in claims)
    same10 = sum(tuple(a.run[q][:10]) == tuple(b.run.get(q, ())[:10]) for q in claims)
    top1 = sum(a.run[q][:1] != b.run.get(q, ())[:1] for q in claims)
    qa, qb = per_query_metrics(a.run, qrels), per_query_metrics(b.run, qrels)
    better = sum(qb[q]["nDCG@10"] > qa[q]["nDCG@10"] + 1e-9 for q in qa)
    worse = sum(qb[q]["nDCG@10"] < qa[q]["nDCG@10"] - 1e-9 for q in qa)
    docs_a = sum(len(a.run[q]) for q in claims) / max(len(claims), 1)
    docs_b = sum(len(b.run.get(q, ())) for q in claims) / max(len(claims), 1)
    return (
        f"| {a.mode:<8} | {overlap / max(len(claims), 1):4.1f} / 10 | {same10:4d} | {top1:4d} "
        f"| {better:4d} | {worse:4d} | {docs_a:5.1f} | {docs_b:5.1f} |"
    )


WHY = """\
Why they can differ, mode by mode:
- lexical: both rank by BM25 with the same constants and IDF (k1 1.2, b 0.75), but the
  PostgreSQL store's document length is the chunk's number of distinct lexemes (Tantivy: its
  token count, quantised to one byte). Both stem with Snowball English and drop English stop
  words, but the word splitting and stop lists differ (PostgreSQL's parser keeps hyphenated
  words and numbers with their parts, e.g. `covid-19`, `covid`, `19`; Tantivy's simple
  tokenizer splits at every non-alphanumeric), so the matched sets and the document
  frequencies differ too (the "docs ranked" columns).
- semantic: the same vectors and cosine; only the approximate search differs (usearch HNSW on
  int8 vectors rescored with the float32 cosine, against pgvector HNSW on float32 with
  `hnsw.ef_search` = the depth asked), so small differences are index misses.
- hybrid: the same fusion code and weights, but the lexical scores are divided by the top
  lexical score before the weighted sum, so where the lexical scores differ the fused order
  shifts even where the lexical top documents agree.
- rrf: ranks only, so it differs exactly where the lexical ranking does."""


def main(argv: Sequence[str] | None = None) -> int:
    """Ingest, search, print the tables; returns the exit code."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beir", type=Path, default=DEFAULT_BEIR, help="BEIR folder (SciFact)")
    parser.add_argument("--split", default="test")
    parser.add_argument(
        "--limit-docs",
        type=int,
        default=None,
        metavar="N",
        help="the first N corpus documents and the claims judged in them",
    )
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        help="VERIFAI_HOME of the embedded collection (default: a temp folder)",
    )
    add_store_argument(parser)
    parser.add_argument(
        "--depth", type=int, default=ev.CHUNK_DEPTH, help="chunks asked of each engine per claim"
    )
    parser.add_argument("--modes", default=",".join(SEARCH_MODES))
    args = parser.parse_args(argv)
    modes: list[SearchMode] = [m for m in SEARCH_MODES if m in args.modes.split(",")]

    print(f"uptime before: {uptime()}")
    dataset = subset(load_beir(args.beir, args.split), args.limit_docs)
    suffix = "" if args.limit_docs is None else f"-first{args.limit_docs}"
    with ExitStack() as stack:
        home = args.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="vh")))
        os.environ["VERIFAI_HOME"] = str(home)
        from verifai_desktop.settings import load_settings

        settings = load_settings()
        rs = settings.retrieval
        print(
            f"{dataset.name}/{dataset.split}: {len(dataset.queries)} claims, "
            f"{len(dataset.corpus)} documents; embedder {settings.models.embedder}; depth "
            f"{args.depth} chunks per engine, weights {rs.lexical_weight}/{rs.semantic_weight}, "
            f"rrf_k {rs.rrf_k}; VERIFAI_HOME {home}"
        )
        start = time.perf_counter()
        embedded = stack.enter_context(
            ev.open_beir_collection(
                dataset,
                ev.default_collection_name(dataset) + suffix,
                settings=settings,
                progress=stderr_progress(),
            )
        )
        print(
            f"embedded collection {embedded.name}: {embedded.num_chunks()} chunks, ready in "
            f"{time.perf_counter() - start:.0f} s (load {load()})"
        )
        url = stack.enter_context(postgres_url(args.store))
        print(server_line(url))
        pg_name = re.sub(r"[^a-z0-9_]", "_", ("beir_" + dataset.name + suffix).lower())
        postgres = open_postgres(url, dataset, pg_name, settings)
        stack.callback(postgres.close)

        stores: dict[str, CollectionStore] = {"embedded": embedded, "postgresql": postgres}
        retrievers = {
            label: ev.primed_retriever(s, dataset.queries.values(), rs)
            for label, s in stores.items()
        }
        results: dict[str, dict[str, tuple[ev.ModeResult, str]]] = {s: {} for s in STORES}
        for mode in modes:
            for label in STORES:
                (result,) = ev.evaluate_modes(
                    stores[label],
                    dataset,
                    modes=(mode,),
                    lexical_weight=rs.lexical_weight,
                    semantic_weight=rs.semantic_weight,
                    rrf_k=rs.rrf_k,
                    chunk_depth=args.depth,
                    retriever=retrievers[label],
                )
                results[label][mode] = (result, load())
                print(f"  {label} {mode} done (load {load()})", file=sys.stderr)

    print()
    print("| mode     | store       | nDCG@10 | R@10   | R@100  | p50 ms  | p95 ms  | load  |")
    print("|----------|-------------|---------|--------|--------|---------|---------|-------|")
    for mode in modes:
        (emb, emb_load), (pg, pg_load) = results["embedded"][mode], results["postgresql"][mode]
        print(result_row("embedded", emb, dataset.qrels, emb_load))
        print(result_row("postgresql", pg, dataset.qrels, pg_load))
        print(difference_row(emb, pg, dataset.qrels))
    print()
    print(
        f"Search time: one `Retriever.search` per claim ({args.depth} chunks per engine, their "
        "records fetched, fused), query vectors computed before; load = 1-minute average "
        "after the mode's run."
    )
    print()
    print("Where they differ (per claim; pg better/worse: nDCG@10 higher/lower in PostgreSQL):")
    print()
    print(
        "| mode     | top-10 overlap | same top-10 | top-1 differs | pg better | pg worse "
        "| docs ranked emb | docs ranked pg |"
    )
    print(
        "|----------|----------------|-------------|---------------|-----------|----------|---|---|"
    )
    for mode in modes:
        emb, pg = results["embedded"][mode][0], results["postgresql"][mode][0]
        print(diagnosis_row(emb, pg, dataset.qrels))
    print()
    print(f"{len(dataset.queries)} claims. {WHY}")
    print()
    print(f"uptime after: {uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
