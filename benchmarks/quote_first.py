"""Quote before paraphrasing, on and off, side by side on figure questions (issue 39, item 9).

Asks every question of ``models/data/figure_questions.jsonl`` (50 questions whose answer is one
figure of a PubMedQA dev abstract that also gives neighbouring subjects' figures; never a test
PMID, never ``docs/clean``) through the real pipeline over the PubMedQA collection (all 1,000
PQA-L abstracts, as ``verifai eval answers``), abstention off, once with
``generation.quote_first`` off and once on, and prints per mode: the right figure written, and
shown green; a neighbouring subject's figure written, and shown green; own abstract cited; time
to the first answer token and per answer (:mod:`verifai_desktop.evaluate.figures`). Then the
same per kind of question.

Generations are cached (``<data root>/cache/generations.json``, keyed by the whole prompt), so
a second run only retrieves and verifies again; times then come from the first run's records
only for the answer turn, so take times from a run with ``--no-cache``.

``--general N`` asks PubMedQA dev questions 41..40+N (``verifai eval answers``) in both modes
instead, to show that quoting loses nothing on questions that are not about one figure.

Usage: .venv/bin/python benchmarks/quote_first.py [--questions FILE] [--limit N] [--no-cache]
       [--dump FILE] [--general N]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from verifai_desktop import modelstore
from verifai_desktop.evaluate.answers import evaluate_pubmedqa, without_abstention
from verifai_desktop.evaluate.figures import (
    FigureResult,
    ask_figure_questions,
    load_figure_questions,
    summarise,
)
from verifai_desktop.evaluate.generation_cache import CachingGenerator
from verifai_desktop.evaluate.pubmedqa import build_collection, load_pubmedqa
from verifai_desktop.generate import Generator, make_generator
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import Settings, data_root, load_settings

ROOT = Path(__file__).resolve().parents[1]
PUBMEDQA = ROOT.parent / "shared/data/pubmedqa/ori_pqal.json"
QUESTIONS = ROOT / "models/data/figure_questions.jsonl"
COLLECTION = "pubmedqa-eval"


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _mode_settings(settings: Settings, quote_first: bool) -> Settings:
    return dataclasses.replace(
        without_abstention(settings),
        generation=dataclasses.replace(settings.generation, quote_first=quote_first),
    )


def _row(name: str, results: list[FigureResult]) -> str:
    s = summarise(results)
    return (
        f"| {name} | {s.n} | {s.right_written:.2f} | {s.right_green:.2f} "
        f"| {s.neighbour_written:.2f} | {s.neighbour_green:.2f} | {s.own_cited:.2f} "
        f"| {s.first_token_s:.1f} | {s.total_s:.1f} |"
    )


def general(pubmedqa: Path, limit: int, k: int) -> int:
    """Both modes on PubMedQA dev questions after the reported 40 (``verifai eval answers``):
    the shares of sentences shown supported / contradicted / unsure, own abstract cited, and
    seconds per answer. Quoting must lose nothing here."""
    settings = load_settings()
    print(f"load before: {_uptime()}", file=sys.stderr)
    print(f"PubMedQA PQA-L questions 41..{40 + limit} (dev), k={k}\n")
    print(
        "| mode | questions | supported % | contradicted % | unsure % | own abstract cited % "
        "(generator / re-cited) | first token s | s / answer |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, quote_first in (("answer from passages", False), ("quote first", True)):
        mode = dataclasses.replace(
            settings,
            generation=dataclasses.replace(settings.generation, quote_first=quote_first),
        )
        report = evaluate_pubmedqa(pubmedqa, limit=limit, k=k, skip=40, settings=mode)
        cites = {c.name: c for c in report.citations}
        gen, rec = cites["generator's citations"], cites["after re-citation"]
        pct = report.label_pct
        print(
            f"| {name} | {report.n_questions} | {pct.get('supported', 0.0):.1f} "
            f"| {pct.get('contradicted', 0.0):.1f} | {pct.get('unsure', 0.0):.1f} "
            f"| {gen.gold_cited_pct:.1f} / {rec.gold_cited_pct:.1f} "
            f"| {report.mean_ms.get('first_token', 0.0) / 1000:.1f} "
            f"| {report.mean_ms.get('total', 0.0) / 1000:.1f} |",
            flush=True,
        )
    print(f"\nload after: {_uptime()}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--pubmedqa", type=Path, default=PUBMEDQA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--no-cache", action="store_true", help="generate again (for times)")
    parser.add_argument("--dump", type=Path, default=None, help="write every answer as JSONL")
    parser.add_argument(
        "--general",
        type=int,
        default=0,
        metavar="N",
        help="instead: PubMedQA dev questions 41..40+N (not figure questions), both modes",
    )
    args = parser.parse_args()
    if args.general:
        return general(args.pubmedqa, args.general, args.k)
    settings = load_settings()
    questions = load_figure_questions(args.questions)[: args.limit]
    print(f"load before: {_uptime()}", file=sys.stderr)
    build_collection(COLLECTION, load_pubmedqa(args.pubmedqa), settings=settings)
    ident = modelstore.resolve(settings.models.generator, "generator")
    generator: Generator = make_generator(ident.path, settings.models)
    if not args.no_cache:
        generator = CachingGenerator(
            generator, ident.sha256, data_root() / "cache" / "generations.json"
        )
    modes = {"answer from passages": False, "quote first": True}
    results: dict[str, list[FigureResult]] = {}
    for name, quote_first in modes.items():
        print(f"mode: {name}", file=sys.stderr, flush=True)
        session = AskSession(_mode_settings(settings, quote_first), generator=generator)
        results[name] = list(ask_figure_questions(session, COLLECTION, questions, k=args.k))
    header = (
        "| mode | questions | right figure written | right figure green | neighbour's figure "
        "written | neighbour's figure green | own abstract cited | first token s | s / answer |"
    )
    print(
        f"Figure questions ({args.questions.name}), k={args.k}, generator "
        f"{settings.models.generator}, verifier {settings.models.verifier}\n"
    )
    print(header)
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rs in results.items():
        print(_row(name, rs))
    kinds = sorted({r.kind for rs in results.values() for r in rs})
    print("\nPer kind (right figure written / green; neighbour's written / green):\n")
    print("| kind | n | " + " | ".join(results) + " |")
    print("|---|---|" + "---|" * len(results))
    for kind in kinds:
        cells = []
        for rs in results.values():
            s = summarise([r for r in rs if r.kind == kind])
            cells.append(
                f"{s.right_written:.2f} / {s.right_green:.2f}; "
                f"{s.neighbour_written:.2f} / {s.neighbour_green:.2f}"
            )
        n = sum(r.kind == kind for r in next(iter(results.values())))
        print(f"| {kind} | {n} | " + " | ".join(cells) + " |")
    if args.dump is not None:
        with args.dump.open("w", encoding="utf-8") as out:
            for name, rs in results.items():
                for r in rs:
                    out.write(json.dumps({"mode": name, **dataclasses.asdict(r)}) + "\n")
    print(f"\nload after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
