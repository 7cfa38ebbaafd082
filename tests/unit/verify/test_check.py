"""The one verification path: premise windows, the deciding window, one batch.

Control flow uses a scripted fake verifier; the deciding-window test uses the real bundled
verifier. That the app (AskSession) and `verifai eval verifier` get identical probabilities
from this path is tested in tests/unit/test_pipeline.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from verifai_desktop.domain import (
    ChunkId,
    Claim,
    DocId,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    ShownLabel,
)
from verifai_desktop.evaluate.verifier import LexicalOverlapVerifier, evaluate_pairs, load_scifact
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.check import (
    LABEL_ORDER,
    NO_WORD_IN_COMMON,
    deciding_window,
    premise_windows,
    verify_claims,
    verify_pairs,
)
from verifai_desktop.verify.checks import NO_CHECKS
from verifai_desktop.verify.nli import OnnxVerifier, get_verifier

TEXT = "Cats sleep. Dogs bark. Birds sing."
SPANS = ((0, 11), (12, 22), (23, 34))


class ScriptedVerifier:
    """Probabilities looked up by premise; NO_EVIDENCE for any other premise."""

    def __init__(self, by_premise: dict[str, tuple[float, float, float]]) -> None:
        self.by_premise = by_premise
        self.batches: list[list[tuple[str, str]]] = []

    def load(self) -> None:
        """Nothing to load."""

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        self.batches.append(list(pairs))
        rows = [self.by_premise.get(premise, (0.1, 0.1, 0.8)) for premise, _ in pairs]
        return np.asarray(rows, dtype=np.float32).reshape(len(pairs), 3)


def _passage(n: int, text: str, spans: tuple[tuple[int, int], ...] = ()) -> Passage:
    where = Location(LocationKind.SECTION)
    return Passage(ChunkId(n), DocId(n), Path(f"/d{n}.txt"), "", text, 0, len(text), where, spans)


# -- control flow (fake verifier) ------------------------------------------------------------


def test_premise_windows() -> None:
    assert premise_windows(TEXT, "passage", SPANS) == ((0, len(TEXT)),)
    assert premise_windows(TEXT, "sentences", SPANS)[:3] == SPANS
    assert len(premise_windows(TEXT, "sentences", SPANS)) == 6
    assert premise_windows("", "sentences") == ((0, 0),)
    with pytest.raises(ValueError, match="granularity"):
        premise_windows(TEXT, "words")  # type: ignore[arg-type]


def test_deciding_window_is_the_strongest_support_or_contradiction_first_on_ties() -> None:
    probs = np.array(
        [[0.1, 0.1, 0.8], [0.2, 0.7, 0.1], [0.7, 0.2, 0.1], [0.0, 0.0, 1.0]], dtype=np.float32
    )
    assert deciding_window(probs) == 1  # the contradiction at 0.7 comes first
    assert deciding_window(probs[[0, 3]]) == 0  # NO_EVIDENCE strength is not evidence


def test_every_window_of_every_item_goes_in_one_batch_and_the_deciding_one_is_kept() -> None:
    verifier = ScriptedVerifier({"Dogs bark.": (0.05, 0.9, 0.05), "Birds sing.": (0.8, 0.1, 0.1)})
    result = verify_pairs(
        verifier,
        [(TEXT, "Dogs are quiet."), (TEXT, "Birds sing."), ("Nothing here.", "Fish swim.")],
        granularity="sentences",
        sentence_spans=[SPANS, SPANS, None],
        checks=NO_CHECKS,
    )
    assert len(verifier.batches) == 1
    batch = verifier.batches[0]
    assert len(batch) == 6 + 6 + 1
    assert batch[0] == ("Cats sleep.", "Dogs are quiet.") and batch[-1] == (
        "Nothing here.",
        "Fish swim.",
    )
    assert result.spans == ((12, 22), (12, 22), (0, 13))
    np.testing.assert_array_equal(
        result.probs,
        np.array([[0.05, 0.9, 0.05], [0.05, 0.9, 0.05], [0.1, 0.1, 0.8]], dtype=np.float32),
    )
    assert result.probs.dtype == np.float32


def test_windows_sharing_no_content_word_are_no_evidence_without_the_verifier() -> None:
    verifier = ScriptedVerifier({"Dogs bark.": (0.05, 0.9, 0.05)})
    gated = dataclasses.replace(NO_CHECKS, gate=True)
    items = [(TEXT, "Dogs are quiet."), ("Nothing here.", "Fish swim.")]
    result = verify_pairs(
        verifier, items, granularity="sentences", sentence_spans=[SPANS, None], checks=gated
    )
    # only the windows holding "Dogs" reach the verifier; "Nothing here." shares no word
    assert verifier.batches == [
        [
            ("Dogs bark.", "Dogs are quiet."),
            ("Cats sleep. Dogs bark.", "Dogs are quiet."),
            ("Dogs bark. Birds sing.", "Dogs are quiet."),
            ("Cats sleep. Dogs bark. Birds sing.", "Dogs are quiet."),
        ]
    ]
    assert result.spans[0] == (12, 22)
    np.testing.assert_array_equal(result.probs[1], NO_WORD_IN_COMMON)
    assert result.shown[1] is ShownLabel.NO_EVIDENCE
    # a figure is a word: a window sharing only "48" is asked
    verify_pairs(verifier, [("It took 48 hours.", "Copper: 48.")], checks=gated)
    assert verifier.batches[-1] == [("It took 48 hours.", "Copper: 48.")]


def test_passage_granularity_is_one_premise_per_item() -> None:
    verifier = ScriptedVerifier({TEXT: (0.6, 0.3, 0.1)})
    result = verify_pairs(verifier, [(TEXT, "Cats sleep.")], granularity="passage")
    assert verifier.batches == [[(TEXT, "Cats sleep.")]]
    assert result.spans == ((0, len(TEXT)),)
    np.testing.assert_array_equal(result.probs, np.array([[0.6, 0.3, 0.1]], dtype=np.float32))


def test_no_items_no_call() -> None:
    verifier = ScriptedVerifier({})
    result = verify_pairs(verifier, [], granularity="sentences")
    assert verifier.batches == [] and result.probs.shape == (0, 3) and result.spans == ()


def test_verify_claims_evidence_is_the_deciding_window() -> None:
    verifier = ScriptedVerifier({"Dogs bark.": (0.05, 0.9, 0.05)})
    passage = _passage(1, TEXT, SPANS)
    (v,) = verify_claims(verifier, [(Claim("Dogs are quiet.", 3), passage)])
    assert v.passage_number == 3 and v.label is NliLabel.CONTRADICT
    assert (v.p_support, v.p_contradict, v.p_no_evidence) == pytest.approx((0.05, 0.9, 0.05))
    assert v.evidence == "Dogs bark." and v.evidence_span == (12, 22)
    (whole,) = verify_claims(verifier, [(Claim("x", 1), passage)], granularity="passage")
    assert whole.evidence == TEXT and whole.evidence_span == (0, len(TEXT))


def test_lexical_baseline_goes_through_the_same_path() -> None:
    lexical = LexicalOverlapVerifier()
    claim = "Dogs never bark."
    np.testing.assert_array_equal(
        lexical.classify([("Dogs bark.", claim), ("Cats sleep.", claim), (claim, claim)]),
        np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=np.float32),
    )
    result = verify_pairs(lexical, [(TEXT, claim)], granularity="sentences")
    assert result.spans == ((12, 22),)
    assert LABEL_ORDER[int(result.probs[0].argmax())] is NliLabel.CONTRADICT
    passage = verify_pairs(lexical, [(TEXT, claim)], granularity="passage")
    assert passage.spans == ((0, len(TEXT)),)


# -- the real bundled verifier ---------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled() -> OnnxVerifier:
    verifier = get_verifier("verifai-minilm-nli")
    verifier.load()
    return verifier


ASPIRIN = (
    "The weather was mild during the study period. Aspirin lowered the risk of stroke "
    "by 17 percent in women over ten years. Funding came from a national grant."
)


def test_real_verifier_picks_the_deciding_sentence_window(bundled: OnnxVerifier) -> None:
    passage = _passage(1, ASPIRIN)
    (v,) = verify_claims(bundled, [(Claim("Aspirin reduces stroke risk in women.", 1), passage)])
    assert v.passage_number == 1
    assert abs(v.p_support + v.p_contradict + v.p_no_evidence - 1.0) < 1e-5
    assert v.evidence == ASPIRIN[v.evidence_span[0] : v.evidence_span[1]]
    assert "Aspirin lowered" in v.evidence
    result = verify_pairs(
        bundled, [(ASPIRIN, "Aspirin reduces stroke risk in women.")], granularity="passage"
    )
    assert result.spans == ((0, len(ASPIRIN)),) and result.probs.shape == (1, 3)
    np.testing.assert_array_equal(
        result.probs, bundled.classify([(ASPIRIN, "Aspirin reduces stroke risk in women.")])
    )


def test_app_and_eval_verifier_give_identical_probabilities(
    bundled: OnnxVerifier, shared_data: Path
) -> None:
    """The app (``verify_claims`` on passages whose sentence offsets come from ingest's splitter)
    and ``verifai eval verifier`` (``evaluate_pairs``) score real SciFact dev pairs the same."""
    pairs = load_scifact(shared_data / "scifact", "dev")[:6]
    for granularity in ("sentences", "passage"):
        evaluated = evaluate_pairs(
            bundled, pairs, dataset="scifact_dev", system="bundled", granularity=granularity
        )
        claims = [
            (Claim(p.hypothesis, 1), _passage(n, p.premise, split_sentences(p.premise)))
            for n, p in enumerate(pairs)
        ]
        verdicts = verify_claims(bundled, claims, granularity=granularity)
        app = np.asarray(
            [[v.p_support, v.p_contradict, v.p_no_evidence] for v in verdicts], dtype=np.float32
        )
        np.testing.assert_array_equal(app, evaluated.probs)
