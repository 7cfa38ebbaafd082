"""Shown conflicts on dev answers, written out for labelling and scored (issue 39, item 5).

``--out FILE`` asks dev questions (the figure questions, ``models/data/figure_questions.jsonl``:
PubMedQA dev abstracts, never a test PMID, never ``docs/clean``) through the real pipeline with
the shipped settings (abstention off, so every answer is written) over the PubMedQA collection,
and writes one JSON line per conflict the app shows:

* ``red``: a sentence shown contradicted, with the cited passage that decided it;
* ``conflict``: a passage listed under "Conflicting evidence" of a sentence not shown red
  (a passage given but not cited, or one the contradiction search found in the collection;
  ``inner`` when it is a passage the sentence cites, through another window than the one that
  supports it).

Each line holds the question, the sentence, the passage text, the deciding window, the
probabilities and the reasons shown. A reader adds ``"real": true`` when the passage is about the
same subject (its entities and figures line up) and says otherwise than the sentence, else
``false``.

``--labels FILE`` prints the precision of shown conflicts (real / shown), per kind, from the
labelled file, and what :func:`verifai_desktop.verify.labels.conflicts_with` keeps of the
listed conflicts (those the verifier reads as bearing on the claim). Generations are cached
(``<data root>/cache/generations.json``).

Usage: .venv/bin/python models/shown_conflicts.py --out FILE [--limit 50]
       .venv/bin/python models/shown_conflicts.py --labels FILE
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from verifai_desktop import modelstore
from verifai_desktop.domain import Answer, SentenceLabel, ShownLabel, Verdict
from verifai_desktop.evaluate.answers import without_abstention
from verifai_desktop.evaluate.figures import load_figure_questions
from verifai_desktop.evaluate.generation_cache import CachingGenerator
from verifai_desktop.evaluate.pubmedqa import build_collection, load_pubmedqa
from verifai_desktop.generate import Generator, make_generator
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import data_root, load_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.verify.labels import CONFLICT_ON_TOPIC

ROOT = Path(__file__).resolve().parents[1]
PUBMEDQA = ROOT.parent / "shared/data/pubmedqa/ori_pqal.json"
QUESTIONS = ROOT / "models/data/figure_questions.jsonl"
COLLECTION = "pubmedqa-eval"


def _verdict(v: Verdict) -> dict[str, object]:
    return {
        "p_support": round(v.p_support, 3),
        "p_contradict": round(v.p_contradict, 3),
        "evidence": v.evidence,
        "flags": list(v.flags),
    }


def conflict_rows(qid: str, answer: Answer) -> list[dict[str, object]]:
    """The conflicts ``answer`` shows, one dict each (see the module docstring)."""
    rows: list[dict[str, object]] = []
    for sentence in answer.sentences:
        base = {"qid": qid, "question": answer.question, "sentence": sentence.text}
        if sentence.label is SentenceLabel.CONTRADICTED:
            for verdict in sentence.verdicts:
                if verdict.shown is not ShownLabel.CONTRADICT:
                    continue
                passage = answer.passages[verdict.passage_number - 1]
                rows.append({**base, "kind": "red", "passage": passage.text, **_verdict(verdict)})
            continue
        for evidence in sentence.conflicts:
            rows.append(
                {
                    **base,
                    "kind": "conflict",
                    "given": evidence.verdict.passage_number > 0,
                    "inner": evidence.verdict.passage_number in sentence.citations,
                    "passage": evidence.passage.text,
                    **_verdict(evidence.verdict),
                }
            )
    return rows


def write(out: Path, limit: int) -> int:
    settings = load_settings()
    settings = without_abstention(settings)
    build_collection(COLLECTION, load_pubmedqa(PUBMEDQA), settings=settings)
    ident = modelstore.resolve(settings.models.generator, "generator")
    generator: Generator = CachingGenerator(
        make_generator(ident.path, settings.models),
        ident.sha256,
        data_root() / "cache" / "generations.json",
    )
    session = AskSession(settings, generator=generator)
    n_rows = n_sentences = 0
    with Collection.open(COLLECTION, settings=settings) as collection, out.open("w") as f:
        for q in load_figure_questions(QUESTIONS)[:limit]:
            answer = session.ask(collection, q.question)
            n_sentences += len(answer.sentences)
            for row in conflict_rows(q.qid, answer):
                f.write(json.dumps(row) + "\n")
                n_rows += 1
    print(f"{limit} answers, {n_sentences} sentences, {n_rows} shown conflicts -> {out}")
    return 0


def score(labels: Path) -> int:
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    unlabelled = [r for r in rows if "real" not in r]
    if unlabelled:
        print(f"{len(unlabelled)} rows have no 'real' label", file=sys.stderr)
        return 1
    print("| shown as | shown | real | precision |")
    print("|---|---|---|---|")
    on_topic = [
        r
        for r in rows
        if r["kind"] == "red" or max(r["p_support"], r["p_contradict"]) >= CONFLICT_ON_TOPIC
    ]
    for kind in ("red", "conflict", "all"):
        for name, pool in (("", rows), (f", P >= {CONFLICT_ON_TOPIC} gate", on_topic)):
            chosen = [r for r in pool if kind == "all" or r["kind"] == kind]
            if kind == "red" and name:
                continue  # the gate applies to conflicts only
            real = sum(bool(r["real"]) for r in chosen)
            precision = f"{real / len(chosen):.2f}" if chosen else "-"
            print(f"| {kind}{name} | {len(chosen)} | {real} | {precision} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--labels", type=Path)
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    if args.labels is not None:
        return score(args.labels)
    if args.out is None:
        parser.error("give --out FILE or --labels FILE")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"load: {load}", file=sys.stderr)
    return write(args.out, args.limit)


if __name__ == "__main__":
    sys.exit(main())
