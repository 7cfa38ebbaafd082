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
  (:mod:`verifai_desktop.generate.focus`); ``whole`` reads passages whole;
* ``cut``: how the passage crossing the budget is cut, ``question`` (its sentences that bear
  most on the question, ``generation.cut_to_question``), ``best`` (that, and the sentence of all
  retrieved passages that bears most on the question is read even when its passage ranks below
  the budget, ``generation.keep_best_sentence``) or ``opening`` (its leading sentences).

Columns: mean prompt tokens (the generator's own count, chat template included); mean time to
the first token and per answer (seconds; generations are cached per prompt in
``<data root>/cache/generations.json`` with their original times, so a second run verifies
again and reports the first run's times); own abstract cited by the generator and after
re-citation (%); seconds verifying (the answer's sentences and the contradiction search);
the share of answer sentences shown supported, contradicted and unsure (%); the share of
answers with at least one sentence shown supported (%).
Times depend on the machine's load, printed before and after.

With ``--scifact``, the questions are SciFact dev claims with evidence, asked as "Is it true
that <claim>?", over their own abstracts and the first SciFact abstracts up to 1,000
(``scifact_as_pubmedqa`` writes them in PubMedQA's shape; "own abstract" is the first abstract
the claim's evidence is in). Only dev claims: the test claims are for reporting.

Usage: .venv/bin/python benchmarks/reading_budget.py [--scifact] [--rerank] [--skip 40]
       [--limit 40] [-k 10] [--configs 0:1500:opening,2:700:question,...] [--dump rows.jsonl]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from verifai_desktop.evaluate.answers import evaluate_pubmedqa
from verifai_desktop.paths import data_root
from verifai_desktop.settings import Settings, load_settings

DATA = Path(__file__).resolve().parents[1].parent / "shared/data"
PUBMEDQA = DATA / "pubmedqa/ori_pqal.json"
SCIFACT = DATA / "scifact/original"
SCIFACT_CORPUS = 1000

CONFIGS = "0:700:opening,0:700:question,2:700:question"
"""``sentences:passage tokens[:cut]`` (cut ``question``, the default, or ``opening``);
``0:1500:opening`` is the setting before issue 40, ``0:700:opening`` before the cut."""


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def with_reading(
    settings: Settings, sentences: int, budget: int, cut: str = "question"
) -> Settings:
    """``settings`` with this reading budget and cut (``question`` or ``opening``)."""
    if cut not in ("question", "opening", "best"):
        raise SystemExit(f"cut is 'question', 'best' or 'opening', not {cut!r}")
    generation = dataclasses.replace(
        settings.generation,
        reading_sentences=sentences,
        prompt_passage_tokens=budget,
        cut_to_question=cut != "opening",
        keep_best_sentence=cut == "best",
    )
    return dataclasses.replace(settings, generation=generation)


def scifact_as_pubmedqa(limit: int, out: Path) -> Path:
    """SciFact dev claims with evidence (file order, one per own abstract), ``limit`` of them,
    written as PubMedQA PQA-L JSON to ``out``: the asked abstracts first, then the first corpus
    abstracts up to :data:`SCIFACT_CORPUS`. Returns ``out``."""
    corpus = {}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            corpus[str(doc["doc_id"])] = doc
    data: dict[str, dict[str, object]] = {}
    with (SCIFACT / "claims_dev.jsonl").open(encoding="utf-8") as f:
        for line in f:
            claim = json.loads(line)
            own = next(iter(claim["evidence"]), None)
            if own is None or own in data or len(data) >= limit:
                continue
            label = next(iter(claim["evidence"][own]))["label"]
            data[own] = {
                "QUESTION": f"Is it true that {claim['claim'].rstrip('.')}?",
                "CONTEXTS": [" ".join(corpus[own]["abstract"])],
                "final_decision": "yes" if label == "SUPPORT" else "no",
            }
    for doc_id, doc in corpus.items():
        if len(data) >= SCIFACT_CORPUS:
            break
        if doc_id not in data:
            data[doc_id] = {
                "QUESTION": doc["title"],
                "CONTEXTS": [" ".join(doc["abstract"])],
                "final_decision": "maybe",
            }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pubmedqa", type=Path, default=PUBMEDQA)
    parser.add_argument(
        "--scifact", action="store_true", help="SciFact dev claims as questions, not PubMedQA"
    )
    parser.add_argument(
        "--rerank",
        action="store_true",
        help="evidence-aware reranking on in every row (retrieval.rerank; default: settings)",
    )
    parser.add_argument("--skip", type=int, default=40)
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("-k", type=int, default=None, help="passages retrieved (default: settings)")
    parser.add_argument("--configs", default=CONFIGS, help="sentences:tokens[:cut],... (0 = whole)")
    parser.add_argument(
        "--dump", type=Path, help="write one JSON line per config and question (answer, labels)"
    )
    args = parser.parse_args()
    settings = load_settings()
    if args.rerank:
        retrieval = dataclasses.replace(settings.retrieval, rerank=True)
        settings = dataclasses.replace(settings, retrieval=retrieval)
    k = args.k or settings.retrieval.k
    collection = "pubmedqa-eval"
    if args.scifact:
        args.pubmedqa = scifact_as_pubmedqa(
            args.limit, data_root() / "cache" / "scifact_dev_questions.json"
        )
        args.skip, collection = 0, "scifact-dev-questions"
    first, last = args.skip + 1, args.skip + args.limit
    print(f"load before: {_uptime()}", file=sys.stderr)
    asked = "SciFact dev claims as questions" if args.scifact else "PubMedQA PQA-L questions"
    reranked = ", reranked by evidence" if settings.retrieval.rerank else ""
    print(f"{asked} {first}..{last} (dev), k={k}{reranked}, abstention off\n")
    print(
        "| sentences | passage tokens | cut | prompt tokens | first token s | verify s "
        "| s / answer | own abstract cited % (generator / re-cited) | supported % | contradicted % "
        "| unsure % | answers with a green sentence % |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for config in args.configs.split(","):
        sentences_s, budget_s, *rest = config.split(":")
        sentences, budget = int(sentences_s), int(budget_s)
        cut = rest[0] if rest else "question"
        report = evaluate_pubmedqa(
            args.pubmedqa,
            limit=args.limit,
            k=k,
            skip=args.skip,
            collection_name=collection,
            settings=with_reading(settings, sentences, budget, cut),
        )
        cites = {c.name: c for c in report.citations}
        gen, rec = cites["generator's citations"], cites["after re-citation"]
        pct, ms = report.label_pct, report.mean_ms
        results = report.questions
        green = 100 * sum("supported" in q.labels for q in results) / max(len(results), 1)
        if args.dump:
            with args.dump.open("a", encoding="utf-8") as out:
                for q in results:
                    row = {
                        "config": config,
                        "pmid": q.pmid,
                        "gold_retrieved": q.gold_retrieved,
                        "gold_cited": q.gold_cited,
                        "labels": q.labels,
                        "answer": q.answer,
                    }
                    out.write(json.dumps(row) + "\n")
        print(
            f"| {sentences or 'whole'} | {budget} | {cut} | {ms.get('prompt_tokens', 0.0):.0f} "
            f"| {ms.get('first_token', 0.0) / 1000:.1f} | {ms.get('verify', 0.0) / 1000:.1f} "
            f"| {ms.get('total', 0.0) / 1000:.1f} "
            f"| {gen.gold_cited_pct:.1f} / {rec.gold_cited_pct:.1f} "
            f"| {pct.get('supported', 0.0):.1f} | {pct.get('contradicted', 0.0):.1f} "
            f"| {pct.get('unsure', 0.0):.1f} | {green:.1f} |",
            flush=True,
        )
    print(f"\nload after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
