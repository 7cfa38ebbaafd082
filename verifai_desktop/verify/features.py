"""Contradiction features and the small calibrated layer that combines them with the model.

Features of a (premise, hypothesis) pair that the seed papers found to matter for
contradictions a small NLI model misses:

* negation cues, NegEx-style (Chapman et al. 2001): a cue list (``no``, ``not``, ``without``,
  ``absence of``, ``failed to`` ...) counted in claim and premise, and their mismatch;
* number and unit mismatches (VerifAI, Bojic et al. 2024, "numbers and quantities changed"):
  a quantity of the claim whose unit the premise uses with other values only;
* direction-word conflicts (increase/decrease, higher/lower, promotes/inhibits ...);
* lexical overlap of the claim's content words with the premise (evidence present at all).

The layer is a multinomial logistic regression on ``[log P(model), features]``: weights
(3, d), bias (3,), feature mean and scale, stored as JSON in ``verifier.json`` and applied here
in numpy. It is fitted on SciFact *train* claims the scoring model never trained on (a held-out
share, or every train claim by K-fold cross-fitting: Wolpert 1992 stacking) and chosen on
SciFact dev and HealthVer dev (``models/calibrate_verifier.py``; fitting in
``models/fitting.py``).

A :class:`RoutedFeatureLayer` holds two such layers, one for short premises (sentence windows,
evidence sentences) and one for whole passages, chosen per pair by the premise's word count:
the model's probabilities mean different things for a 30-word sentence and a 250-word abstract.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

FEATURE_NAMES: tuple[str, ...] = (
    "log_p_support", "log_p_contradict", "log_p_no_evidence",
    "neg_claim", "neg_premise", "neg_mismatch",
    "number_mismatch", "number_match", "direction_conflict", "direction_agree",
    "overlap", "premise_tokens_log",
)  # fmt: skip

_NEG_CUES = re.compile(
    r"\b(?:no|not|never|none|neither|nor|without|cannot|can't|won't|isn't|aren't|wasn't|"
    r"weren't|doesn't|don't|didn't|absence of|absent|lack of|lacks|lacking|fail(?:s|ed)? to|"
    r"unable to|ruled out|free of|negative for|denie[sd]|no longer|not associated|"
    r"no significant|non-significant|nonsignificant|insignificant|unaffected|unchanged)\b",
    re.IGNORECASE,
)
_UP = frozenset((
    "increase", "increases", "increased", "increasing", "higher", "more", "greater",
    "elevated", "elevation", "upregulated", "upregulates", "upregulation", "enhance",
    "enhances", "enhanced", "promote", "promotes", "promoted", "improve", "improves",
    "improved", "raise", "raises", "raised", "gain", "gains", "rise", "rises", "rose",
    "positively", "activates", "activated", "activation", "stimulates", "stimulated",
    "accelerates", "accelerated", "longer", "larger", "faster", "exacerbates", "worsened",
))  # fmt: skip
_DOWN = frozenset((
    "decrease", "decreases", "decreased", "decreasing", "lower", "less", "fewer", "smaller",
    "reduced", "reduces", "reduce", "reduction", "downregulated", "downregulates",
    "downregulation", "inhibit", "inhibits", "inhibited", "inhibition", "suppress",
    "suppresses", "suppressed", "impairs", "impaired", "lowers", "lowered", "loss",
    "decline", "declined", "diminish", "diminished", "negatively", "attenuates",
    "attenuated", "slower", "shorter", "prevents", "prevented", "blocks", "blocked",
))  # fmt: skip
_QUANTITY = re.compile(
    r"(?<![\w.-])(\d+(?:[.,]\d+)?)\s*(%|percent|mg|g|kg|ml|l|mmol|nmol|µg|ug|mcg|iu|years?|"
    r"months?|weeks?|days?|hours?|h|min|fold|times|patients|participants|subjects|cases|"
    r"children|women|men|people|adults)?(?![\w])",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset((
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and",
    "or", "is", "are", "was", "were", "be", "been", "being", "that", "this", "these",
    "those", "it", "its", "as", "not", "no", "than", "then", "into", "over", "under",
    "between", "among", "during", "after", "before", "have", "has", "had", "do", "does",
    "did", "can", "could", "may", "might", "will", "would", "should", "which", "who",
    "whom", "whose", "what", "when", "where", "there", "their", "they", "them", "we", "our",
    "you", "your", "he", "she", "his", "her",
))  # fmt: skip


def _negations(text: str) -> int:
    return len(_NEG_CUES.findall(text))


def _directions(text: str) -> tuple[int, int]:
    words = _WORD.findall(text.lower())
    return sum(w in _UP for w in words), sum(w in _DOWN for w in words)


def _quantities(text: str) -> list[tuple[float, str]]:
    out = []
    for m in _QUANTITY.finditer(text):
        try:
            value = float(m.group(1).replace(",", ""))
        except ValueError:
            continue
        if 1900 <= value <= 2100 and not m.group(2):
            continue  # a year
        unit = (m.group(2) or "").lower().rstrip("s")
        out.append((value, "%" if unit == "percent" else unit))
    return out


def pair_features(premise: str, hypothesis: str) -> list[float]:
    """Hand-made features of one pair (everything in :data:`FEATURE_NAMES` after the logs)."""
    neg_c, neg_p = _negations(hypothesis), _negations(premise)
    cq, pq = _quantities(hypothesis), _quantities(premise)
    p_values = {v for v, _ in pq}
    p_units = {u for _, u in pq if u}
    mismatch = match = 0.0
    for value, unit in cq:
        if value in p_values:
            match = 1.0
        elif pq and (not unit or unit in p_units):
            mismatch = 1.0
    cu, cd = _directions(hypothesis)
    pu, pd = _directions(premise)
    conflict = float((cu > 0 and pd > 0 and pu == 0) or (cd > 0 and pu > 0 and pd == 0))
    agree = float((cu > 0 and pu > 0) or (cd > 0 and pd > 0))
    c_words = {w for w in _WORD.findall(hypothesis.lower()) if w not in _STOP}
    p_words = set(_WORD.findall(premise.lower()))
    overlap = len(c_words & p_words) / len(c_words) if c_words else 0.0
    return [
        float(min(neg_c, 2)),
        float(min(neg_p, 3)),
        float((neg_c > 0) != (neg_p > 0)),
        mismatch,
        match,
        conflict,
        agree,
        overlap,
        float(np.log1p(len(premise.split()))),
    ]


def feature_matrix(
    probs: NDArray[np.float32], pairs: Sequence[tuple[str, str]]
) -> NDArray[np.float64]:
    """Features for the layer, float64, shape (n, len(FEATURE_NAMES)).

    Args:
        probs: model probabilities, shape (n, 3), columns SUPPORT, CONTRADICT, NO_EVIDENCE.
        pairs: the (premise, hypothesis) pairs they belong to.
    """
    logs = np.log(np.clip(np.asarray(probs, dtype=np.float64), 1e-6, 1.0))
    hand = np.array([pair_features(p, h) for p, h in pairs], dtype=np.float64)
    hand = hand.reshape(len(pairs), len(FEATURE_NAMES) - 3)
    return np.concatenate([logs, hand], axis=1)


@dataclass(frozen=True, slots=True)
class FeatureLayer:
    """Multinomial logistic layer over model log-probabilities and pair features.

    Attributes:
        weights: shape (3, d) as nested tuples, rows in label order.
        bias: shape (3,).
        mean: feature means, shape (d,), subtracted before the weights.
        scale: feature standard deviations, shape (d,).
        feature_names: the feature order (must equal :data:`FEATURE_NAMES`).
    """

    weights: tuple[tuple[float, ...], ...]
    bias: tuple[float, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    feature_names: tuple[str, ...] = FEATURE_NAMES

    def apply(
        self, probs: NDArray[np.float32], pairs: Sequence[tuple[str, str]]
    ) -> NDArray[np.float32]:
        """Calibrated probabilities, float32, shape (n, 3), same column order as ``probs``."""
        x = (feature_matrix(probs, pairs) - np.asarray(self.mean)) / np.asarray(self.scale)
        z: NDArray[np.float64] = x @ np.asarray(self.weights).T + np.asarray(self.bias)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        out: NDArray[np.float32] = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored under ``feature_layer`` in ``verifier.json``)."""
        return {
            "kind": "logistic",
            "weights": [list(r) for r in self.weights],
            "bias": list(self.bias),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "feature_names": list(self.feature_names),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FeatureLayer:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: the stored feature order differs from this version's features.
        """
        names = tuple(data.get("feature_names", FEATURE_NAMES))
        if names != FEATURE_NAMES:
            raise ValueError(
                f"feature layer was fitted on features {names}, "
                f"this version computes {FEATURE_NAMES}"
            )
        return cls(
            weights=tuple(tuple(float(v) for v in row) for row in data["weights"]),
            bias=tuple(float(v) for v in data["bias"]),
            mean=tuple(float(v) for v in data["mean"]),
            scale=tuple(float(v) for v in data["scale"]),
        )


# Premises of at most this many words go to the short-premise layer: sentence windows are 1-3
# sentences (about 25 words each in SciFact / HealthVer), whole abstracts are longer (5th
# percentile of SciFact dev abstracts: 111 words; 95th percentile of HealthVer evidence: 70).
SHORT_PREMISE_MAX_WORDS = 100


def short_premise_mask(
    premises: Sequence[str], max_words: int = SHORT_PREMISE_MAX_WORDS
) -> NDArray[np.bool_]:
    """Which premises count as short (at most ``max_words`` whitespace words), shape (n,)."""
    return np.array([len(p.split()) <= max_words for p in premises], dtype=bool)


@dataclass(frozen=True, slots=True)
class RoutedFeatureLayer:
    """Two feature layers routed by premise length.

    Attributes:
        short: layer for premises of at most ``max_short_words`` words.
        long: layer for longer premises (whole passages).
        max_short_words: the routing threshold, in whitespace-separated words.
    """

    short: FeatureLayer
    long: FeatureLayer
    max_short_words: int = SHORT_PREMISE_MAX_WORDS

    def apply(
        self, probs: NDArray[np.float32], pairs: Sequence[tuple[str, str]]
    ) -> NDArray[np.float32]:
        """Calibrated probabilities, float32, shape (n, 3), same column order as ``probs``."""
        out = np.empty((len(pairs), 3), dtype=np.float32)
        is_short = short_premise_mask([p for p, _ in pairs], self.max_short_words)
        for layer, mask in ((self.short, is_short), (self.long, ~is_short)):
            idx = np.flatnonzero(mask)
            if len(idx):
                out[idx] = layer.apply(probs[idx], [pairs[int(i)] for i in idx])
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored under ``feature_layer`` in ``verifier.json``)."""
        return {
            "kind": "routed",
            "max_short_words": self.max_short_words,
            "short": self.short.to_dict(),
            "long": self.long.to_dict(),
        }


def feature_layer_from_dict(data: Mapping[str, Any]) -> FeatureLayer | RoutedFeatureLayer:
    """The layer stored under ``feature_layer`` in ``verifier.json``, either kind.

    Raises:
        ValueError: an unknown ``kind``, or features that differ from this version's.
    """
    kind = data.get("kind", "logistic")
    if kind == "logistic":
        return FeatureLayer.from_dict(data)
    if kind == "routed":
        return RoutedFeatureLayer(
            short=FeatureLayer.from_dict(data["short"]),
            long=FeatureLayer.from_dict(data["long"]),
            max_short_words=int(data["max_short_words"]),
        )
    raise ValueError(f"unknown feature layer kind {kind!r} (expected 'logistic' or 'routed')")
