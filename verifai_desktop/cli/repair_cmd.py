"""`verifai repair`: rebuild a damaged collection from its source files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from verifai_desktop.cli.common import add_collection_arg, add_json_arg, print_json
from verifai_desktop.cli.ingest_cmd import (
    cancel_on_sigint,
    outcome_json,
    print_report,
    progress_reporter,
)
from verifai_desktop.cli.passwords import add_password_args, password_from_args
from verifai_desktop.names import printable
from verifai_desktop.settings import load_settings
from verifai_desktop.store.repair import repair_collection


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai repair``."""
    p = sub.add_parser(
        "repair",
        help="rebuild a damaged collection from its source files",
        description="Re-ingest every file the collection's catalog still names (and any PATH "
        "given) into a fresh collection built beside it, then swap it in; the damaged one is "
        "kept until the new one is complete.",
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
    """Handler of ``verifai repair``."""
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
                "missing": list(result.missing),
                "not_files": result.not_files,
                "files": [outcome_json(o) for o in result.ingest.outcomes],
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
