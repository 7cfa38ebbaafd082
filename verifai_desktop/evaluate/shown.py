"""What the app shows, scored: the shown-label matrix, per-label precision and coverage.

``verifai eval verifier`` reports the verifier's argmax metrics (:mod:`.verifier`) and, from
the same run, what the app would show for each pair (:class:`~verifai_desktop.domain.ShownLabel`:
SUPPORT, CONTRADICT, NO_EVIDENCE or UNSURE, after the per-label thresholds and the checks of
:mod:`verifai_desktop.verify.checks`). A shown label's *precision* is the share of pairs shown
with it whose gold label it is; its *coverage* is the share of the pairs of that gold label shown
with it (recall, with UNSURE counted as not shown). UNSURE has no gold label: its row gives how
many pairs the app declined to colour.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from verifai_desktop.domain import ShownLabel
from verifai_desktop.errors import Cancelled
from verifai_desktop.foreground import FOREGROUND
from verifai_desktop.settings import PremiseGranularity, VerifySettings
from verifai_desktop.verify.check import LABEL_ORDER, PairResults, Verifier, verify_pairs
from verifai_desktop.verify.checks import Checks

SHOWN_ORDER: tuple[ShownLabel, ...] = (
    ShownLabel.SUPPORT,
    ShownLabel.CONTRADICT,
    ShownLabel.NO_EVIDENCE,
    ShownLabel.UNSURE,
)
"""Column order of ``shown_confusion``; the first three match the gold ``labels`` order."""


def shown_metrics(gold: Sequence[int], shown: Sequence[int]) -> dict[str, Any]:
    """The shown-label report of one run.

    Args:
        gold: gold class index per pair, in :data:`~verifai_desktop.verify.check.LABEL_ORDER`.
        shown: shown label index per pair, in :data:`SHOWN_ORDER`.

    Returns:
        ``shown_labels`` (column names), ``shown_confusion`` (rows: gold labels in ``labels``
        order, columns: ``shown_labels``), ``shown_per_label`` (per label: ``precision``,
        ``coverage``, ``shown`` count; precision None where nothing was shown),
        ``shown_macro_f1`` (macro F1 over the three gold labels, UNSURE counting as a miss)
        and ``unsure_share`` (share of pairs shown UNSURE).

    Raises:
        ValueError: ``gold`` and ``shown`` differ in length.
    """
    if len(gold) != len(shown):
        raise ValueError(f"{len(gold)} gold labels but {len(shown)} shown labels")
    matrix = [[0] * len(SHOWN_ORDER) for _ in LABEL_ORDER]
    for g, s in zip(gold, shown, strict=True):
        matrix[g][s] += 1
    per_label: dict[str, dict[str, float | int | None]] = {}
    f1s: list[float] = []
    for c, label in enumerate(SHOWN_ORDER):
        n_shown = sum(row[c] for row in matrix)
        if c == len(LABEL_ORDER):
            per_label[label.value] = {"shown": n_shown, "precision": None, "coverage": None}
            continue
        right = matrix[c][c]
        n_gold = sum(matrix[c])
        precision = right / n_shown if n_shown else None
        coverage = right / n_gold if n_gold else 0.0
        per_label[label.value] = {"shown": n_shown, "precision": precision, "coverage": coverage}
        p = precision or 0.0
        f1s.append(2 * p * coverage / (p + coverage) if p + coverage else 0.0)
    return {
        "shown_labels": [label.value for label in SHOWN_ORDER],
        "shown_confusion": matrix,
        "shown_per_label": per_label,
        "shown_macro_f1": sum(f1s) / len(f1s),
        "unsure_share": (sum(row[-1] for row in matrix) / len(gold)) if gold else 0.0,
    }


def format_shown(report: dict[str, Any]) -> list[str]:
    """Report lines for :func:`shown_metrics`: the per-label table and the shown matrix."""
    lines = [
        f"what the app shows: macro F1 {report['shown_macro_f1']:.3f}, "
        f"unsure {report['unsure_share']:.1%}",
        f"{'shown':<12} {'prec':>6} {'cover':>6} {'n':>6}",
    ]
    for name, m in report["shown_per_label"].items():
        prec = "" if m["precision"] is None else f"{m['precision']:.3f}"
        cover = "" if m["coverage"] is None else f"{m['coverage']:.3f}"
        lines.append(f"{name:<12} {prec:>6} {cover:>6} {m['shown']:6d}")
    lines.append("shown (rows gold, columns shown):")
    lines.append(f"{'':<12} " + " ".join(f"{n[:10]:>10}" for n in report["shown_labels"]))
    for label, row in zip(LABEL_ORDER, report["shown_confusion"], strict=True):
        lines.append(f"{label.value:<12} " + " ".join(f"{v:10d}" for v in row))
    return lines


def kind_metrics(
    kinds: Sequence[str], gold: Sequence[int], shown: Sequence[int]
) -> dict[str, dict[str, Any]]:
    """What the app shows per kind of claim (the paraphrase dev set's ``kind`` column).

    Args:
        kinds: the kind per pair (``""`` rows are counted under ``"(none)"``).
        gold: gold class index per pair, in :data:`~verifai_desktop.verify.check.LABEL_ORDER`.
        shown: shown label index per pair, in :data:`SHOWN_ORDER`.

    Returns:
        Per kind, in order of first appearance: ``gold`` (the kind's gold label when all its
        rows share one, else ``"mixed"``), ``n``, the shares shown ``green`` (SUPPORT),
        ``red`` (CONTRADICT), ``unsure`` and ``no_evidence``, and ``right``: for a SUPPORT
        kind the share *kept* green, for any other kind the share *caught* (not shown green).
        Then one ``"all <label>"`` row per gold label over every kind.

    Raises:
        ValueError: the three sequences differ in length.
    """
    if not len(kinds) == len(gold) == len(shown):
        raise ValueError(f"{len(kinds)} kinds, {len(gold)} gold labels, {len(shown)} shown")
    groups: dict[str, list[int]] = {}
    for n, kind in enumerate(kinds):
        groups.setdefault(kind or "(none)", []).append(n)
    for g in sorted(set(gold)):
        groups[f"all {LABEL_ORDER[g].value}"] = [n for n in range(len(gold)) if gold[n] == g]
    out: dict[str, dict[str, Any]] = {}
    for kind, rows in groups.items():
        golds = {gold[n] for n in rows}
        counts = [sum(1 for n in rows if shown[n] == c) for c in range(len(SHOWN_ORDER))]
        share = [c / len(rows) for c in counts]
        supported = golds == {0}  # LABEL_ORDER[0] is SUPPORT
        out[kind] = {
            "gold": LABEL_ORDER[golds.pop()].value if len(golds) == 1 else "mixed",
            "n": len(rows),
            "green": share[0],
            "red": share[1],
            "no_evidence": share[2],
            "unsure": share[3],
            "right": share[0] if supported else 1.0 - share[0],
        }
    return out


def format_kinds(report: dict[str, dict[str, Any]]) -> list[str]:
    """Report lines for :func:`kind_metrics`: one row per kind; ``right`` is *kept* (shown
    green) for a SUPPORT kind and *caught* (not shown green) for any other."""
    lines = [
        "per kind (shares of the kind's pairs; right = kept green for SUPPORT kinds, "
        "caught = not green otherwise):",
        f"{'kind':<24} {'gold':<11} {'n':>4} {'right':>6} {'green':>6} {'red':>6} "
        f"{'unsure':>6} {'no ev.':>6}",
    ]
    for kind, m in report.items():
        lines.append(
            f"{kind[:24]:<24} {m['gold'][:11]:<11} {m['n']:4d} {m['right']:6.2f} "
            f"{m['green']:6.2f} {m['red']:6.2f} {m['unsure']:6.2f} {m['no_evidence']:6.2f}"
        )
    return lines


def verify_in_chunks(
    verifier: Verifier,
    items: Sequence[tuple[str, str]],
    *,
    granularity: PremiseGranularity,
    thresholds: VerifySettings | None,
    checks: Checks,
    chunk: int,
    what: str,
    done: Callable[[int], None] | None = None,
    cancel: threading.Event | None = None,
) -> Iterator[PairResults]:
    """:func:`~verifai_desktop.verify.check.verify_pairs` over ``(premise, hypothesis)`` items,
    ``chunk`` at a time, so a long evaluation reports progress and can be cancelled.

    Args:
        done: called with the number of items verified so far after each chunk.
        what: names the work in :class:`~verifai_desktop.errors.Cancelled`.

    Raises:
        Cancelled: ``cancel`` was set (checked before each chunk).
    """
    for start in range(0, len(items), chunk):
        FOREGROUND.wait_turn(cancel, what)  # an answer being written goes first
        if cancel is not None and cancel.is_set():
            raise Cancelled(what)
        part = items[start : start + chunk]
        yield verify_pairs(
            verifier, part, granularity=granularity, thresholds=thresholds, checks=checks
        )
        if done is not None:
            done(start + len(part))
