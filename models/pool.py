"""The NLI training pool (``shared/data/nli_train/``) as training stages for the verifier.

The pool holds about 120k labelled (premise, hypothesis) pairs from eight public sources, each
normalised to one JSONL file (``premise``, ``hypothesis``, ``label`` SUPPORT / CONTRADICT /
NO_EVIDENCE, ``source``, ``split``, ``id``); its README gives provenance and licences.

Two choices made here, both from the verifier v2 issue:

* **Licences.** The shipped model trains only on sources whose licence clearly allows
  distributing a model trained on them (:data:`SHIPPABLE`: SNLI, counterfactual SNLI, FEVER as
  reformatted by rte_fever, plus SciFact train); the other sources (no licence found, or one
  stated only outside the repository) go into the all-sources run, whose figures show what the
  licence rule costs.
* **Per-source class balance.** ``rte_fever`` and ``covidfact_rte`` have no NO_EVIDENCE class.
  Left alone, the model learns that FEVER-style evidence is never neutral. For such a source,
  NO_EVIDENCE pairs are made from the source's own text: each sampled hypothesis is paired with
  the most lexically similar premise (TF-IDF cosine) that belongs to another claim (a hard
  negative, the SciFact recipe of Wadden et al. 2020), as many as the mean of the source's other
  classes. Then every pair gets a weight so that within each source the three classes weigh
  the same (``n_source / (3 * n_source_label)``, normalised to mean 1 over the stage).

Training is in two stages (general NLI first, then claim-evidence pairs), and optionally a
third on perturbed sentences of licensed abstracts (issue 26), see :func:`build_stages`.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

LABELS = ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")

GENERAL_NLI = ("snli_dev_test", "cad_snli", "lingnli", "semi_auto_wiki")
"""Sentence-pair NLI sources: stage 1."""
CLAIM_EVIDENCE = ("rte_fever", "climate_fever", "covidfact_rte", "sufficient_facts")
"""Claim + evidence sources: stage 2 (with the SciFact-train pairs)."""
PERTURBATION = ("perturb_pubmedqa", "perturb_scifact")
"""Perturbed sentences of licensed abstracts (``models/perturb_data.py``): stage 3."""
PARAPHRASE = ("paraphrase_pubmedqa", "paraphrase_scifact")
"""Claims written as a chatbot words them, against licensed abstracts
(``models/paraphrase_data.py``): stage 3 instead of the perturbations."""
SHIPPABLE = frozenset(
    {"snli_dev_test", "cad_snli", "rte_fever", "scifact", *PERTURBATION, *PARAPHRASE}
)
"""Sources whose licence clearly allows shipping a model trained on them (pool README:
CC BY-SA 4.0 / Apache-2.0 / CC BY-SA 3.0; SciFact claims CC BY 4.0, abstracts ODC-By;
PubMedQA MIT)."""
DEV_HELD_BACK = frozenset({("lingnli", "dev")})
"""(source, split) kept out of training in every run: LingNLI dev is a model-selection set."""

LICENCES = {
    "snli_dev_test": "CC BY-SA 4.0 (SNLI, Bowman et al. 2015)",
    "cad_snli": "Apache-2.0 repo; SNLI CC BY-SA 4.0 (counterfactual SNLI, Kaushik et al. 2020)",
    "rte_fever": "CC BY-SA 3.0 (FEVER, Thorne et al. 2018)",
    "lingnli": "no licence found (LingNLI, Parrish et al. 2021)",
    "semi_auto_wiki": "no licence found (Wikipedia NLI; premises CC BY-SA 3.0)",
    "covidfact_rte": "no licence found (COVID-Fact, Saakyan et al. 2021)",
    "climate_fever": "no licence found (Climate-FEVER, Diggelmann et al. 2020)",
    "sufficient_facts": "MIT per the authors' dataset card (SufficientFacts, Atanasova 2022)",
    "scifact": "CC BY 4.0 claims, ODC-By 1.0 abstracts (SciFact train, Wadden et al. 2020)",
    "perturb_scifact": "ODC-By 1.0 abstracts (SciFact corpus, Wadden et al. 2020), sentences "
    "perturbed by verifai_desktop.verify.perturb",
    "perturb_pubmedqa": "MIT (PubMedQA PQA-L abstracts, Jin et al. 2019; repository LICENSE), "
    "sentences perturbed by verifai_desktop.verify.perturb",
    "paraphrase_scifact": "ODC-By 1.0 abstracts (SciFact corpus, Wadden et al. 2020); claims "
    "written for this project (models/data/paraphrase_train.jsonl)",
    "paraphrase_pubmedqa": "MIT (PubMedQA PQA-L abstracts, Jin et al. 2019); claims written for "
    "this project (models/data/paraphrase_train.jsonl)",
}


@dataclass(frozen=True, slots=True)
class PoolPair:
    """One training pair.

    Attributes:
        premise: evidence text.
        hypothesis: the claim.
        label: one of :data:`LABELS`.
        source: pool source name (``rte_fever``), or ``scifact``.
        split: the source's own split (``train`` / ``dev`` / ``test``).
        pair_id: the source's id; synthesised pairs end in ``#ne``.
        weight: loss weight (per-source class balance), mean 1 over a stage.
    """

    premise: str
    hypothesis: str
    label: str
    source: str
    split: str = "train"
    pair_id: str = ""
    weight: float = 1.0


def load_source(pool_dir: Path, source: str) -> list[PoolPair]:
    """Read ``<pool_dir>/<source>.jsonl``.

    Raises:
        FileNotFoundError: the file is missing.
        ValueError: a line has a label outside :data:`LABELS` or empty text.
    """
    return load_jsonl(Path(pool_dir) / f"{source}.jsonl", source)


def load_jsonl(path: Path, source: str) -> list[PoolPair]:
    """Read pairs in the pool's JSONL format (``premise``, ``hypothesis``, ``label``, and
    optionally ``source``, ``split``, ``id``): a pool source, or readers' judgements written
    by ``verifai feedback export``.

    Args:
        path: the file.
        source: source name for lines without one.

    Raises:
        FileNotFoundError: the file is missing.
        ValueError: a line has a label outside :data:`LABELS` or empty text.
    """
    path = Path(path)
    out: list[PoolPair] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            d = json.loads(line)
            label = str(d["label"])
            if label not in LABELS or not d["premise"] or not d["hypothesis"]:
                raise ValueError(f"{path}:{n}: bad pair (label {label!r})")
            out.append(
                PoolPair(
                    str(d["premise"]),
                    str(d["hypothesis"]),
                    label,
                    str(d.get("source", source)),
                    str(d.get("split", "train")),
                    str(d.get("id", f"{source}:{n}")),
                )
            )
    return out


def synthesise_no_evidence(
    pairs: Sequence[PoolPair], count: int, *, rng: random.Random
) -> list[PoolPair]:
    """NO_EVIDENCE pairs for a source that has none: hypothesis + a similar foreign premise.

    Each sampled hypothesis is paired with the premise, among those of *other* hypotheses, with
    the highest TF-IDF cosine to it (a lexical hard negative); the premise must not also be a
    premise of the same hypothesis elsewhere in the source.

    Args:
        pairs: the source's pairs (SUPPORT / CONTRADICT).
        count: how many to make (at most one per distinct hypothesis).
        rng: sampling order.

    Returns:
        Up to ``count`` pairs labelled NO_EVIDENCE, ids ``<id>#ne``.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    premises = sorted({p.premise for p in pairs})
    own: dict[str, set[str]] = defaultdict(set)
    first: dict[str, PoolPair] = {}
    for p in pairs:
        own[p.hypothesis].add(p.premise)
        first.setdefault(p.hypothesis, p)
    hyps = sorted(own)
    rng.shuffle(hyps)
    hyps = hyps[:count]
    if not hyps or len(premises) < 2:
        return []
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=1)
    pm = vec.fit_transform(premises)
    hm = vec.transform(hyps)
    out: list[PoolPair] = []
    for s in range(0, len(hyps), 512):
        sims = (hm[s : s + 512] @ pm.T).toarray()
        for r, hyp in enumerate(hyps[s : s + 512]):
            for j in sims[r].argsort()[::-1][:8]:
                if premises[j] not in own[hyp]:
                    src = first[hyp]
                    out.append(
                        replace(src, premise=premises[j], label="NO_EVIDENCE",
                                pair_id=f"{src.pair_id}#ne")
                    )  # fmt: skip
                    break
    return out


def balance_source(pairs: Sequence[PoolPair], *, rng: random.Random) -> list[PoolPair]:
    """Fill a missing NO_EVIDENCE class (see module docstring) and weight classes equally.

    Returns:
        The source's pairs (plus synthesised ones), each with ``weight`` such that the three
        classes have equal total weight within the source.
    """
    pairs = list(pairs)
    counts = Counter(p.label for p in pairs)
    if counts["NO_EVIDENCE"] == 0 and pairs:
        present = [counts[lab] for lab in LABELS if counts[lab]]
        pairs += synthesise_no_evidence(pairs, round(sum(present) / len(present)), rng=rng)
    return class_weights(pairs)


def class_weights(pairs: Sequence[PoolPair]) -> list[PoolPair]:
    """The pairs of one source, each with ``weight`` such that every class present has the
    same total weight (``n_source / (n_classes_present * n_source_label)``, mean 1)."""
    counts = Counter(p.label for p in pairs)
    n_labels = sum(1 for lab in LABELS if counts[lab])
    return [replace(p, weight=len(pairs) / (n_labels * counts[p.label])) for p in pairs]


def normalise_weights(pairs: Sequence[PoolPair]) -> list[PoolPair]:
    """Scale weights to mean 1 (the loss keeps its scale whatever the mix)."""
    if not pairs:
        return []
    mean = sum(p.weight for p in pairs) / len(pairs)
    return [replace(p, weight=p.weight / mean) for p in pairs]


@dataclass(frozen=True, slots=True)
class Stage:
    """One training stage: its pairs and schedule.

    Attributes:
        name: ``general_nli``, ``claim_evidence`` or ``perturbation``.
        pairs: the training pairs (weights set).
        epochs: passes over ``pairs``.
        lr: peak learning rate (linear warm-up over 6 % of the stage's steps, then linear decay).
        max_len: tokens per pair (premise truncated first).
    """

    name: str
    pairs: tuple[PoolPair, ...]
    epochs: int
    lr: float
    max_len: int


def source_pairs(
    pool_dir: Path, sources: Iterable[str], *, rng: random.Random
) -> dict[str, list[PoolPair]]:
    """Each source's trainable pairs, balanced (dev sets of :data:`DEV_HELD_BACK` left out)."""
    out: dict[str, list[PoolPair]] = {}
    for source in sources:
        pairs = [p for p in load_source(pool_dir, source) if (source, p.split) not in DEV_HELD_BACK]
        out[source] = balance_source(pairs, rng=rng)
    return out


def build_stages(
    pool_dir: Path,
    *,
    licensed_only: bool,
    scifact_pairs: Sequence[PoolPair] = (),
    seed: int = 13,
    replay_fraction: float = 0.15,
    epochs: tuple[int, ...] = (1, 2, 1),
    lrs: tuple[float, ...] = (5e-5, 3e-5, 2e-5),
    max_lens: tuple[int, ...] = (128, 192, 192),
    limit_per_source: int | None = None,
    extra_pairs: Sequence[PoolPair] = (),
    stage3_pairs: Sequence[PoolPair] = (),
    stage3_replay: float = 1.0,
) -> tuple[Stage, ...]:
    """The training stages of a run: two, or three when ``stage3_pairs`` are given.

    Stage 1, general NLI (:data:`GENERAL_NLI`); stage 2, claim + evidence pairs
    (:data:`CLAIM_EVIDENCE` and ``scifact_pairs``) plus a replay sample of stage 1
    (``replay_fraction`` of stage 1's size) so general NLI is not forgotten; stage 3,
    ``perturbation``, the perturbation pairs (``models/perturb_data.py``) plus a replay sample
    of stage 2 (``stage3_replay`` pairs of stage 2 per perturbation pair) so claim + evidence
    is not forgotten. Stages 1 and 2 do not depend on stage 3: a run without it is the very
    same as before stage 3 existed.

    Args:
        pool_dir: the pool folder.
        licensed_only: keep only :data:`SHIPPABLE` sources (the shipped model).
        scifact_pairs: SciFact-train-derived pairs (``models/verifier_data.py``), source
            ``scifact``; balanced like a pool source.
        seed: sampling seed (synthesised pairs, replay samples).
        replay_fraction: share of stage 1 replayed in stage 2.
        epochs, lrs, max_lens: per stage; the third values (default 1 epoch, lr 2e-5, 192
            tokens) are used by stage 3 only and needed only with ``stage3_pairs``.
        limit_per_source: keep at most this many pairs per source (tests, smoke runs); never
            cuts ``stage3_pairs``.
        extra_pairs: further claim + evidence pairs (``--extra``: e.g. readers' judgements
            from ``verifai feedback export``), added to stage 2 as source ``extra``, balanced
            like a pool source, never cut by ``limit_per_source``.
        stage3_pairs: perturbation pairs (sources :data:`PERTURBATION`; the stage is named
            ``perturbation``) or paraphrase claims (:data:`PARAPHRASE`; ``paraphrase``), each
            source's classes weighted equally (:func:`class_weights`; NO_EVIDENCE is the aim
            kind, never synthesised); empty: no stage 3.
        stage3_replay: stage-2 pairs replayed in stage 3 per perturbation pair (at most all
            of stage 2).

    Returns:
        ``(general_nli, claim_evidence)`` or ``(general_nli, claim_evidence, perturbation)``.

    Raises:
        ValueError: ``stage3_pairs`` given with fewer than three values in ``epochs``, ``lrs``
            or ``max_lens``.
    """
    if stage3_pairs and min(len(epochs), len(lrs), len(max_lens)) < 3:  # before the work
        raise ValueError("stage 3 needs a third value in epochs, lrs and max_lens")
    rng = random.Random(seed)

    def keep(names: Sequence[str]) -> list[str]:
        return [s for s in names if not licensed_only or s in SHIPPABLE]

    def cut(pairs: list[PoolPair]) -> list[PoolPair]:
        if limit_per_source is None or len(pairs) <= limit_per_source:
            return pairs
        return rng.sample(pairs, limit_per_source)

    general = source_pairs(pool_dir, keep(GENERAL_NLI), rng=rng)
    claims = source_pairs(pool_dir, keep(CLAIM_EVIDENCE), rng=rng)
    if scifact_pairs:
        claims["scifact"] = balance_source(scifact_pairs, rng=rng)
    s1 = [p for name in sorted(general) for p in cut(general[name])]
    s2 = [p for name in sorted(claims) for p in cut(claims[name])]
    if extra_pairs:
        s2 += balance_source(extra_pairs, rng=rng)
    replay = rng.sample(s1, min(len(s1), round(replay_fraction * len(s1))))
    stages = (
        Stage("general_nli", tuple(normalise_weights(s1)), epochs[0], lrs[0], max_lens[0]),
        Stage(
            "claim_evidence", tuple(normalise_weights(s2 + replay)), epochs[1], lrs[1],
            max_lens[1],
        ),
    )  # fmt: skip
    if not stage3_pairs:
        return stages
    by_source: dict[str, list[PoolPair]] = defaultdict(list)
    for p in stage3_pairs:
        by_source[p.source].append(p)
    s3 = [p for name in sorted(by_source) for p in class_weights(by_source[name])]
    s2_all = stages[1].pairs
    replay3 = rng.sample(s2_all, min(len(s2_all), round(stage3_replay * len(s3))))
    s3 = normalise_weights(s3 + replay3)
    name = "paraphrase" if set(by_source) <= set(PARAPHRASE) else "perturbation"
    return (*stages, Stage(name, tuple(s3), epochs[2], lrs[2], max_lens[2]))


def describe(stages: Sequence[Stage]) -> dict[str, object]:
    """Counts per stage, source and label (for ``train_info.json`` and the model card)."""
    out: dict[str, object] = {}
    for st in stages:
        by_source: dict[str, Counter[str]] = defaultdict(Counter)
        for p in st.pairs:
            by_source[p.source][p.label] += 1
        out[st.name] = {
            "pairs": len(st.pairs),
            "epochs": st.epochs,
            "lr": st.lr,
            "max_len": st.max_len,
            "synthesised_no_evidence": sum(p.pair_id.endswith("#ne") for p in st.pairs),
            "sources": {s: dict(c) for s, c in sorted(by_source.items())},
        }
    return out
