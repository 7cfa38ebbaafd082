"""contradictions.py control flow: negation-aware queries, RRF candidates, per-document
verdicts, the skip list and the one verifier batch (fakes; the real search is in
tests/unit/test_recite_real.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.unit.test_pipeline import FakeVerifier, _passage
from verifai_desktop.contradictions import (
    INDEXED_CUES,
    about_subject,
    candidate_passages,
    find_conflicts,
    has_negation,
    negation_variant,
)
from verifai_desktop.domain import DocId, Evidence, NliLabel, Passage, ShownLabel, Verdict
from verifai_desktop.retrieve import Fused
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.evidence import document_verdicts


@pytest.mark.parametrize(
    ("claim", "negated"),
    [
        ("Dogs never sleep.", True),
        ("Aspirin does not lower risk.", True),
        ("It doesn't help.", True),
        ("Aspirin lowers risk.", False),
        ("Knowledge of the nodes matters.", False),  # "no" inside a word is not a cue
    ],
)
def test_has_negation(claim: str, negated: bool) -> None:
    assert has_negation(claim) is negated


def test_negation_variant_flips_the_cues() -> None:
    assert negation_variant("Aspirin does not lower the risk.") == "Aspirin does lower the risk"
    affirmative = negation_variant("Aspirin lowers the risk.")
    assert affirmative.startswith("Aspirin lowers the risk.")
    assert affirmative.split()[-len(INDEXED_CUES) :] == list(INDEXED_CUES)


class FakeRetriever:
    """Three hit lists by query; passages by chunk id (control flow only)."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.by_id = {int(p.chunk_id): p for p in passages}
        self.queries: list[str] = []

    def lexical_hits(self, query: str, limit: int) -> list[tuple[int, float]]:
        self.queries.append(query)
        return [(1, 9.0), (2, 5.0)] if "never" not in query else [(3, 7.0), (2, 6.0)]

    def semantic_hits(self, query: str, limit: int) -> list[tuple[int, float]]:
        return [(2, 0.9), (4, 0.5)]

    def passages(
        self, fused: Sequence[Fused], k: int, *, include_references: bool = True
    ) -> tuple[Passage, ...]:
        return tuple(self.by_id[f.chunk_id] for f in fused if f.chunk_id in self.by_id)[:k]


PASSAGES = (
    _passage(1, "Dogs bark at night.", 0.5),
    _passage(2, "Dogs sleep all day.", 0.5),
    _passage(3, "Dogs never sleep.", 0.5),
    _passage(4, "Birds sing in spring.", 0.5),
)


def test_candidates_fuse_three_lists_by_rrf() -> None:
    r = FakeRetriever(PASSAGES)
    found = candidate_passages(r, "Dogs sleep.", 3)  # type: ignore[arg-type]
    # chunk 2 is in all three lists, so it leads; then 1 and 3 (rank 1 in one list each)
    assert [int(p.chunk_id) for p in found] == [2, 1, 3]
    assert r.queries == ["Dogs sleep.", negation_variant("Dogs sleep.")]
    with pytest.raises(ValueError, match="budget"):
        candidate_passages(r, "Dogs sleep.", 0)  # type: ignore[arg-type]


def test_find_conflicts_skips_given_passages_and_uses_one_batch() -> None:
    r, verifier = FakeRetriever(PASSAGES), FakeVerifier()
    found = find_conflicts(
        r,  # type: ignore[arg-type]
        verifier,
        ["Dogs sleep.", "Birds sing in spring."],
        VerifySettings(),
        budget=2,
        skip=frozenset({2}),
    )
    assert len(verifier.batches) == 1
    dogs, birds = found
    assert [e.passage.path.name for e in dogs] == ["doc3.pdf"]  # "never" contradicts
    assert dogs[0].verdict.evidence == "Dogs never sleep."
    assert dogs[0].verdict.passage_number == 0  # not given to the generator
    assert birds == ()
    assert all(premise != "Dogs sleep all day." for premise, _ in verifier.batches[0])


def _ev(doc: int, s: float, c: float) -> Evidence:
    p = _passage(doc, "x.", 0.5)
    label = NliLabel.SUPPORT if s >= c else NliLabel.CONTRADICT
    return Evidence(p, Verdict(0, label, s, c, 1 - s - c))


def test_document_verdicts_take_each_documents_strongest_passage() -> None:
    docs = document_verdicts(
        [_ev(1, 0.7, 0.1), _ev(1, 0.1, 0.85), _ev(2, 0.6, 0.1), _ev(3, 0.2, 0.3)],
        VerifySettings(),
    )
    assert [(int(d.doc_id), d.label) for d in docs] == [
        (1, "CONTRADICT"),  # 0.85 beats the same document's 0.7 support
        (2, "SUPPORT"),
        (3, "NO_EVIDENCE"),
    ]
    assert docs[0].doc_id == DocId(1) and docs[0].evidence.strength == pytest.approx(0.85)


def test_a_document_whose_strongest_passage_is_unsure_says_so_with_its_best_guess() -> None:
    held = Evidence(
        _passage(5, "x.", 0.5),
        Verdict(0, NliLabel.SUPPORT, 0.8, 0.1, 0.1, shown=ShownLabel.UNSURE, flags=("f",)),
    )
    docs = document_verdicts([held, _ev(6, 0.1, 0.2)], VerifySettings())
    assert [(int(d.doc_id), d.label) for d in docs] == [(5, "UNSURE"), (6, "NO_EVIDENCE")]
    assert docs[0].probability == pytest.approx(0.8)  # the best guess, not P(NO_EVIDENCE)


def test_about_subject_asks_a_quarter_of_one_parts_subject_words() -> None:
    claim = "Statins lower LDL cholesterol in older adults, and aspirin prevents strokes."
    # each part has 4-5 subject words; one of them is under a quarter
    assert about_subject(claim, "Aspirin prevents recurrent strokes after a first one.")
    assert about_subject(claim, "LDL cholesterol fell with statins in a trial.")
    assert not about_subject(claim, "Exercise improves sleep in adults.")
    assert about_subject("The.", "Anything at all.")  # a claim without subject words


def test_the_subject_gate_leaves_passages_about_another_subject_unasked() -> None:
    """Control flow: a candidate that holds too few of the claim's subject words never reaches
    the verifier, and what the others give is unchanged."""
    claim = "Old dogs sleep during winter nights."
    passages = (
        _passage(1, "Old dogs sleep during winter nights.", 0.5),
        _passage(3, "Old dogs never sleep during winter nights.", 0.5),
        _passage(5, "Dogs never purr.", 0.5),  # 1 of 5 subject words: CONTRADICT held back
    )

    class Retriever(FakeRetriever):
        def lexical_hits(self, query: str, limit: int) -> list[tuple[int, float]]:
            return [(1, 9.0), (3, 7.0)]

        def semantic_hits(self, query: str, limit: int) -> list[tuple[int, float]]:
            return [(5, 0.9), (1, 0.8)]

    runs = {}
    for gate in (False, True):
        verifier = FakeVerifier()
        found = find_conflicts(
            Retriever(passages),  # type: ignore[arg-type]
            verifier,
            [claim],
            VerifySettings(),
            budget=3,
            subject_gate=gate,
        )
        asked = {premise for batch in verifier.batches for premise, _ in batch}
        runs[gate] = ([e.passage.path.name for e in found[0]], asked)
    assert runs[False][0] == runs[True][0] == ["doc3.pdf"]
    assert "Dogs never purr." in runs[False][1]
    assert "Dogs never purr." not in runs[True][1]
    assert not about_subject(claim, "Dogs never purr.")
