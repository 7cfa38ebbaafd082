"""``verifai eval self-check``: does the verifier catch changed sentences of *these* documents?

A smoke test of the domain, not a benchmark. Perturbation pairs are made from the passages of
the user's own collection (:mod:`verifai_desktop.verify.perturb`: a sentence beside its passage,
unchanged and with a figure swapped or changed, two items swapped, a negation inserted or
removed, the passage restated as an aim) and go through the app's whole verification path
(:func:`verifai_desktop.verify.check.verify_pairs`: sentence windows, aims left out, the checks,
the shown labels under the thresholds in effect). Per kind it reports how often a changed
sentence is *not* shown green (caught) and how often an unchanged one *is* green (kept).

No peer offers this; it tells a user how far to trust the colours on their kind of text. The
result is kept in the collection's metadata (:data:`METADATA_KEY`) for the Library panel.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from verifai_desktop.domain import Progress, ShownLabel
from verifai_desktop.evaluate.shown import verify_in_chunks
from verifai_desktop.settings import VerifySettings
from verifai_desktop.store.base import CollectionStore
from verifai_desktop.verify.check import Verifier
from verifai_desktop.verify.checks import ALL_CHECKS, Checks
from verifai_desktop.verify.perturb import PerturbKind, PerturbPair, sample_pairs

METADATA_KEY = "self_check"
"""Collection metadata key of the last self-check (:meth:`SelfCheck.as_dict`)."""
DEFAULT_PER_KIND = 30
"""Pairs of each kind by default: about 200 pairs, two to four minutes on a 2-core CPU."""
MAX_DOCUMENTS = 400
"""Documents sampled for passages (a large collection is sampled, not read whole)."""
CHUNK = 4
"""Pairs per verifier batch (progress and Cancel act between batches). An answer asked while
the self-check runs waits for the batch in flight, each pair being every sentence window of
its passage: 4 rather than 16 (issue 40, item 5; ``benchmarks/latency_busy.py``)."""


@dataclass(frozen=True, slots=True)
class KindResult:
    """The self-check of one kind of change.

    Attributes:
        kind: the kind.
        n: pairs of this kind.
        green: pairs shown SUPPORT (green).
        shown: count per shown label (:class:`ShownLabel` value -> pairs).
    """

    kind: PerturbKind
    n: int
    green: int
    shown: dict[str, int]

    @property
    def caught(self) -> int:
        """Changed sentences not shown green (for ``unchanged``: the unchanged ones not green,
        the false alarms)."""
        return self.n - self.green


@dataclass(frozen=True, slots=True)
class SelfCheck:
    """A self-check of one collection.

    Attributes:
        collection: the collection name.
        kinds: one result per kind that produced pairs, in :class:`PerturbKind` order.
        passages: passages the pairs were drawn from.
        seconds: wall time of verification.
        preset: the threshold preset in effect (``verify.preset``).
        created_at: when it ran, ISO 8601 UTC.
        examples: a few changed sentences shown green, ``(kind, original, changed)``.
    """

    collection: str
    kinds: tuple[KindResult, ...]
    passages: int
    seconds: float
    preset: str
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    examples: tuple[tuple[str, str, str], ...] = ()

    def of(self, kind: PerturbKind) -> KindResult | None:
        """The result of ``kind``, or None when the documents produced none."""
        return next((k for k in self.kinds if k.kind is kind), None)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``--json`` and the collection metadata)."""
        return {
            "collection": self.collection,
            "created_at": self.created_at,
            "preset": self.preset,
            "passages": self.passages,
            "seconds": self.seconds,
            "kinds": {
                k.kind.value: {"n": k.n, "green": k.green, "caught": k.caught, "shown": k.shown}
                for k in self.kinds
            },
            "examples": [list(e) for e in self.examples],
        }


def collection_passages(
    store: CollectionStore, *, seed: int = 13, max_documents: int = MAX_DOCUMENTS
) -> list[tuple[str, str]]:
    """``(chunk id, chunk text)`` of up to ``max_documents`` documents of a collection.

    Documents are sampled with ``seed`` when there are more; each gives every chunk.
    """
    chunked = [ids for d in store.documents() if (ids := store.document_chunk_ids(int(d.doc_id)))]
    if len(chunked) > max_documents:
        chunked = random.Random(seed).sample(chunked, max_documents)
    ids = [i for doc_ids in chunked for i in doc_ids]
    records = store.chunks(ids)
    return [(str(i), records[i].chunk.text) for i in ids if i in records]


def run_self_check(
    verifier: Verifier,
    passages: Sequence[tuple[str, str]],
    thresholds: VerifySettings,
    *,
    collection: str = "",
    n_per_kind: int = DEFAULT_PER_KIND,
    seed: int = 13,
    checks: Checks = ALL_CHECKS,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> SelfCheck:
    """Make perturbation pairs from ``passages`` and verify them as the app would.

    Args:
        verifier: the NLI verifier.
        passages: ``(source id, text)``, e.g. :func:`collection_passages`.
        thresholds: the settings in effect (preset thresholds filled in), premise granularity.
        collection: the collection's name, for the report.
        n_per_kind: the most pairs of each kind.
        seed: the seed of :func:`~verifai_desktop.verify.perturb.sample_pairs`.
        checks: the checks and window rule (all on, as in the app).
        progress: called per batch with ``stage="self-check"``, ``unit="pairs"``.
        cancel: set to stop between batches.

    Returns:
        The per-kind results.

    Raises:
        Cancelled: ``cancel`` was set.
        ValueError: unknown premise granularity in ``thresholds``.
    """
    pairs = sample_pairs(passages, n_per_kind=n_per_kind, seed=seed)
    t0 = time.perf_counter()
    shown: list[ShownLabel] = []

    def done(n: int) -> None:
        if progress is not None:
            progress(Progress("self-check", n, len(pairs), "pairs", collection))

    for result in verify_in_chunks(
        verifier,
        [(p.premise, p.hypothesis) for p in pairs],
        granularity=thresholds.premise,
        thresholds=thresholds,
        checks=checks,
        chunk=CHUNK,
        what="self-check",
        done=done,
        cancel=cancel,
    ):
        shown += result.shown
    return SelfCheck(
        collection=collection,
        kinds=_tally(pairs, shown),
        passages=len({p.source for p in pairs}),
        seconds=time.perf_counter() - t0,
        preset=thresholds.preset,
        examples=tuple(
            (p.kind.value, p.original, p.hypothesis)
            for p, s in zip(pairs, shown, strict=True)
            if s is ShownLabel.SUPPORT and p.kind is not PerturbKind.UNCHANGED
        )[:5],
    )


def _tally(pairs: Sequence[PerturbPair], shown: Sequence[ShownLabel]) -> tuple[KindResult, ...]:
    out = []
    for kind in PerturbKind:
        mine = [s for p, s in zip(pairs, shown, strict=True) if p.kind is kind]
        if not mine:
            continue
        counts = {label.value: sum(s is label for s in mine) for label in ShownLabel}
        out.append(KindResult(kind, len(mine), counts[ShownLabel.SUPPORT.value], counts))
    return tuple(out)


KIND_TEXT: dict[PerturbKind, str] = {
    PerturbKind.UNCHANGED: "an unchanged sentence",
    PerturbKind.NUMBER_SWAP: "a figure swapped for another of the passage",
    PerturbKind.NUMBER_CHANGE: "a changed figure",
    PerturbKind.ITEM_SWAP: "two items swapped",
    PerturbKind.NEGATION_INSERT: "a negation inserted",
    PerturbKind.NEGATION_REMOVE: "a negation removed",
    PerturbKind.AIM: "an aim read as a finding",
}
"""How the report names each kind."""


def format_self_check(report: SelfCheck) -> str:
    """The plain-text report: per kind, how often the change was caught (not green)."""
    lines = [
        f"self-check of {report.collection or 'the passages given'}: "
        f"{sum(k.n for k in report.kinds)} pairs from {report.passages} passages, "
        f"preset {report.preset}, {report.seconds:.0f} s",
        "a smoke test of the colours on these documents, not a benchmark",
        f"{'change':<46} {'pairs':>5} {'not green':>10}",
    ]
    for k in report.kinds:
        if k.kind is PerturbKind.UNCHANGED:
            continue
        lines.append(f"{KIND_TEXT[k.kind]:<46} {k.n:5d} {k.caught:5d} ({k.caught / k.n:4.0%})")
    same = report.of(PerturbKind.UNCHANGED)
    if same is not None:
        lines.append(
            f"{'unchanged sentences shown green':<46} {same.n:5d} {same.green:5d} "
            f"({same.green / same.n:4.0%})"
        )
    for kind, original, changed in report.examples:
        lines.append(f"  shown green ({kind}): {changed!r}  (was {original!r})")
    return "\n".join(lines)


def summary_line(data: dict[str, Any]) -> str:
    """One line for the Library panel from :meth:`SelfCheck.as_dict` (stored metadata):
    "On these documents, a changed figure was caught in N of M cases; ..."."""
    kinds = data.get("kinds", {})
    parts = []
    for kind in (PerturbKind.NUMBER_SWAP, PerturbKind.NUMBER_CHANGE, PerturbKind.NEGATION_INSERT):
        k = kinds.get(kind.value)
        if k:
            parts.append(f"{KIND_TEXT[kind]} was caught in {k['caught']} of {k['n']} cases")
    same = kinds.get(PerturbKind.UNCHANGED.value)
    if same:
        parts.append(f"{same['green']} of {same['n']} unchanged sentences were green")
    return ("On these documents, " + "; ".join(parts) + ".") if parts else ""
