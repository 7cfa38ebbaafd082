"""Stage-3 training pairs: perturbed sentences of texts whose licence allows shipping a model.

Issue 26, item 3: a changed figure, two swapped items, a negation inserted or removed and a
statement of aim are the verifier's blind spots. Stage 3 of ``train_verifier.py`` trains on
the pairs :mod:`verifai_desktop.verify.perturb` makes from real abstracts, labelled by kind
(:data:`~verifai_desktop.verify.perturb.GOLD`): the sentence as written -> SUPPORT; a figure
swapped or changed, two items swapped, a negation inserted or removed -> CONTRADICT; the
sentence restated as an aim -> NO_EVIDENCE. The premise is one of the app's sentence windows
(:func:`verifai_desktop.verify.check.premise_windows`, 1 to 3 consecutive sentences) that
holds the sentence (for an aim, the statement of aim), chosen at random: the premises the app
checks a sentence against.

Texts (their licences are ``pool.LICENCES`` entries of the same names):

* ``perturb_scifact``: SciFact corpus abstracts (ODC-By 1.0) cited by SciFact *train* claims,
  never by a dev or test claim, never by a claim the run holds out for calibration
  (``OUT/held_out_claim_ids.json``), and never in the self-check dev part: the train-cited
  abstracts are split once by a hash of the doc id (:func:`is_self_check_dev`), and
  ``models/self_check_dev.py`` and ``models/second_opinion_dev.py`` measure on the dev part
  only (:func:`self_check_dev_abstracts`), which is never trained on.
* ``perturb_pubmedqa``: PubMedQA PQA-L abstracts (``ori_pqal.json``, MIT, its CONTEXTS joined
  as ``verifai eval answers`` indexes them) except those of the first
  :data:`PUBMEDQA_KEPT_OUT` questions in file order: the first 40 are the reported set of the
  README, 41-100 are used for choices (``benchmarks/answer_prompt.py``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import pool as pl

from verifai_desktop.evaluate.pubmedqa import load_pubmedqa, to_document
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.check import premise_windows
from verifai_desktop.verify.perturb import PerturbKind, PerturbPair, sample_pairs

SELF_CHECK_DEV_PERCENT = 50
"""Share (percent) of the train-cited SciFact abstracts kept for the self-check dev part."""
PUBMEDQA_KEPT_OUT = 100
"""PubMedQA questions (file order) whose abstracts are never trained on: 40 reported, 60 dev."""
SCIFACT_PREFIX = "scifact:"
PUBMEDQA_PREFIX = "pubmedqa:"


def is_self_check_dev(doc_id: int) -> bool:
    """Whether a SciFact abstract is in the self-check dev part (never trained on).

    A fixed split by the SHA-256 of the decimal doc id (Python's ``hash`` is salted per
    process): the same abstracts in every run and every session.
    """
    digest = hashlib.sha256(str(doc_id).encode()).hexdigest()
    return int(digest[:8], 16) % 100 < SELF_CHECK_DEV_PERCENT


def _cited(path: Path, claim_ids: Collection[int] | None = None) -> set[int]:
    """Doc ids cited by the claims of a SciFact claims file (only ``claim_ids`` when given)."""
    out: set[int] = set()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                claim = json.loads(line)
                if claim_ids is None or int(claim["id"]) in claim_ids:
                    out.update(int(d) for d in claim.get("cited_doc_ids", ()))
    return out


def train_cited_abstracts(sci: Path) -> dict[int, str]:
    """SciFact abstracts cited by train claims and by no dev or test claim.

    Args:
        sci: ``shared/data/scifact/original`` (``claims_{train,dev,test}.jsonl``,
            ``corpus.jsonl``).

    Returns:
        doc id -> abstract (its sentences joined by spaces), in corpus order.
    """
    keep = _cited(sci / "claims_train.jsonl")
    keep -= _cited(sci / "claims_dev.jsonl") | _cited(sci / "claims_test.jsonl")
    out: dict[int, str] = {}
    with (sci / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if int(d["doc_id"]) in keep:
                out[int(d["doc_id"])] = " ".join(s.strip() for s in d["abstract"])
    return out


def self_check_dev_abstracts(sci: Path) -> list[tuple[str, str]]:
    """(doc id, abstract) of the self-check dev part of :func:`train_cited_abstracts`."""
    return [(str(d), t) for d, t in train_cited_abstracts(sci).items() if is_self_check_dev(d)]


def scifact_training_abstracts(
    sci: Path, held_out_claim_ids: Collection[int]
) -> list[tuple[str, str]]:
    """``("scifact:<doc id>", abstract)`` that stage 3 may train on.

    The train-cited abstracts (:func:`train_cited_abstracts`) outside the self-check dev part
    and not cited by any of ``held_out_claim_ids`` (the run's calibration claims).
    """
    held = _cited(sci / "claims_train.jsonl", set(held_out_claim_ids))
    return [
        (f"{SCIFACT_PREFIX}{d}", t)
        for d, t in train_cited_abstracts(sci).items()
        if not is_self_check_dev(d) and d not in held
    ]


def pubmedqa_training_abstracts(path: Path) -> list[tuple[str, str]]:
    """``("pubmedqa:<pmid>", abstract)`` of PQA-L after the first :data:`PUBMEDQA_KEPT_OUT`.

    Raises:
        DatasetError: ``path`` is not PubMedQA's ``ori_pqal.json``.
    """
    items = load_pubmedqa(path)[PUBMEDQA_KEPT_OUT:]
    return [(f"{PUBMEDQA_PREFIX}{it.pmid}", to_document(it).text) for it in items]


def _window(pair: PerturbPair, text: str, rng: random.Random) -> str | None:
    """A sentence window of the app that holds the pair's sentence (or its statement of aim).

    Args:
        pair: a pair made from ``text``.
        text: the passage as given to :func:`~verifai_desktop.verify.perturb.sample_pairs`.
        rng: picks one of the windows.

    Returns:
        The window's text, or None when the sentence is not found again (never expected).
    """
    spans = split_sentences(text)
    start = next((a for a, b in spans if text[a:b] == pair.original), None)
    if start is None:
        return None
    end = start + len(pair.original)
    premise = text
    if pair.kind is PerturbKind.AIM:  # the aim stands where the sentence stood
        premise = pair.premise
        end += len(premise) - len(text)
        spans = split_sentences(premise)
    holding = [(a, b) for a, b in premise_windows(premise, "sentences", spans)
               if a <= start and end <= b]  # fmt: skip
    if not holding:
        return None
    a, b = rng.choice(holding)
    return premise[a:b]


def perturbation_pairs(
    passages: Sequence[tuple[str, str]], *, n_per_kind: int, seed: int
) -> list[pl.PoolPair]:
    """Stage-3 pairs from ``passages`` (see the module docstring).

    Args:
        passages: ``(source id, text)``; ids start with ``scifact:`` or ``pubmedqa:``, which
            name the pair's source (``perturb_scifact`` / ``perturb_pubmedqa``).
        n_per_kind: at most this many pairs of each :class:`PerturbKind` in all
            (:func:`~verifai_desktop.verify.perturb.sample_pairs`, one per passage and kind).
        seed: the sampling seed; the same passages and seed give the same pairs.

    Returns:
        Pairs with the gold label of their kind, ``split`` ``train``, ``pair_id``
        ``<source id>#<kind>``, weight 1.

    Raises:
        ValueError: a source id has neither prefix.
    """
    bad = [s for s, _ in passages if not s.startswith((SCIFACT_PREFIX, PUBMEDQA_PREFIX))]
    if bad:
        raise ValueError(f"source id {bad[0]!r}: expected scifact:<doc id> or pubmedqa:<pmid>")
    texts = dict(passages)
    out: list[pl.PoolPair] = []
    for pair in sample_pairs(passages, n_per_kind=n_per_kind, seed=seed):
        prefix = pair.source.split(":", 1)[0]
        rng = random.Random(f"{seed}:{pair.source}:{pair.kind.value}")
        premise = _window(pair, texts[pair.source], rng)
        if premise is not None:
            pair_id = f"{pair.source}#{pair.kind.value}"
            source = f"perturb_{prefix}"
            out.append(
                pl.PoolPair(premise, pair.hypothesis, pair.label.value, source, "train", pair_id)
            )
    return out


def stage3_pairs(
    data: Path, *, n_per_kind: int, held_out_claim_ids: Iterable[int], seed: int
) -> list[pl.PoolPair]:
    """The stage-3 pairs of a run: :func:`perturbation_pairs` of the licensed texts.

    Args:
        data: the shared data folder (``scifact/original``, ``pubmedqa/ori_pqal.json``).
        n_per_kind: the most pairs of each kind, SciFact and PubMedQA together.
        held_out_claim_ids: the run's held-out SciFact train claims; their abstracts are left out.
        seed: the sampling seed.

    Raises:
        FileNotFoundError: a data file is missing.
        DatasetError: ``ori_pqal.json`` is unreadable.
    """
    passages = scifact_training_abstracts(data / "scifact" / "original", set(held_out_claim_ids))
    passages += pubmedqa_training_abstracts(data / "pubmedqa" / "ori_pqal.json")
    return perturbation_pairs(passages, n_per_kind=n_per_kind, seed=seed)
