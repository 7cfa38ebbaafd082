"""Aims and hypotheses are not evidence; negation polarity between a claim and a window.

Sentences are real ones from SciFact corpus abstracts (or written like them)."""

from __future__ import annotations

import pytest

from verifai_desktop.verify.aims import aim_sentences, is_aim
from verifai_desktop.verify.negation import negation_conflict, negation_ungrounded, polarity


@pytest.mark.parametrize(
    "sentence",
    [
        "METHODS We assessed whether statin treatment is associated with a lower incidence of "
        "postoperative AKI in 2,104 consecutive patients.",
        "The aim of the present study was to examine whether muscle IL-6 contributes to "
        "exercise-induced PDH regulation in skeletal muscle.",
        "We sought to determine whether sleep apnea is associated with stroke.",
        "We hypothesized these antibodies would identify a central nervous system autoantigen.",
        "To determine the functional significance of A20 in GSCs, we targeted A20 expression.",
        "It is unknown whether sympathetic drive is altered in normal pregnancy.",
        "OBJECTIVE: To assess the effect of aspirin on mortality.",
        "What makes the two Dicers specific for their biological substrates?",
        # PubMedQA PQA-L contexts (paraphrase dev g-130, g-153, g-55)
        "Our objective in this study was to determine whether the decision to manage a "
        "contralateral hydrocele in cases of neonatal testicular torsion solely through a "
        "scrotal approach is safe and effective.",
        "The study goal was to determine whether pre-operative fasting blood glucose (fB-glu) "
        "is associated with an increased mortality after percutaneous coronary interventions.",
        "Several studies have investigated human papillomavirus (HPV) as a risk factor for the "
        "development of pterygia, but the results are inconclusive.",
        "The medical records of 14 patients with Fournier's gangrene who presented at the "
        'University Hospital Center "Mother Teresa" from January 1997 to December 2006 were '
        "reviewed retrospectively to analyze the outcome and identify the risk factor and "
        "prognostic indicators of mortality.",
    ],
)
def test_aims_hypotheses_and_questions_are_recognised(sentence: str) -> None:
    assert is_aim(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "After propensity adjustment statin treatment was not associated with postoperative AKI "
        "(odds ratio 0.79; 95% confidence interval 0.59 to 1.06).",
        "CONCLUSIONS Statin treatment is not associated with a lower incidence of AKI after "
        "cardiac surgery.",
        "BACKGROUND Acute kidney injury after cardiac surgery is associated with increased "
        "mortality.",
        "From these snapshots we hypothesize that the pathologic response is organised.",
        "Of the 2,104 patients, 495 (24%) developed AKI.",
        "The results were consistent across the three study sites.",
        "The study reached its primary goal in 40 of 51 patients.",
        "Patients were followed for a median of 32 months; 12 died.",
    ],
)
def test_findings_and_background_are_not_aims(sentence: str) -> None:
    assert not is_aim(sentence)


def test_aim_sentences_are_indexed_by_position() -> None:
    text = "We tested whether X lowers Y. X lowered Y by 12%. Whether Z matters is unknown."
    spans = ((0, 28), (29, 48), (49, 79))
    assert aim_sentences(text, spans) == frozenset({0, 2})


def test_a_window_that_negates_what_the_claim_states_is_a_conflict() -> None:
    window = "Smoking did not increase the risk of stroke in this cohort of 3,000 adults."
    reason = negation_conflict("Smoking increases the risk of stroke.", window)
    assert reason == 'the evidence says "did not increase"; the sentence does not negate it'
    reason = negation_conflict(
        "Smoking is not associated with stroke.", "Smoking was associated with stroke (OR 2.1)."
    )
    assert reason is not None and '"not associated"' in reason
    reason = negation_conflict(
        "X is associated with lower mortality.",
        "There was no significant association between X and mortality.",
    )
    assert reason is not None and "no significant association" in reason


@pytest.mark.parametrize(
    ("claim", "window"),
    [
        ("Smoking is not associated with stroke.", "Smoking was not associated with stroke."),
        ("Y increased in group A.", "X did not differ between groups, but Y increased in A."),
        ("Drug A reduced pain.", "Drug A reduced pain without increasing adverse events."),
        # used both ways in the window: ambiguous, never reported
        ("X is associated with B.", "X was not associated with A but was associated with B."),
    ],
)
def test_agreeing_or_unrelated_negations_are_no_conflict(claim: str, window: str) -> None:
    assert negation_conflict(claim, window) is None


def test_polarity_finds_the_head_past_hedges() -> None:
    p = polarity("Treatment did not significantly reduce mortality.")
    assert p.negated == {"reduce": "did not significantly reduce"}
    assert "mortal" in p.plain and "reduce" not in p.plain


def test_a_negated_claim_is_contradicted_only_by_a_window_stating_the_predicate() -> None:
    claim = "Statin treatment is not associated with postoperative acute kidney injury."
    assert negation_ungrounded(claim, "Statin treatment was associated with AKI.") is None
    same = negation_ungrounded(claim, "Statin treatment was not associated with AKI.")
    assert same is not None and "rests on the negation alone" in same
    elsewhere = negation_ungrounded(
        claim, "Acute kidney injury was defined as an increase of 0.3 mg/dL in creatinine."
    )
    assert elsewhere is not None and "does not speak of" in elsewhere
    assert negation_ungrounded("Statins prevent AKI.", "Statins did not prevent AKI.") is None
