"""Paraphrase training pairs (issue 39): claims worded as a chatbot words them, cut to the
premise windows the app checks them against.

``models/data/paraphrase_train.jsonl`` (recipe in ``models/data/README.md``) holds written
claims against whole SciFact train-cited abstracts and PubMedQA PQA-L contexts, disjoint from
the paraphrase dev set, the self-check dev abstracts, the verifier's held-out calibration
claims, the PubMedQA reported and dev questions and every test split. The app never shows
the verifier a whole abstract: it checks a claim against windows of one to three sentences
(:func:`verifai_desktop.verify.check.premise_windows`) and the window with the strongest
SUPPORT or CONTRADICT decides. So each claim is trained against the windows that hold its
evidence, the passage words its ``note`` quotes; a claim whose quote is not found again is
trained against the window sharing most words and figures with it. A ``not_stated`` claim
(NO_EVIDENCE) is trained against the two windows closest to it in words, which state
nothing about it either.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

import pool as pl

from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.check import premise_windows

TRAIN = Path(__file__).resolve().parent / "data" / "paraphrase_train.jsonl"
SOURCES = {"scifact": "paraphrase_scifact", "pubmedqa": "paraphrase_pubmedqa"}
"""Pool source name per passage prefix (``scifact:<doc id>`` / ``pubmedqa:<pmid>``)."""
WINDOWS_PER_CLAIM = 2
"""Most windows a claim is trained against (of those that hold its evidence)."""

_QUOTE = re.compile(r"'([^']{6,}?)'(?!\w)")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*")
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[a-z]{3,}")


def _tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def quoted_spans(note: str, premise: str) -> list[tuple[int, int]]:
    """Offsets in ``premise`` of the passage words ``note`` quotes ('...'), each fragment of
    a quote cut at an ellipsis found on its own; fragments under three words are ignored."""
    spans = []
    for quote in _QUOTE.findall(note):
        for frag in _ELLIPSIS.split(quote):
            frag = frag.strip(" ,;")
            if len(frag.split()) < 3:
                continue
            at = premise.find(frag)
            if at < 0:
                at = premise.lower().find(frag.lower())
            if at >= 0:
                spans.append((at, at + len(frag)))
    return spans


def claim_windows(row: dict[str, str], rng: random.Random) -> list[str]:
    """The premise windows one claim is trained against (see the module docstring).

    Args:
        row: a line of ``paraphrase_train.jsonl`` (``premise``, ``hypothesis``, ``note``,
            ``label``).
        rng: picks among the windows that hold the evidence.

    Returns:
        One or more window texts (at most :data:`WINDOWS_PER_CLAIM`).
    """
    text = row["premise"]
    windows = premise_windows(text, "sentences", split_sentences(text))
    spans = quoted_spans(row["note"], text) if row["label"] != "NO_EVIDENCE" else []
    if spans:
        start, end = min(a for a, _ in spans), max(b for _, b in spans)
        holding = [(a, b) for a, b in windows if a <= start and end <= b]
        if not holding:  # quotes far apart: the windows holding the first one
            s0, e0 = spans[0]
            holding = [(a, b) for a, b in windows if a <= s0 and e0 <= b]
        if holding:
            picked = rng.sample(holding, min(WINDOWS_PER_CLAIM, len(holding)))
            return [text[a:b] for a, b in picked]
    words = _tokens(
        row["hypothesis"] + " " + (row["note"] if row["label"] != "NO_EVIDENCE" else "")
    )

    def shared(w: tuple[int, int]) -> int:  # a shared figure counts three words
        return sum(3 if t[0].isdigit() else 1 for t in words & _tokens(text[w[0] : w[1]]))

    ranked = sorted(windows, key=lambda w: (-shared(w), w[1] - w[0]))
    keep = WINDOWS_PER_CLAIM if row["label"] == "NO_EVIDENCE" else 1
    return [text[a:b] for a, b in ranked[:keep]]


def paraphrase_pairs(path: Path = TRAIN, *, seed: int = 13) -> list[pl.PoolPair]:
    """Stage pairs from a paraphrase training file (one per claim and window).

    Args:
        path: JSONL rows with ``id``, ``source`` (``scifact:`` / ``pubmedqa:``), ``label``,
            ``hypothesis``, ``premise``, ``note``.
        seed: picks the windows; the same file and seed give the same pairs.

    Returns:
        Pairs with source ``paraphrase_scifact`` / ``paraphrase_pubmedqa``, split ``train``,
        ``pair_id`` ``<row id>#<n>``.

    Raises:
        FileNotFoundError: ``path`` is missing.
        ValueError: a row has an unknown source prefix or label.
    """
    out: list[pl.PoolPair] = []
    with Path(path).open(encoding="utf-8") as fh:
        rows: Sequence[dict[str, str]] = [json.loads(line) for line in fh if line.strip()]
    for row in rows:
        prefix = row["source"].split(":", 1)[0]
        if prefix not in SOURCES or row["label"] not in pl.LABELS:
            raise ValueError(f"{path}: row {row.get('id')}: source {row['source']!r}, "
                             f"label {row['label']!r}")  # fmt: skip
        rng = random.Random(f"{seed}:{row['id']}")
        for n, window in enumerate(claim_windows(row, rng)):
            out.append(
                pl.PoolPair(
                    window,
                    row["hypothesis"],
                    row["label"],
                    SOURCES[prefix],
                    "train",
                    f"{row['id']}#{n}",
                )
            )
    return out
