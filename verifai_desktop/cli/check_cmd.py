"""`verifai check`: what the whole collection says about a claim."""

from __future__ import annotations

import argparse

from verifai_desktop.cli.common import add_collection_arg, add_json_arg, positive_int, print_json
from verifai_desktop.domain import Evidence
from verifai_desktop.names import printable
from verifai_desktop.pipeline import AskSession
from verifai_desktop.serialize import check_to_dict
from verifai_desktop.settings import load_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.verify.conflicts import CheckResult

DOC_STYLE = {"SUPPORT": "green", "CONTRADICT": "bold red", "NO_EVIDENCE": "bright_black"}
DOC_TEXT = {"SUPPORT": "supports", "CONTRADICT": "contradicts", "NO_EVIDENCE": "no evidence"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai check``."""
    p = sub.add_parser(
        "check",
        help="search the whole collection for passages that support or contradict a claim",
        description=(
            "Search the whole collection (BM25, a negation-aware BM25 variant and dense "
            "neighbours) for the passages most likely to decide CLAIM, verify each of their "
            "sentence windows with the NLI verifier, and report supporting and contradicting "
            "passages and a verdict per document."
        ),
    )
    p.add_argument("claim", help="the statement to check")
    add_collection_arg(p)
    p.add_argument(
        "--budget",
        type=positive_int,
        default=None,
        help="candidate passages verified (default: settings verify.conflict_budget x 3)",
    )
    add_json_arg(p)
    p.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    """Check a claim against a collection; a report or ``--json``."""
    settings = load_settings()
    budget = args.budget or CHECK_BUDGET_FACTOR * settings.verify.conflict_budget
    with Collection.open(args.collection, settings=settings) as collection:
        result = AskSession(settings).check_claim(collection, args.claim, budget=budget)
    if args.json:
        print_json(check_to_dict(result))
    else:
        render_check(result)
    return 0


CHECK_BUDGET_FACTOR = 3
"""``verifai check`` verifies this many times the per-sentence budget of an answer: one
claim, with the user waiting for exactly that."""


def _line(ev: Evidence) -> str:
    v = ev.verdict
    return (
        f"  {printable(ev.passage.source_label())}  S={v.p_support:.2f} "
        f"C={v.p_contradict:.2f} N={v.p_no_evidence:.2f}: “{v.evidence.strip()}”"
    )


def render_check(result: CheckResult) -> None:
    """Print the verdict per document, then the supporting and contradicting passages."""
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    console.print(Text(f"Claim: {result.claim}", style="bold"), markup=False)
    console.print(f"{result.candidates} passages verified", style="dim", markup=False)
    console.print()
    console.print(Text("Documents", style="bold"))
    for d in result.documents:
        line = Text("  ")
        line.append(f"{DOC_TEXT[d.label]:<12}", style=DOC_STYLE[d.label])
        line.append(f" {printable(d.path.name)} — {printable(d.title)}")
        console.print(line)
    for title, items, style in (
        ("Supporting passages", result.supporting, "green"),
        ("Contradicting passages", result.contradicting, "bold red"),
    ):
        console.print()
        console.print(Text(f"{title} ({len(items)})", style=style))
        for ev in items:
            console.print(Text(_line(ev)), markup=False)
        if not items:
            console.print(Text("  none", style="dim"))
