"""Collect sentences the bundled generator writes for PubMedQA dev questions, to be labelled.

    .venv/bin/python models/generated_claims.py --out FILE [--skip 40] [--limit 60]

Builds the PubMedQA collection of ``verifai eval answers`` (the PQA-L abstracts up to the last
question asked), asks questions ``skip + 1 .. skip + limit`` (the first 40 are the reported
set and are never asked here) with the app's settings (abstention off, re-citation as set),
and writes one JSONL row per (answer sentence, passage cited by the generator): the question,
the sentence without citation markers, the passage text and where it comes from. Those rows
are labelled by reading (``label``, ``note``) and joined to the paraphrase dev set with
``kind`` ``generated`` (``models/data/README.md``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from verifai_desktop.evaluate.pubmedqa import build_collection, load_pubmedqa
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import load_settings
from verifai_desktop.store.collection import Collection

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pubmedqa", type=Path, default=DATA / "pubmedqa" / "ori_pqal.json")
    parser.add_argument("--skip", type=int, default=40, help="questions passed over first")
    parser.add_argument("--limit", type=int, default=60, help="questions asked")
    parser.add_argument("--out", type=Path, required=True, help="JSONL written")
    args = parser.parse_args(argv)
    if args.skip < 40:
        parser.error("--skip must be at least 40: the first 40 questions are the reported set")

    items = load_pubmedqa(args.pubmedqa)
    asked = items[args.skip : args.skip + args.limit]
    settings = load_settings()
    settings = dataclasses.replace(
        settings,
        verify=dataclasses.replace(
            settings.verify, abstain_threshold=-1.0, abstain_unsupported=False
        ),
    )
    name = "pubmedqa-generated-claims"
    build_collection(name, items[: args.skip + args.limit], settings=settings)
    session = AskSession(settings)
    n_rows = 0
    with Collection.open(name, settings=settings) as collection, args.out.open("w") as fh:
        for i, item in enumerate(asked, start=1):
            answer = session.ask(collection, item.question, k=5)
            for s in answer.sentences:
                cited = s.cited_by_generator or s.citations
                for number in cited:
                    passage = answer.passages[number - 1]
                    fh.write(json.dumps({
                        "question": item.question, "pmid": item.pmid,
                        "sentence": s.text, "hypothesis": s.claim,
                        "citation": number, "premise": passage.text,
                        "source": str(passage.path),
                        "shown_now": s.label.value,
                    }) + "\n")  # fmt: skip
                    n_rows += 1
            fh.flush()
            print(f"{i}/{len(asked)} {item.pmid}: {len(answer.sentences)} sentences, "
                  f"{n_rows} rows", file=sys.stderr, flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
