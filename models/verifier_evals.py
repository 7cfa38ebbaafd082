"""The evaluations of the verifier's model card (``calibrate_verifier.py --evaluate``).

Every set of :data:`EVALS` is scored with the calibrated model, the uncalibrated model (SciFact
and HealthVer) and the lexical-overlap baseline, and SciFact dev / HealthVer test also on the
LLM-judge slice; one ``verifai eval verifier --json``-style file per run in ``OUT/evals``,
which ``model_card.py`` turns into the card.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
from logits_cache import cached_verifier, save_cache

log = logging.getLogger("calibrate_verifier")


JUDGE_SLICE = 80
EVALS = (
    # (key, loader, path relative to data, granularity, limit), most important first
    ("scifact_dev", "scifact", "scifact/original", "passage", None),
    ("healthver_test", "healthver", "healthver/healthver_test.csv", "passage", None),
    ("scifact_dev_sentences", "scifact", "scifact/original", "sentences", None),
    ("healthver_test_sentences", "healthver", "healthver/healthver_test.csv", "sentences", None),
    ("scifact_dev_sentences_first100", "scifact", "scifact/original", "sentences", 100),
    ("scifact_dev_first100", "scifact", "scifact/original", "passage", 100),
    ("healthver_test_first200", "healthver", "healthver/healthver_test.csv", "passage", 200),
    ("nli_snli_test_subset", "nli", "nli/snli/snli_1.0_test_subset_deltaus.jsonl", "passage", None),
    (
        "nli_mnli_mismatched_1000",
        "nli",
        "nli/mnli/mnli_dev_mismatched_1000_textfooler.tsv",
        "passage",
        None,
    ),
    (
        "nli_fever_symmetric_test",
        "nli",
        "nli/fever_symmetric/fever_symmetric_test.jsonl",
        "passage",
        None,
    ),
    ("nli_sick_first500", "nli", "nli/sick/SICK.txt", "passage", 500),
    (
        "healthver_test_sentences_first200",
        "healthver",
        "healthver/healthver_test.csv",
        "sentences",
        200,
    ),
    (
        "nli_snli_test_1000_textfooler",
        "nli",
        "nli/snli/snli_test_1000_textfooler.tsv",
        "passage",
        None,
    ),
)


def eval_pairs(data: Path, kind: str, rel: str, limit: int | None) -> list[Any]:
    """The labelled pairs of one :data:`EVALS` entry (``kind``: scifact, healthver or nli;
    ``rel``: path under ``data``; the first ``limit`` pairs when given)."""
    from verifai_desktop.evaluate import verifier as ev

    path = data / rel
    pairs = (
        ev.load_scifact(path, "dev")
        if kind == "scifact"
        else ev.load_healthver(path)
        if kind == "healthver"
        else ev.load_nli(path)
    )
    return list(pairs[:limit] if limit is not None else pairs)


def evaluate_all(
    args: argparse.Namespace,
    model_dir: Path,
    cache: dict[tuple[str, str], np.ndarray],
    only: set[str] | None = None,
) -> None:
    """Every evaluation of the model card, the model (calibrated and raw) and the lexical
    baseline on the same pairs; JSON per run in ``args.out/evals``."""
    from verifai_desktop.evaluate import verifier as ev

    out = args.out / "evals"
    out.mkdir(parents=True, exist_ok=True)
    systems = {
        "": cached_verifier(model_dir, cache, threads=args.threads),
        "uncalibrated_": cached_verifier(model_dir, cache, threads=args.threads, calibrated=False),
        "baseline_lexical_": ev.LexicalOverlapVerifier(),
    }
    for key, kind, rel, gran, limit in EVALS:
        if only is not None and key not in only:
            continue
        pairs = eval_pairs(args.data, kind, rel, limit)
        for prefix, system in systems.items():
            if prefix == "uncalibrated_" and not key.startswith(("scifact", "healthver")):
                continue
            name = getattr(system, "name", "verifai-minilm-nli")
            if prefix == "uncalibrated_":
                name += " (uncalibrated)"
            t0 = time.monotonic()
            res = ev.evaluate_pairs(system, pairs, dataset=key, system=str(name), granularity=gran)  # type: ignore[arg-type]
            (out / f"{prefix}{key}.json").write_text(json.dumps(res.as_dict(), indent=2))
            save_cache(args.out, cache)
            log.info(
                "%s%s: macro F1 %.3f weighted F1 %.3f (%.0fs)",
                prefix,
                key,
                res.metrics.macro_f1,
                res.metrics.weighted_f1,
                time.monotonic() - t0,
            )
        # the same pairs as the LLM-judge slices
        if key in ("scifact_dev", "healthver_test"):
            for prefix, system in (
                ("", systems[""]),
                ("baseline_lexical_", systems["baseline_lexical_"]),
            ):
                res = ev.evaluate_pairs(
                    system,
                    pairs[:JUDGE_SLICE],
                    dataset=f"{key}[:{JUDGE_SLICE}]",
                    system=str(getattr(system, "name", "verifai-minilm-nli")),
                    granularity=gran,  # type: ignore[arg-type]
                )
                (out / f"{prefix}slice{JUDGE_SLICE}_{key}.json").write_text(
                    json.dumps(res.as_dict(), indent=2)
                )
