"""`verifai check`: what the whole collection says about a claim, kept in its history."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from verifai_desktop.check_view import check_passages
from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.citations import passage_labeler
from verifai_desktop.cli.common import (
    add_collection_arg,
    add_json_arg,
    add_store_arg,
    error_hint,
    open_store,
    positive_int,
    print_json,
)
from verifai_desktop.codec import check_to_dict
from verifai_desktop.domain import CheckLabel, CheckResult, Evidence, Passage, Progress
from verifai_desktop.evaluate.check import evaluate_check, format_report
from verifai_desktop.keep import keep_in_history
from verifai_desktop.names import printable
from verifai_desktop.pipeline import AskSession
from verifai_desktop.presentation import CHECK_VERDICT_TEXT, document_verdict_note, flag_lines
from verifai_desktop.settings import load_settings

DOC_STYLE: dict[CheckLabel, str] = {
    "SUPPORT": "green",
    "CONTRADICT": "bold red",
    "NO_EVIDENCE": "bright_black",
    "UNSURE": "steel_blue",  # neutral, as an unsure sentence of `verifai ask`
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai check``."""
    p = sub.add_parser(
        "check",
        help="search the whole collection for passages that support or contradict a claim",
        description=(
            "Search the whole collection (BM25, a negation-aware BM25 variant and dense "
            "neighbours) for the passages most likely to decide CLAIM, verify each of their "
            "sentence windows with the NLI verifier, and report supporting and contradicting "
            "passages and a verdict per document. The check is kept in the collection's "
            "history (setting history.keep): `verifai history` lists it, `verifai audit "
            "export --id N` writes its audit record."
        ),
    )
    p.add_argument("claim", help="the statement to check")
    add_collection_arg(p)
    add_store_arg(p)
    p.add_argument(
        "--budget",
        type=positive_int,
        default=None,
        help="candidate passages verified (default: settings verify.conflict_budget x 3)",
    )
    add_json_arg(p)
    p.set_defaults(func=run_check)


def register_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai eval check``."""
    p = sub.add_parser(
        "check",
        help="SciFact abstract-level label-only P/R/F1 of the claim check (open setting)",
        description=(
            "Check every claim of a SciFact split against the whole corpus (indexed once into "
            "its own collection) and score abstract-level label-only precision, recall and F1 "
            "(Wadden et al. 2020). The least evidence strength is chosen on --tune-split."
        ),
    )
    p.add_argument(
        "--scifact",
        required=True,
        type=Path,
        metavar="DIR",
        help="SciFact's original folder (corpus.jsonl, claims_<split>.jsonl)",
    )
    p.add_argument("--split", default="dev", help="split reported (default: %(default)s)")
    p.add_argument(
        "--tune-split",
        default="train",
        help="split the threshold is chosen on, or 'none' (default: %(default)s)",
    )
    p.add_argument("--limit", type=positive_int, default=None, help="claims reported (all)")
    p.add_argument(
        "--tune-limit",
        type=positive_int,
        default=200,
        help="claims of the tuning split (default: %(default)s)",
    )
    p.add_argument(
        "--budget",
        type=positive_int,
        default=10,
        help="candidate passages verified per claim (default: %(default)s)",
    )
    add_json_arg(p)
    p.set_defaults(func=run_eval_check)


def run_eval_check(args: argparse.Namespace) -> int:
    """Run the SciFact claim-check evaluation; Markdown tables or ``--json``."""
    settings = load_settings()
    report = evaluate_check(
        args.scifact,
        split=args.split,
        tune_split=None if args.tune_split == "none" else args.tune_split,
        limit=args.limit,
        tune_limit=args.tune_limit,
        budget=args.budget,
        settings=settings,
        progress=None if args.json else _progress,
    )
    if args.json:
        print_json(dataclasses.asdict(report))
    else:
        print(format_report(report))
    return 0


def _progress(p: Progress) -> None:
    if p.total and (p.done == p.total or p.done % 25 == 0):
        print(f"[{p.stage}] {p.done}/{p.total} {p.unit}", file=sys.stderr)


def run_check(args: argparse.Namespace) -> int:
    """Check a claim against a collection; a report or ``--json``.

    The result is printed first, then kept in the collection's history as a claim check
    (:func:`~verifai_desktop.keep.keep_in_history`; ``verifai history`` lists it, ``verifai
    audit export`` writes its record); when it cannot be kept, ``warning: ...`` follows on
    stderr and the exit status stays 0.
    """
    settings = load_settings()
    budget = args.budget or CHECK_BUDGET_FACTOR * settings.verify.conflict_budget
    with open_store(args, settings=settings) as collection:
        session = AskSession(settings)
        result = session.check_claim(collection, args.claim, budget=budget)
        settings = session.settings_in_effect()  # the preset's thresholds, as recorded
        if args.json:
            print_json(check_to_dict(result, settings))
        else:
            render_check(result, settings.citations)
        sys.stdout.flush()  # the result is out before the history is written
        kept = keep_in_history(collection, result, settings)
    if kept.warning:
        hint = error_hint(kept.error) if kept.error is not None else ""
        print(f"warning: {kept.warning}{hint}", file=sys.stderr)
    return 0


CHECK_BUDGET_FACTOR = 3
"""``verifai check`` verifies this many times the per-sentence budget of an answer: one
claim, with the user waiting for exactly that."""


def _line(ev: Evidence, name_of: Callable[[Passage], str]) -> str:
    v = ev.verdict
    return (
        f"  {printable(name_of(ev.passage))}  S={v.p_support:.2f} "
        f"C={v.p_contradict:.2f} N={v.p_no_evidence:.2f}: “{v.evidence.strip()}”"
    )


def _flags(ev: Evidence) -> list[str]:
    """The checks that held the passage's verdict back, one indented line each."""
    return [f"      {printable(line)}" for line in flag_lines(ev.verdict)]


def render_check(result: CheckResult, citations: CitationSettings | None = None) -> None:
    """Print the verdict per document (an unsure one with its best guess), then the
    supporting and contradicting passages; under each, the checks that held its verdict
    back. Passages and documents are named author-year where they have a reference-manager
    entry (``citations``: the ``[citations]`` settings), else by file name."""
    from rich.console import Console
    from rich.text import Text

    name_of = passage_labeler(check_passages(result), citations)
    console = Console(highlight=False)
    console.print(Text(f"Claim: {result.claim}", style="bold"), markup=False)
    console.print(f"{result.candidates} passages verified", style="dim", markup=False)
    console.print()
    console.print(Text("Documents", style="bold"))
    for d in result.documents:
        line = Text("  ")
        line.append(f"{CHECK_VERDICT_TEXT[d.label]:<12}", style=DOC_STYLE[d.label])
        cited = name_of(d.evidence.passage)
        named = cited if cited != d.evidence.passage.source_label() else d.path.name
        line.append(f" {printable(named)} — {printable(d.title)}")
        if d.label == "UNSURE":
            line.append(f" ({document_verdict_note(d)})")
        console.print(line)
        for flag in _flags(d.evidence):
            console.print(Text(flag), markup=False)
    for title, items, style in (
        ("Supporting passages", result.supporting, "green"),
        ("Contradicting passages", result.contradicting, "bold red"),
    ):
        console.print()
        console.print(Text(f"{title} ({len(items)})", style=style))
        for ev in items:
            console.print(Text(_line(ev, name_of)), markup=False)
            for flag in _flags(ev):
                console.print(Text(flag), markup=False)
        if not items:
            console.print(Text("  none", style="dim"))
