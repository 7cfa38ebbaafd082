"""The verifier's dev sets, shared by training and calibration, and their macro F1.

SciFact dev, HealthVer dev and LingNLI dev (held back from every training run) are scored at
every checkpoint by ``trainer.py`` (:func:`dev_sets`, :func:`macro_f1`) and used to choose the
calibration by ``calibrate_verifier.py`` (:func:`lingnli_dev`; the other two are read there
whole). None of them is trained on.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pool as pl


@dataclass(frozen=True, slots=True)
class DevSet:
    """A dev set scored at every checkpoint: name, pairs and gold label ids."""

    name: str
    pairs: tuple[tuple[str, str], ...]
    gold: tuple[int, ...]


def lingnli_dev(data: Path, limit: int = 2000) -> list[tuple[tuple[str, str], int]]:
    """LingNLI dev (held back from every training run): the first ``limit`` pairs in a fixed
    shuffled order, as ((premise, hypothesis), gold index)."""
    ling = [p for p in pl.load_source(data / "nli_train", "lingnli") if p.split == "dev"]
    random.Random(0).shuffle(ling)
    return [((p.premise, p.hypothesis), pl.LABELS.index(p.label)) for p in ling[:limit]]


def dev_sets(data: Path, *, limit: int = 400) -> list[DevSet]:
    """The dev sets logged per checkpoint: SciFact dev (claim + whole cited abstract, 340
    pairs), HealthVer dev and LingNLI dev (first ``limit`` pairs in a fixed shuffled order)."""
    from verifai_desktop.evaluate.verifier import load_healthver, load_scifact

    ids = {lab: i for i, lab in enumerate(pl.LABELS)}
    out = []
    sci = load_scifact(data / "scifact" / "original", "dev")
    out.append(
        DevSet(
            "scifact_dev",
            tuple((p.premise, p.hypothesis) for p in sci),
            tuple(ids[p.label.value] for p in sci),
        )
    )
    hv = load_healthver(data / "healthver" / "healthver_dev.csv")
    random.Random(0).shuffle(hv)
    hv = hv[:limit]
    out.append(
        DevSet(
            "healthver_dev",
            tuple((p.premise, p.hypothesis) for p in hv),
            tuple(ids[p.label.value] for p in hv),
        )
    )
    ling = lingnli_dev(data, limit)
    out.append(
        DevSet("lingnli_dev", tuple(pair for pair, _ in ling), tuple(gold for _, gold in ling))
    )
    return out


def macro_f1(gold: Sequence[int], pred: Sequence[int]) -> tuple[float, list[float]]:
    """Macro F1 over the three classes and the per-class F1 (SUPPORT, CONTRADICT, NO_EVIDENCE)."""
    f1s = []
    for c in range(3):
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p != c)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / 3, f1s
