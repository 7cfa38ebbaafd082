"""Training pairs for the offline verifier (a MiniLM cross-encoder with a 3-class head).

Builds (premise, hypothesis, label) pairs from SciFact *train* only, plus optional SNLI/MNLI
samples; SciFact dev and test, HealthVer and the other NLI files are never used for training.

Sources of pairs (labels as in VerifAI's SciFact transformation: SUPPORT / CONTRADICT where the
cited abstract holds evidence, NO_EVIDENCE for cited abstracts without):

* ``passage``: claim + cited abstract (a window of at most ``passage_words`` words that holds
  the rationale sentences, like a retrieved chunk).
* ``rationale``: claim + its rationale sentences (SUPPORT / CONTRADICT).
* ``window_neg``: claim + 1-2 non-rationale sentences of the cited abstract (NO_EVIDENCE), so
  short premises are not all SUPPORT or CONTRADICT (the failure of the first attempt).
* ``hard_neg``: claim + the most similar sentence window of a lexically similar *uncited*
  abstract (TF-IDF cosine), NO_EVIDENCE.
* ``perturb``: claims edited the ways the VerifAI paper reports verifiers fail (numbers changed,
  direction words flipped, negation added or removed), paired with the rationale (label flipped)
  and with a non-rationale window (NO_EVIDENCE) so "contains not" never predicts a label.
  Capped: at most ``perturb_fraction`` of rationale pairs, negation at most a third of them.
* ``nli``: SNLI dev subset and MNLI dev-matched sample (entailment/contradiction/neutral).

Sources: Wadden et al. 2020 (SciFact, claims CC BY 4.0, abstracts ODC-By 1.0);
Bojic et al. 2024 (VerifAI); Bowman et al. 2015 (SNLI, CC BY-SA 4.0); Williams et al. 2018
(MultiNLI, OANC + CC BY 3.0 / CC BY-SA parts).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

LABELS = ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")


@dataclass(frozen=True, slots=True)
class Pair:
    """One training or evaluation pair.

    Attributes:
        premise: evidence text.
        hypothesis: the claim.
        label: one of ``LABELS``.
        source: which builder made it (``passage``, ``rationale``, ...).
        claim_id: SciFact claim id (-1 for NLI samples).
    """

    premise: str
    hypothesis: str
    label: str
    source: str
    claim_id: int = -1


def _int(value: object) -> int:
    """A JSON id (int or numeric string) as int."""
    if isinstance(value, int | str):
        return int(value)
    raise TypeError(f"not an id: {value!r}")


def load_corpus(path: Path) -> dict[int, tuple[str, tuple[str, ...]]]:
    """SciFact corpus: doc_id -> (title, abstract sentences)."""
    corpus: dict[int, tuple[str, tuple[str, ...]]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus[int(d["doc_id"])] = (d["title"], tuple(s.strip() for s in d["abstract"]))
    return corpus


def load_claims(path: Path) -> list[dict[str, object]]:
    """SciFact claims file (original release format), one dict per claim."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def claim_doc_label(claim: dict[str, object], doc_id: int) -> tuple[str, tuple[int, ...]]:
    """VerifAI transformation of one (claim, cited abstract): label and rationale sentence ids."""
    evidence = claim["evidence"]
    assert isinstance(evidence, dict)
    ev = evidence.get(str(doc_id))
    if not ev:
        return "NO_EVIDENCE", ()
    sents = sorted({i for e in ev for i in e["sentences"]})
    return str(ev[0]["label"]), tuple(sents)


def scifact_eval_pairs(claims_path: Path, corpus_path: Path) -> list[Pair]:
    """Claim + whole cited abstract pairs (the evaluation transformation; any split)."""
    corpus = load_corpus(corpus_path)
    pairs = []
    for claim in load_claims(claims_path):
        for doc in claim["cited_doc_ids"]:  # type: ignore[attr-defined]
            label, _ = claim_doc_label(claim, int(doc))
            _, sents = corpus[int(doc)]
            pairs.append(
                Pair(" ".join(sents), str(claim["claim"]), label, "passage", _int(claim["id"]))
            )
    return pairs


def _window_holding(sents: Sequence[str], keep: Sequence[int], max_words: int) -> str:
    """Contiguous sentences holding ``keep`` (as far as fits), at most ``max_words`` words."""
    if not keep:
        keep = [0]
    lo, hi = min(keep), max(keep)
    words = sum(len(sents[i].split()) for i in range(lo, hi + 1))
    while True:
        grown = False
        for cand in (hi + 1, lo - 1):
            if 0 <= cand < len(sents) and not (lo <= cand <= hi):
                w = len(sents[cand].split())
                if words + w <= max_words:
                    words += w
                    lo, hi = min(lo, cand), max(hi, cand)
                    grown = True
        if not grown:
            break
    return " ".join(sents[lo : hi + 1])


_DIRECTION = [
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increase", "decrease"),
    ("higher", "lower"),
    ("more", "less"),
    ("greater", "smaller"),
    ("upregulates", "downregulates"),
    ("upregulated", "downregulated"),
    ("upregulation", "downregulation"),
    ("positively", "negatively"),
    ("positive", "negative"),
    ("promotes", "inhibits"),
    ("activates", "suppresses"),
    ("enhances", "impairs"),
    ("improves", "worsens"),
    ("improved", "worsened"),
    ("raises", "lowers"),
    ("reduces", "increases"),
    ("reduced", "increased"),
    ("elevated", "reduced"),
    ("longer", "shorter"),
    ("faster", "slower"),
    ("gain", "loss"),
    ("above", "below"),
]
_DIR_MAP: dict[str, str] = {}
for _a, _b in _DIRECTION:
    _DIR_MAP.setdefault(_a, _b)
    _DIR_MAP.setdefault(_b, _a)

_NEG_ADD = [
    (r"\b(is|are|was|were|can|could|may|might|will|should|has been|have been)\b", r"\1 not"),
    (r"\bdoes\b", "does not"),
    (r"\bdo\b", "do not"),
]
_NEG_REMOVE = [
    (r"\b(is|are|was|were|can|could|may|might|will|should|does|do|did|has|have) not\b", r"\1"),
    (r"\bcannot\b", "can"),
]
# A stand-alone quantity ("25%", "3.5 mg", "in 40 patients"), not part of a name ("PD-1",
# "IL-10", "miR-142") and not a year.
_NUMBER = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=\())(\d+(?:\.\d+)?)(?=%|\s|[,;:)]|\.(?:\s|$)|$)")


def _flip_direction(claim: str) -> str | None:
    tokens = re.split(r"(\W+)", claim)
    for i, tok in enumerate(tokens):
        repl = _DIR_MAP.get(tok.lower())
        if repl:
            tokens[i] = repl.capitalize() if tok[:1].isupper() else repl
            return "".join(tokens)
    return None


def _change_number(claim: str, premise: str, rng: random.Random) -> str | None:
    for m in _NUMBER.finditer(claim):
        num = m.group(1)
        if not re.search(rf"(?<![\w.-]){re.escape(num)}(?![\w-])", premise):
            continue
        if re.fullmatch(r"(19|20)\d\d", num) or float(num) < 2:
            continue
        after = claim[m.end(1) :].lstrip()
        before = claim[: m.start(1)].split()
        if re.match(r"%\s*(CI|confidence)", after):
            continue
        if not (after.startswith("%") or after[:1].islower()):
            continue  # "Type 1 Diabetes", "kinase 3 kinase": a name, not a quantity
        if before and before[-1].lower() in {"type", "grade", "stage", "phase", "class", "group"}:
            continue
        value = float(num)
        factor = rng.choice((2.0, 3.0, 0.5, 10.0))
        new = value * factor
        text = str(int(new)) if "." not in num else f"{new:.{len(num.split('.')[1])}f}"
        if text == num:
            continue
        return claim[: m.start(1)] + text + claim[m.end(1) :]
    return None


def _toggle_negation(claim: str) -> tuple[str, bool] | None:
    """(edited claim, True if negation was added) or None when no pattern applies."""
    for pat, repl in _NEG_REMOVE:
        new, n = re.subn(pat, repl, claim, count=1)
        if n:
            return new, False
    if re.search(r"\bnot\b|\bno\b|n't\b", claim):
        return None
    for pat, repl in _NEG_ADD:
        new, n = re.subn(pat, repl, claim, count=1)
        if n:
            return new, True
    return None


_FLIP = {"SUPPORT": "CONTRADICT", "CONTRADICT": "SUPPORT"}


def build_scifact_pairs(
    claims: Iterable[dict[str, object]],
    corpus: dict[int, tuple[str, tuple[str, ...]]],
    *,
    rng: random.Random,
    passage_words: int = 140,
    perturb_fraction: float = 0.45,
    hard_negatives: bool = True,
) -> list[Pair]:
    """All SciFact-derived training pairs for the given claims (see module docstring)."""
    claims = list(claims)
    pairs: list[Pair] = []
    rationale_pairs: list[tuple[Pair, tuple[str, ...], tuple[int, ...]]] = []
    for claim in claims:
        text = str(claim["claim"])
        cid = int(claim["id"])  # type: ignore[call-overload]
        for doc in claim["cited_doc_ids"]:  # type: ignore[attr-defined]
            label, rat = claim_doc_label(claim, int(doc))
            _, sents = corpus[int(doc)]
            if not sents:
                continue
            pairs.append(
                Pair(_window_holding(sents, rat, passage_words), text, label, "passage", cid)
            )
            others = [i for i in range(len(sents)) if i not in rat]
            if rat:
                rp = Pair(" ".join(sents[i] for i in rat), text, label, "rationale", cid)
                pairs.append(rp)
                rationale_pairs.append((rp, sents, rat))
            # Short NO_EVIDENCE premises: 1-2 non-rationale sentences.
            for _ in range(1):
                if not others:
                    break
                i = rng.choice(others)
                size = rng.choice((1, 2))
                win = [j for j in range(i, min(i + size, len(sents))) if j not in rat]
                pairs.append(
                    Pair(" ".join(sents[j] for j in win), text, "NO_EVIDENCE", "window_neg", cid)
                )
    if hard_negatives:
        pairs.extend(_hard_negatives(claims, corpus, rng=rng))
    pairs.extend(_perturbations(rationale_pairs, rng=rng, fraction=perturb_fraction))
    return pairs


def _hard_negatives(
    claims: list[dict[str, object]],
    corpus: dict[int, tuple[str, tuple[str, ...]]],
    *,
    rng: random.Random,
) -> list[Pair]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    doc_ids = list(corpus)
    texts = [corpus[d][0] + " " + " ".join(corpus[d][1]) for d in doc_ids]
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2)
    mat = vec.fit_transform(texts)
    qmat = vec.transform([str(c["claim"]) for c in claims])
    sims = (qmat @ mat.T).toarray()
    out = []
    for row, claim in enumerate(claims):
        cited = {int(d) for d in claim["cited_doc_ids"]}  # type: ignore[attr-defined]
        order = sims[row].argsort()[::-1]
        pick = next(doc_ids[j] for j in order[:20] if doc_ids[j] not in cited)
        _, sents = corpus[pick]
        if not sents:
            continue
        # The sentence pair of the uncited abstract most similar to the claim: hard, short.
        svec = vec.transform(list(sents))
        best = int((svec @ qmat[row].T).toarray().ravel().argmax())
        hi = min(best + rng.choice((1, 2)), len(sents))
        out.append(
            Pair(
                " ".join(sents[best:hi]),
                str(claim["claim"]),
                "NO_EVIDENCE",
                "hard_neg",
                _int(claim["id"]),
            )
        )
    return out


def _perturbations(
    rationale_pairs: list[tuple[Pair, tuple[str, ...], tuple[int, ...]]],
    *,
    rng: random.Random,
    fraction: float,
) -> list[Pair]:
    cap = int(fraction * len(rationale_pairs))
    neg_cap = cap // 3
    order = list(rationale_pairs)
    rng.shuffle(order)
    out: list[Pair] = []
    made = n_neg = 0
    for rp, sents, rat in order:
        if made >= cap:
            break
        edited: str | None = None
        kind = rng.choice(("number", "direction", "negation"))
        for k in (kind, "number", "direction", "negation"):
            if k == "number":
                edited = _change_number(rp.hypothesis, rp.premise, rng)
            elif k == "direction":
                edited = _flip_direction(rp.hypothesis)
            elif n_neg < neg_cap:
                tog = _toggle_negation(rp.hypothesis)
                edited = tog[0] if tog else None
                if edited:
                    n_neg += 1
            if edited:
                kind = k
                edited = re.sub(r"\b([Aa])n ([^aeiouAEIOU\W])", r"\1 \2", edited)
                edited = re.sub(r"\b([Aa]) ([aeiouAEIOU])", r"\1n \2", edited)
                break
        if not edited or edited == rp.hypothesis:
            continue
        if kind == "number" and rp.label == "CONTRADICT":
            continue  # a changed number in a false claim is still false: no clean label
        new_label = _FLIP[rp.label] if kind != "number" else "CONTRADICT"
        out.append(Pair(rp.premise, edited, new_label, f"perturb_{kind}", rp.claim_id))
        others = [i for i in range(len(sents)) if i not in rat]
        if others:
            i = rng.choice(others)
            out.append(Pair(sents[i], edited, "NO_EVIDENCE", f"perturb_{kind}_ne", rp.claim_id))
        made += 1
    return out


def load_nli_pairs(path: Path) -> list[Pair]:
    """Read an NLI file (SNLI jsonl, TextFooler TSV, SICK txt or FEVER-Symmetric jsonl) as
    training pairs, through the evaluation's reader (``evaluate.verifier.load_nli``).

    Labels map to the verifier's classes: entailment/SUPPORTS -> SUPPORT,
    contradiction/REFUTES -> CONTRADICT, neutral/NOT ENOUGH INFO -> NO_EVIDENCE; SNLI rows with
    no gold label (``-``) are dropped. ``source`` names the file's family (``snli``,
    ``textfooler``, ``sick``, ``fever``).

    Raises:
        EvalDataError: file missing or without labelled pairs.
    """
    from verifai_desktop.evaluate.verifier import load_nli

    name = path.name.lower()
    source = (
        "fever"
        if "fever" in name
        else "sick"
        if "sick" in name
        else "snli"
        if name.endswith(".jsonl")
        else "textfooler"
    )
    return [Pair(p.premise, p.hypothesis, p.label.value, source) for p in load_nli(path)]


def split_claims(
    claims: list[dict[str, object]],
    *,
    held_out_fraction: float,
    seed: int,
    fold: tuple[int, int] | None = None,
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Split SciFact train claims into (training, held-out) by claim, reproducibly.

    Args:
        claims: SciFact train claims.
        held_out_fraction: share of claims held out (ignored when ``fold`` is given).
        seed: shuffling seed.
        fold: ``(i, k)`` for K-fold cross-fitting: the claims are shuffled once and cut into
            ``k`` near-equal parts; part ``i`` (0-based) is held out.

    Raises:
        ValueError: if ``fold`` is not ``0 <= i < k`` with ``k >= 2``.
    """
    rng = random.Random(seed)
    idx = list(range(len(claims)))
    rng.shuffle(idx)
    if fold is not None:
        i, k = fold
        if k < 2 or not 0 <= i < k:
            raise ValueError(f"fold must be (i, k) with k >= 2 and 0 <= i < k, got {fold}")
        held = set(idx[i::k])
    else:
        held = set(idx[: round(held_out_fraction * len(claims))])
    return (
        [c for i, c in enumerate(claims) if i not in held],
        [c for i, c in enumerate(claims) if i in held],
    )


def mine_corpus_number_pairs(
    corpus: dict[int, tuple[str, tuple[str, ...]]],
    *,
    exclude_docs: set[int],
    rng: random.Random,
    limit: int = 150,
) -> list[Pair]:
    """Quantity pairs mined from corpus sentences (the VerifAI paper's "numbers" failure mode).

    A sentence with a percentage is the premise; its clause holding the number is the
    hypothesis (SUPPORT), and the same clause with the number changed is CONTRADICT. Abstracts
    cited by dev/test claims are excluded (``exclude_docs``).
    """
    out: list[Pair] = []
    doc_ids = [d for d in corpus if d not in exclude_docs]
    rng.shuffle(doc_ids)
    for doc in doc_ids:
        if len(out) >= 2 * limit:
            break
        _, sents = corpus[doc]
        cands = [s for s in sents if "%" in s and 12 <= len(s.split()) <= 45]
        if not cands:
            continue
        sent = rng.choice(cands)
        clauses = [c.strip() for c in re.split(r";|, (?:and |but |while |whereas )", sent)]
        if len(clauses) < 2:
            continue  # the hypothesis must be a part of the premise, not a copy
        clause = next((c for c in clauses if "%" in c and len(c.split()) >= 6), None)
        if clause is None:
            continue
        clause = clause[0].upper() + clause[1:]
        if not clause.endswith("."):
            clause += "."
        changed = _change_number(clause, sent, rng)
        if not changed:
            continue
        out.append(Pair(sent, clause, "SUPPORT", "mined_number"))
        out.append(Pair(sent, changed, "CONTRADICT", "mined_number"))
    return out
