"""Score the verification rules on the paraphrase dev set, per kind, each rule on and off.

    .venv/bin/python models/paraphrase_dev.py [--data FILE] [--cache FILE] [--ablate] [--dump F]
        [--verifier DIR]

The dev set (``models/data/paraphrase_dev.jsonl``, its recipe in ``models/data/README.md``):
claims worded as a chatbot words them against SciFact and PubMedQA dev passages, each with a
``kind`` (``wrong_subject_figure``, ``correct_negative``, ...), plus sentences the bundled
generator wrote, labelled against their cited passage. Every pair goes through the app's
verification path (:func:`verifai_desktop.verify.check.verify_pairs` at the app's premise
granularity and the bundled verifier's balanced preset) exactly as ``verifai eval verifier``
sends it; the verifier's probabilities are memoised in ``--cache`` so that each variant of the
rules costs no further forward pass. Every rule and threshold of issue 39 was chosen on this
table; ``docs/clean`` and the test splits are never read.

``--ablate`` adds one run per rule switched off (:class:`~verifai_desktop.verify.checks.Checks`),
``--dump`` writes each pair's shown label and reasons as JSONL for reading the errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from choose_thresholds import Memo

from verifai_desktop.evaluate.shown import SHOWN_ORDER, format_kinds, kind_metrics
from verifai_desktop.evaluate.verifier import evaluate_pairs, load_nli
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import verify_pairs
from verifai_desktop.verify.checks import ALL_CHECKS, NO_CHECKS, Checks
from verifai_desktop.verify.nli import BUNDLED_NAME, get_verifier
from verifai_desktop.verify.presets import effective_thresholds

DEV = Path(__file__).resolve().parent / "data" / "paraphrase_dev.jsonl"


def summary(kinds: Sequence[str], gold: Sequence[int], shown: Sequence[int]) -> list[str]:
    """The issue's three bars on the written claims (wrong not green, wrong red, right green)
    and green precision and coverage on the generator's own sentences (``generated_*``).

    Args:
        kinds: kind per pair; gold: gold index per pair (0 SUPPORT, 1 CONTRADICT, 2
            NO_EVIDENCE); shown: shown index per pair (0 SUPPORT, 1 CONTRADICT, 2 NO_EVIDENCE,
            3 UNSURE).
    """
    written = [n for n, k in enumerate(kinds) if not k.startswith("generated")]
    wrong = [n for n in written if gold[n] != 0]
    right = [n for n in written if gold[n] == 0]
    out = []
    if wrong and right:
        out.append(
            f"written claims: wrong not green {_share(wrong, lambda n: shown[n] != 0):.2f}, "
            f"wrong red {_share(wrong, lambda n: shown[n] == 1):.2f}, "
            f"right green {_share(right, lambda n: shown[n] == 0):.2f}, "
            f"right red {_share(right, lambda n: shown[n] == 1):.2f} "
            f"({len(wrong)} wrong, {len(right)} right)"
        )
    generated = [n for n, k in enumerate(kinds) if k.startswith("generated")]
    if generated:
        green = [n for n in generated if shown[n] == 0]
        gold_s = [n for n in generated if gold[n] == 0]
        red = [n for n in generated if shown[n] == 1]
        precision = _share(green, lambda n: gold[n] == 0) if green else float("nan")
        red_precision = _share(red, lambda n: gold[n] == 1) if red else float("nan")
        out.append(
            f"generated sentences: green precision {precision:.2f} ({len(green)} green), "
            f"coverage {_share(gold_s, lambda n: shown[n] == 0):.2f} of {len(gold_s)} "
            f"supported; red precision {red_precision:.2f} ({len(red)} red)"
        )
    return out


def _share(rows: Sequence[int], test: Callable[[int], bool]) -> float:
    return sum(1 for n in rows if test(n)) / len(rows) if rows else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEV, help="dev set JSONL (default: ours)")
    parser.add_argument("--cache", type=Path, default=None, help="memo of probabilities")
    parser.add_argument(
        "--verifier", default=BUNDLED_NAME, help="exported verifier folder (default: bundled)"
    )
    parser.add_argument("--ablate", action="store_true", help="each rule off in turn")
    parser.add_argument("--dump", type=Path, default=None, help="per-pair JSONL of the run")
    parser.add_argument("--support", type=float, default=None, help="SUPPORT threshold")
    parser.add_argument("--contradict", type=float, default=None, help="CONTRADICT threshold")
    args = parser.parse_args(argv)

    pairs = load_nli(args.data)
    inner = get_verifier(args.verifier)
    verifier = Memo(inner, args.cache)
    thresholds = effective_thresholds(VerifySettings(), inner.card.presets)
    if args.support is not None or args.contradict is not None:
        thresholds = dataclasses.replace(
            thresholds,
            support_threshold=args.support or thresholds.support_threshold,
            contradict_threshold=args.contradict or thresholds.contradict_threshold,
        )
    print(
        f"{args.data.name}: {len(pairs)} pairs, thresholds S {thresholds.support_threshold:.2f}"
        f" / C {thresholds.contradict_threshold:.2f}, premise {thresholds.premise}"
    )
    variants: list[tuple[str, Checks]] = [("all rules", ALL_CHECKS)]
    if args.ablate:
        variants += [
            (f"without {field.name}", dataclasses.replace(ALL_CHECKS, **{field.name: False}))
            for field in dataclasses.fields(Checks)
        ]
        variants.append(("none", NO_CHECKS))
    for name, checks in variants:
        result = evaluate_pairs(
            verifier,
            pairs,
            dataset=args.data.stem,
            system=inner.card.name,
            granularity=thresholds.premise,
            thresholds=thresholds,
            checks=checks,
        )
        print(f"\n== {name}")
        print("\n".join(format_kinds(kind_metrics(result.kinds, result.gold, result.shown))))
        print("\n".join(summary(result.kinds, result.gold, result.shown)))
        if args.dump is not None and checks is ALL_CHECKS:
            checked = verify_pairs(
                verifier,
                [(p.premise, p.hypothesis) for p in pairs],
                granularity=thresholds.premise,
                thresholds=thresholds,
                checks=checks,
            )
            with args.dump.open("w", encoding="utf-8") as fh:
                for n, p in enumerate(pairs):
                    fh.write(json.dumps({
                        "id": p.pair_id, "kind": p.kind, "gold": p.label.value,
                        "shown": SHOWN_ORDER[result.shown[n]].value,
                        "probs": [round(float(x), 3) for x in checked.probs[n]],
                        "hypothesis": p.hypothesis,
                        "window": p.premise[slice(*checked.spans[n])],
                        "reasons": list(checked.flags[n]),
                    }) + "\n")  # fmt: skip
    verifier.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
