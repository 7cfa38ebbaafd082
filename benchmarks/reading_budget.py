"""The generator's reading budget chosen on dev questions (issue 40, item 2): prompt tokens,
time to the first token, own abstract cited and the shown labels, per budget, in one run.

Each row answers the same PubMedQA PQA-L dev questions (by default 41-80: the first 40 are the
reported set and never used for choices) through the real pipeline (``verifai eval answers``:
hybrid retrieval over the 1,000 abstracts, the citation grammar, the NLI verifier,
re-citation; abstention off), with one reading setting:

* ``passage tokens``: ``generation.prompt_passage_tokens``, the token budget the passages may
  take (source lines included);
* ``sentences``: ``generation.reading_sentences``, each passage trimmed to that many sentences
  that bear on the question, their neighbours and its first sentence
  (:mod:`verifai_desktop.generate.focus`); ``whole`` reads passages whole.

Columns: mean prompt tokens (the generator's own count, chat template included); mean time to
the first token and per answer (seconds; generations are cached per prompt in
``<data root>/cache/generations.json`` with their original times, so a second run verifies
again and reports the first run's times); own abstract cited by the generator and after
re-citation (%); seconds verifying (the answer's sentences and the contradiction search);
the share of answer sentences shown supported, contradicted and unsure (%).
Times depend on the machine's load, printed before and after.

Usage: .venv/bin/python benchmarks/reading_budget.py [--skip 40] [--limit 40] [-k 10]
       [--configs 0:1500,2:800,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from pathlib import Path

from verifai_desktop.evaluate.answers import evaluate_pubmedqa
from verifai_desktop.settings import Settings, load_settings

PUBMEDQA = Path(__file__).resolve().parents[1].parent / "shared/data/pubmedqa/ori_pqal.json"

CONFIGS = "0:1500,2:700,1:700,0:700"
"""``sentences:passage tokens`` pairs; ``0:1500`` is the setting before issue 40."""


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def with_reading(settings: Settings, sentences: int, budget: int) -> Settings:
    """``settings`` with this reading budget."""
    generation = dataclasses.replace(
        settings.generation, reading_sentences=sentences, prompt_passage_tokens=budget
    )
    return dataclasses.replace(settings, generation=generation)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pubmedqa", type=Path, default=PUBMEDQA)
    parser.add_argument("--skip", type=int, default=40)
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("-k", type=int, default=None, help="passages retrieved (default: settings)")
    parser.add_argument("--configs", default=CONFIGS, help="sentences:tokens,... (0 = whole)")
    args = parser.parse_args()
    settings = load_settings()
    k = args.k or settings.retrieval.k
    first, last = args.skip + 1, args.skip + args.limit
    print(f"load before: {_uptime()}", file=sys.stderr)
    print(f"PubMedQA PQA-L questions {first}..{last} (dev), k={k}, abstention off\n")
    print(
        "| sentences | passage tokens | prompt tokens | first token s | verify s | s / answer "
        "| own abstract cited % (generator / re-cited) | supported % | contradicted % "
        "| unsure % |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for config in args.configs.split(","):
        sentences, budget = (int(x) for x in config.split(":"))
        report = evaluate_pubmedqa(
            args.pubmedqa,
            limit=args.limit,
            k=k,
            skip=args.skip,
            settings=with_reading(settings, sentences, budget),
        )
        cites = {c.name: c for c in report.citations}
        gen, rec = cites["generator's citations"], cites["after re-citation"]
        pct, ms = report.label_pct, report.mean_ms
        print(
            f"| {sentences or 'whole'} | {budget} | {ms.get('prompt_tokens', 0.0):.0f} "
            f"| {ms.get('first_token', 0.0) / 1000:.1f} | {ms.get('verify', 0.0) / 1000:.1f} "
            f"| {ms.get('total', 0.0) / 1000:.1f} "
            f"| {gen.gold_cited_pct:.1f} / {rec.gold_cited_pct:.1f} "
            f"| {pct.get('supported', 0.0):.1f} | {pct.get('contradicted', 0.0):.1f} "
            f"| {pct.get('unsure', 0.0):.1f} |",
            flush=True,
        )
    print(f"\nload after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
