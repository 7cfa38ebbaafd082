"""``verifai eval self-check``: how often the colours catch changed sentences of a collection.

A smoke test of the verifier on the user's own documents (:mod:`verifai_desktop.evaluate.
selfcheck`): perturbation pairs from the collection's passages through the app's verification
path, per kind how often a changed sentence is not shown green and how often an unchanged one
is. The result is kept with the collection, where the Library panel shows it.
"""

from __future__ import annotations

import argparse
import logging
import sys

from verifai_desktop.cli.common import add_collection_arg, add_json_arg, positive_int, print_json
from verifai_desktop.domain import Progress
from verifai_desktop.errors import CollectionBusy
from verifai_desktop.evaluate.selfcheck import (
    DEFAULT_PER_KIND,
    METADATA_KEY,
    collection_passages,
    format_self_check,
    run_self_check,
)
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import load_settings
from verifai_desktop.store.collection import Collection

log = logging.getLogger(__name__)


def register_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai eval self-check``."""
    p = sub.add_parser(
        "self-check",
        help="how often the colours catch changed sentences of your own documents",
        description=(
            "Make pairs from the collection's passages: each sentence as written, and with a "
            "figure swapped or changed, two items swapped, a negation inserted or removed, or "
            "the passage restated as an aim. Verify them as an answer sentence is verified and "
            "report, per kind, how often the changed sentence is NOT shown green and how often "
            "the unchanged one is. A smoke test of the colours on these documents, not a "
            "benchmark."
        ),
    )
    add_collection_arg(p)
    p.add_argument(
        "--n",
        type=positive_int,
        default=DEFAULT_PER_KIND,
        metavar="N",
        help="pairs of each kind (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=13, help="sampling seed (default: %(default)s)")
    add_json_arg(p)
    p.set_defaults(func=run)


def _progress(p: Progress) -> None:
    sys.stderr.write(f"\r{p.stage}: {p.done}/{p.total} {p.unit}  ")
    if p.total is not None and p.done >= p.total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    """Handler of ``verifai eval self-check``."""
    settings = load_settings()
    session = AskSession(settings)
    with Collection.open(args.collection, settings=settings) as collection:
        passages = collection_passages(collection, seed=args.seed)
        report = run_self_check(
            session.verifier,
            passages,
            session.thresholds(),
            collection=collection.display_name,
            n_per_kind=args.n,
            seed=args.seed,
            progress=None if args.json else _progress,
        )
        try:
            collection.set_metadata(METADATA_KEY, report.as_dict())
        except CollectionBusy as exc:
            log.warning("self-check not kept with the collection: %s", exc)
    if args.json:
        print_json(report.as_dict())
    else:
        print(format_self_check(report))
    return 0
