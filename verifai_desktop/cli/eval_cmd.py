"""`verifai eval retrieval`: nDCG@10, Recall@100, MAP@10, P@10 on a BEIR-format folder."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from verifai_desktop.cli.common import add_json_arg, positive_int, print_json
from verifai_desktop.domain import Progress
from verifai_desktop.errors import SettingsError
from verifai_desktop.evaluate.beir import load_beir
from verifai_desktop.evaluate.retrieval import (
    CHUNK_DEPTH,
    collection_is_current,
    evaluate_modes,
    open_beir_collection,
)
from verifai_desktop.settings import SEARCH_MODES, SearchMode, load_settings


def register_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai eval retrieval``."""
    p = sub.add_parser(
        "retrieval",
        help="score retrieval on a BEIR folder (nDCG@10, Recall@100, MAP@10, P@10)",
        description=(
            "Ingest a BEIR corpus once into its own collection (reused on later runs), search "
            "every judged query of a split and score the document ranking (a document scores "
            "by its best chunk), per search mode."
        ),
    )
    p.add_argument(
        "--beir",
        required=True,
        type=Path,
        metavar="DIR",
        help="BEIR folder with corpus.jsonl, queries.jsonl and qrels/<split>.tsv",
    )
    p.add_argument("--split", default="test", help="qrels split to score (default: %(default)s)")
    p.add_argument(
        "--mode",
        default="all",
        choices=(*SEARCH_MODES, "all"),
        help="search mode, or all of them (default: %(default)s)",
    )
    p.add_argument(
        "--lexical-weight",
        type=float,
        default=None,
        metavar="W",
        help="hybrid lexical weight 0..1, semantic weight = 1 - W (default: the settings' weights)",
    )
    p.add_argument(
        "--rrf-k", type=positive_int, default=None, help="RRF constant (default: settings)"
    )
    p.add_argument(
        "--collection",
        "-c",
        default=None,
        metavar="NAME",
        help="collection holding (or to receive) the corpus (default: beir-<dataset>)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=None,
        metavar="CHUNKS",
        help="chunks fetched per query and engine before ranking 100 documents (default: 300)",
    )
    p.add_argument(
        "--no-title",
        action="store_true",
        help="index the text without the title (only when the collection is built)",
    )
    p.add_argument(
        "--run-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write the ranked document ids per mode and query as JSON",
    )
    add_json_arg(p)
    p.set_defaults(func=run_retrieval)


def _progress_printer(enabled: bool) -> Callable[[Progress], None] | None:
    """A progress callback writing one updating line to stderr (``None`` when disabled)."""
    if not enabled:
        return None

    def show(p: Progress) -> None:
        total = f"/{p.total}" if p.total else ""
        sys.stderr.write(f"\r{p.stage}: {p.done}{total} {p.unit}   ")
        if p.total and p.done >= p.total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def run_retrieval(args: argparse.Namespace) -> int:
    """Handler of ``verifai eval retrieval``."""
    settings = load_settings()
    lexical_weight = settings.retrieval.lexical_weight
    semantic_weight = settings.retrieval.semantic_weight
    if args.lexical_weight is not None:
        if not 0.0 <= args.lexical_weight <= 1.0:
            raise SettingsError("--lexical-weight", "must be between 0 and 1")
        lexical_weight = args.lexical_weight
        semantic_weight = 1.0 - args.lexical_weight
    rrf_k = args.rrf_k if args.rrf_k is not None else settings.retrieval.rrf_k
    depth = args.depth if args.depth is not None else CHUNK_DEPTH
    if depth < 1:
        raise SettingsError("--depth", "must be at least 1")
    modes: tuple[SearchMode, ...] = SEARCH_MODES if args.mode == "all" else (args.mode,)

    dataset = load_beir(args.beir, args.split)
    show_progress = sys.stderr.isatty()
    progress = _progress_printer(show_progress)
    reused = collection_is_current(dataset, args.collection, include_title=not args.no_title)
    collection = open_beir_collection(
        dataset,
        args.collection,
        include_title=not args.no_title,
        settings=settings,
        progress=progress,
    )
    with collection:
        results = evaluate_modes(
            collection,
            dataset,
            modes=modes,
            lexical_weight=lexical_weight,
            semantic_weight=semantic_weight,
            rrf_k=rrf_k,
            chunk_depth=depth,
            progress=progress,
        )
        collection_name = collection.name

    if args.run_file is not None:
        args.run_file.parent.mkdir(parents=True, exist_ok=True)
        args.run_file.write_text(
            json.dumps({r.mode: {q: list(d) for q, d in r.run.items()} for r in results}),
            encoding="utf-8",
        )
    if args.json:
        print_json(
            {
                "dataset": dataset.name,
                "beir": str(dataset.root),
                "split": dataset.split,
                "collection": collection_name,
                "collection_reused": reused,
                "documents": len(dataset.corpus),
                "queries": len(dataset.queries),
                "chunk_depth": depth,
                "rrf_k": rrf_k,
                "modes": [r.as_dict() for r in results],
            }
        )
        return 0
    print(
        f"{dataset.name} ({dataset.split}): {len(dataset.queries)} queries, "
        f"{len(dataset.corpus)} documents, collection {collection_name}"
    )
    header = (
        f"{'mode':<10} {'nDCG@10':>8} {'Recall@100':>10} {'MAP@10':>8} {'P@10':>7} {'p50 ms*':>8}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        m = r.metrics
        label: str = r.mode
        if r.lexical_weight is not None:
            label = f"{r.mode} {r.lexical_weight:.1f}"
        print(
            f"{label:<10} {m.ndcg_at_10:>8.4f} {m.recall_at_100:>10.4f} {m.map_at_10:>8.4f} "
            f"{m.precision_at_10:>7.4f} {r.latency_percentile_ms(50):>8.1f}"
        )
    print("* search time per query with query vectors computed up front;")
    print("  benchmarks/search.py measures true per-query latency.")
    return 0
