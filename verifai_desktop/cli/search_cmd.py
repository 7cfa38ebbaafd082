"""`verifai search`: hybrid, RRF, lexical or semantic search over a collection.

``--json`` prints each passage as an answer's passages are printed
(:func:`verifai_desktop.codec.passage_to_dict`: one schema for both). Reference-list chunks
are found like any other and marked (``[reference list]``; ``"is_reference": true``); only
answer prompts leave them out. Text recognised by OCR is marked too
(``[recognised text (OCR, ...)]``; ``"ocr": {...}``), and a passage that reads as instructions
to an AI (prompt injection) gets a ``⚠`` line naming the cue (``"instruction_cues"``).
``--rerank`` has the verifier read the top passages against the query
(:mod:`verifai_desktop.rerank`) and shows each one's evidence probability (``"scores":
{"evidence": ...}``).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from verifai_desktop.citations import passage_labeler
from verifai_desktop.cli.common import (
    add_collection_arg,
    add_json_arg,
    add_store_arg,
    open_store,
    positive_int,
    print_json,
)
from verifai_desktop.codec import passage_to_dict
from verifai_desktop.names import printable
from verifai_desktop.pipeline import AskSession
from verifai_desktop.presentation import instructions_note, ocr_note
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import SEARCH_MODES, load_settings

SNIPPET_CHARS = 160
REFERENCE_MARK = "[reference list]"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the search command."""
    p = sub.add_parser("search", help="search a collection (no answer, just passages)")
    p.add_argument(
        "query",
        metavar="QUERY",
        help="words to find; author:NAME, year:2020 (or 2018-2020) and title:WORD (or "
        'title:"two words") match the metadata of documents ingested from a .bib or Zotero '
        "library",
    )
    add_collection_arg(p)
    add_store_arg(p)
    p.add_argument(
        "-k", type=positive_int, default=None, help="passages to show (default: settings, 10)"
    )
    p.add_argument(
        "--mode", choices=SEARCH_MODES, default=None, help="fusion mode (default: settings, hybrid)"
    )
    p.add_argument(
        "--rerank",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="reorder the top passages by the verifier's evidence probability "
        "(default: settings, off)",
    )
    add_json_arg(p)
    p.set_defaults(func=run_search)


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


def run_search(args: argparse.Namespace) -> int:
    """Handler of ``verifai search``."""
    settings = load_settings()
    retrieval = settings.retrieval
    if args.k is not None:
        retrieval = dataclasses.replace(retrieval, k=args.k)
    if args.mode:
        retrieval = dataclasses.replace(retrieval, mode=args.mode)
    if args.rerank is not None:
        retrieval = dataclasses.replace(retrieval, rerank=args.rerank)
    k, mode = retrieval.k, retrieval.mode
    settings = dataclasses.replace(settings, retrieval=retrieval)
    with open_store(args, settings=settings) as collection:
        if retrieval.rerank:
            t0 = time.perf_counter()
            passages = AskSession(settings).search(collection, args.query)
            timings = {"total": (time.perf_counter() - t0) * 1000}
        else:
            retriever = Retriever(collection, retrieval)
            passages = retriever.search(args.query)
            timings = dict(retriever.last_timings_ms)
    if args.json:
        print_json(
            {
                "query": args.query,
                "collection": args.collection,
                "mode": mode,
                "k": k,
                "rerank": retrieval.rerank,
                "timings_ms": {key: round(v, 2) for key, v in timings.items()},
                "passages": [passage_to_dict(p, i) for i, p in enumerate(passages, start=1)],
            }
        )
        return 0
    if not passages:
        print("no passages found")
        return 0
    evidence = f" {'evid.':>5}" if retrieval.rerank else ""
    print(f"{'#':>3} {'fused':>6} {'lex':>5} {'sem':>5}{evidence}  file / location")
    name_of = passage_labeler(passages, settings.citations)
    for i, p in enumerate(passages, start=1):
        where = printable(p.path.name) + (f"  {p.location.label()}" if p.location.label() else "")
        cited = name_of(p)
        if cited != p.source_label():  # a reference-manager entry: "(Cohan et al., 2020, p. 3)"
            where = f"({printable(cited)})  {where}"
        if p.is_reference:
            where += f"  {REFERENCE_MARK}"
        if p.ocr is not None:
            where += f"  [{ocr_note(p)}]"
        scores = f"{i:>3} {p.fused_score:6.3f} {p.lexical_score:5.2f} {p.semantic_score:5.2f}"
        if retrieval.rerank:  # passages past the reranked ones have no evidence figure
            scores += " " * 6 if p.evidence is None else f" {p.evidence:5.2f}"
        print(f"{scores}  {where}")
        if p.instruction_cues:
            print(f"    \u26a0 {printable(instructions_note(p))}: read it with care.")
        print(f"    {_snippet(p.text)}")
    return 0
