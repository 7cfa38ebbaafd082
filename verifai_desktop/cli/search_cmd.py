"""`verifai search`: hybrid, RRF, lexical or semantic search over a collection."""

from __future__ import annotations

import argparse
from typing import Any

from verifai_desktop.cli.common import add_collection_arg, add_json_arg, print_json
from verifai_desktop.store.collection import Collection
from verifai_desktop.domain import Passage
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import SEARCH_MODES, load_settings

SNIPPET_CHARS = 160


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the search command."""
    p = sub.add_parser("search", help="search a collection (no answer, just passages)")
    p.add_argument("query", metavar="QUERY")
    add_collection_arg(p)
    p.add_argument("-k", type=int, default=None, help="passages to show (default: settings, 10)")
    p.add_argument(
        "--mode", choices=SEARCH_MODES, default=None, help="fusion mode (default: settings, hybrid)"
    )
    add_json_arg(p)
    p.set_defaults(func=run_search)


def passage_json(rank: int, p: Passage) -> dict[str, Any]:
    """A passage as a JSON-ready dict."""
    return {
        "rank": rank,
        "chunk_id": p.chunk_id,
        "doc_id": p.doc_id,
        "path": str(p.path),
        "title": p.title,
        "location": p.location.as_dict(),
        "char_start": p.char_start,
        "char_end": p.char_end,
        "fused_score": p.fused_score,
        "lexical_score": p.lexical_score,
        "semantic_score": p.semantic_score,
        "raw_lexical": p.raw_lexical,
        "raw_semantic": p.raw_semantic,
        "text": p.text,
        "sentence_spans": [list(s) for s in p.sentence_spans],
    }


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


def run_search(args: argparse.Namespace) -> int:
    """Handler of ``verifai search``."""
    settings = load_settings()
    r = settings.retrieval
    k = args.k if args.k is not None else r.k
    mode = args.mode or r.mode
    with Collection.open(args.collection) as collection:
        retriever = Retriever(collection)
        passages = retriever.search(
            args.query,
            k=k,
            mode=mode,
            lexical_weight=r.lexical_weight,
            semantic_weight=r.semantic_weight,
            rrf_k=r.rrf_k,
            candidates=r.candidates,
        )
        timings = dict(retriever.last_timings_ms)
    if args.json:
        print_json(
            {
                "query": args.query,
                "collection": args.collection,
                "mode": mode,
                "k": k,
                "timings_ms": {key: round(v, 2) for key, v in timings.items()},
                "passages": [passage_json(i, p) for i, p in enumerate(passages, start=1)],
            }
        )
        return 0
    if not passages:
        print("no passages found")
        return 0
    print(f"{'#':>3} {'fused':>6} {'lex':>5} {'sem':>5}  file / location")
    for i, p in enumerate(passages, start=1):
        where = p.path.name + (f"  {p.location.label()}" if p.location.label() else "")
        print(
            f"{i:>3} {p.fused_score:6.3f} {p.lexical_score:5.2f} {p.semantic_score:5.2f}  {where}"
        )
        print(f"    {_snippet(p.text)}")
    return 0
