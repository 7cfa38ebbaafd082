"""`verifai repair`: rebuild a damaged collection from its source files, and repair its damaged
answer history (``--history``: only that)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from verifai_desktop.cli.common import add_collection_arg, add_json_arg, print_json
from verifai_desktop.cli.ingest_cmd import (
    cancel_on_sigint,
    outcome_json,
    print_report,
    progress_reporter,
)
from verifai_desktop.cli.passwords import add_password_args, password_from_args
from verifai_desktop.names import name_json, names_json, printable
from verifai_desktop.settings import load_settings
from verifai_desktop.store.history_repair import HistoryRepair
from verifai_desktop.store.repair import repair_collection, repair_collection_history


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai repair``."""
    p = sub.add_parser(
        "repair",
        help="rebuild a damaged collection from its source files",
        description="Re-ingest every file the collection's catalog still names (and any PATH "
        "given) into a fresh collection built beside it, then swap it in; the damaged one is "
        "kept until the new one is complete. A damaged answer history is repaired first: every "
        "answer that can still be read is kept, the damaged file is set aside beside it.",
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="only repair the answer history (exit 0 when it was repaired or is not damaged)",
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="more files or folders to ingest (needed when the catalog names none)",
    )
    add_collection_arg(p)
    add_json_arg(p)
    add_password_args(p)
    p.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="parse time limit per file (s)"
    )
    p.set_defaults(func=run_repair)


def run_repair(args: argparse.Namespace) -> int:
    """Handler of ``verifai repair``: the history first (when damaged), then the rebuild."""
    history = repair_collection_history(args.collection)
    if args.history:
        if args.json:
            print_json({"collection": args.collection, "history": history_json(history)})
        else:
            print_history_repair(args.collection, history)
        return 0
    if not args.json:
        print_history_repair(args.collection, history, quiet_when_healthy=True)
    settings = load_settings()
    password = password_from_args(args)
    with cancel_on_sigint() as cancel, progress_reporter(False) as progress:
        result = repair_collection(
            args.collection,
            paths=args.paths,
            settings=settings,
            default_password=password,
            progress=progress,
            cancel=cancel,
            timeout_s=args.timeout,
        )
    if args.json:
        print_json(
            {
                "collection": result.name,
                "catalogued": result.catalogued,
                "catalog_complete": result.catalog_complete,
                **names_json("missing", result.missing),
                "not_files": result.not_files,
                "files": [outcome_json(o) for o in result.ingest.outcomes],
                "history": history_json(history),
            }
        )
        return 0
    print_report(result.ingest)
    for source in result.missing:
        print(f"missing {printable(source)}  - no longer on disk, not in the rebuilt collection")
    print(
        f"collection {result.name!r} rebuilt: {result.catalogued} files named by its catalog, "
        f"{len(result.missing)} missing"
    )
    if not result.catalog_complete:
        print(
            "warning: part of the damaged catalog could not be read; files it named may be "
            "missing: add them again with `verifai ingest`",
            file=sys.stderr,
        )
    if result.not_files:
        print(
            f"warning: {result.not_files} pre-parsed documents (BEIR corpus) are not files and "
            "were not rebuilt",
            file=sys.stderr,
        )
    return 0


def history_json(repair: HistoryRepair | None) -> dict[str, Any]:
    """``--json`` of a history repair: ``{"damaged": false}``, or what was kept and lost (a
    ``*_lost`` of null: unknown) and where the damaged file was set aside."""
    if repair is None:
        return {"damaged": False}
    return {
        "damaged": True,
        "reason": repair.reason,
        "answers_kept": repair.answers_kept,
        "answers_lost": repair.answers_lost,
        "feedback_kept": repair.feedback_kept,
        "feedback_lost": repair.feedback_lost,
        **name_json("damaged_copy", repair.damaged_copy),
    }


def _count(n: int | None, what: str) -> str:
    if n is None:
        return f"an unknown number of {what}s"
    return f"{n} {what}{'' if n == 1 else 's'}"


def print_history_repair(
    collection: str, repair: HistoryRepair | None, *, quiet_when_healthy: bool = False
) -> None:
    """Say what repairing the history did, or that it was not damaged."""
    if repair is None:
        if not quiet_when_healthy:
            print(f"the answer history of {collection!r} is not damaged; nothing to repair")
        return
    print(
        f"answer history of {collection!r} repaired: kept {_count(repair.answers_kept, 'answer')} "
        f"and {_count(repair.feedback_kept, 'judgement')}; lost "
        f"{_count(repair.answers_lost, 'answer')} and {_count(repair.feedback_lost, 'judgement')}"
    )
    print(f"  it was damaged: {printable(repair.reason)}")
    kind = "folder" if repair.damaged_copy.is_dir() else "file"
    print(f"  the damaged {kind} is kept as {printable(str(repair.damaged_copy))}")
