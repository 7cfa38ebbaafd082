"""The checks and the window rule of the one verification path, and the shown labels.

Control flow with the scripted fake verifier of test_check; the negation case of issue 26 with
the real bundled verifier on a real SciFact abstract."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from tests.unit.verify.test_check import SPANS, TEXT, ScriptedVerifier
from verifai_desktop.domain import NliLabel, ShownLabel
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import verify_pairs
from verifai_desktop.verify.checks import (
    ALL_CHECKS,
    NO_CHECKS,
    aligned_changes,
    states_verbatim,
)
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.verify.labels import AIM_FLAG, shown_label
from verifai_desktop.verify.nli import OnnxVerifier
from verifai_desktop.verify.rules import findings

T = VerifySettings(support_threshold=0.6, contradict_threshold=0.7)


@pytest.mark.parametrize(
    ("probs", "flags", "expected"),
    [
        ((0.8, 0.1, 0.1), (), ShownLabel.SUPPORT),
        ((0.6, 0.3, 0.1), (), ShownLabel.SUPPORT),  # at the threshold
        ((0.55, 0.2, 0.25), (), ShownLabel.UNSURE),  # best guess below its threshold
        ((0.8, 0.1, 0.1), ("the figure 12% is not stated",), ShownLabel.UNSURE),
        ((0.1, 0.8, 0.1), (), ShownLabel.CONTRADICT),
        ((0.2, 0.65, 0.15), (), ShownLabel.UNSURE),
        ((0.1, 0.8, 0.1), ("rests on the negation alone",), ShownLabel.UNSURE),
        ((0.1, 0.2, 0.7), (), ShownLabel.NO_EVIDENCE),
        ((0.2, 0.2, 0.6), ("the figure 3 is not stated",), ShownLabel.NO_EVIDENCE),
        ((0.9, 0.05, 0.05), (AIM_FLAG,), ShownLabel.NO_EVIDENCE),
    ],
)
def test_shown_label(
    probs: tuple[float, float, float], flags: tuple[str, ...], expected: ShownLabel
) -> None:
    assert shown_label(*probs, flags, T) is expected


UNGATED = dataclasses.replace(ALL_CHECKS, gate=False)
"""Every check but the gate: these scripted premises share no word with their claims."""


def test_the_rules_name_the_figure_and_the_negation() -> None:
    window = (
        "Tensile strength was 320 MPa for steel, 110 MPa for titanium and 45 MPa for aluminium."
    )
    claim = "Titanium had a tensile strength of 320 MPa."
    (red,) = findings(claim, window, window, NliLabel.SUPPORT)
    assert red.effect is Effect.RED and red.rule == "figures"
    assert red.reason.startswith("the figure 320 MPa: the passage gives 110 MPa here")
    right = "Titanium had a tensile strength of 110 MPa."
    assert findings(right, window, window, NliLabel.SUPPORT) == ()
    claim = "Smoking increases the risk of stroke."
    window = "Smoking did not increase the risk of stroke."
    (red,) = findings(claim, window, window, NliLabel.SUPPORT)
    assert red.effect is Effect.RED and red.rule == "negation"
    assert findings(claim, window, window, NliLabel.SUPPORT, NO_CHECKS) == ()
    # a rule that shows red does so whatever the verifier guessed
    assert findings(claim, window, window, NliLabel.NO_EVIDENCE) == (red,)


def test_a_sentence_that_follows_the_window_word_for_word_is_checked_where_it_differs() -> None:
    # real sentences of SciFact abstracts, changed where a wrong answer would change them
    window = (
        "RESULTS In the HPV and conventional arms there were 95 600 and 95 700 woman years of "
        "follow-up and 76 and 53 cases of CIN III+, respectively."
    )
    assert aligned_changes(window.replace("76 and 53", "76 and 76"), window) == (
        "the figure 76 where the evidence has 53",
    )
    window = "In patients who used cyclophosphamide, overall mortality was not increased."
    claim = "In patients who used cyclophosphamide, overall mortality was increased."
    assert aligned_changes(claim, window) == (
        'the evidence says "was not increased" where the sentence has no negation',
    )
    window = "Tensile strength was 320 MPa for steel and 110 MPa for titanium."
    swapped = "Tensile strength was 320 MPa for titanium and 110 MPa for steel."
    assert aligned_changes(swapped, window) == (
        "titanium and steel are exchanged relative to the evidence",
    )
    assert aligned_changes(window, window) == ()
    paraphrase = "Steel was stronger than titanium, at 320 against 110 MPa."
    assert aligned_changes(paraphrase, window) == ()


def test_an_inserted_without_names_a_group_and_a_with_turned_without_negates() -> None:
    # PubMedQA 23389866 (a dev figure question's abstract): the answer adds who arm B is
    window = (
        "Patients with resectable disease were subjected to surgical resection (arm A) and "
        "remaining was kept on regular clinical follow-up (arm B)."
    )
    claim = "The rest were kept on regular clinical follow-up without surgery (arm B)."
    assert aligned_changes(claim, window) == ()
    # "with" turned "without" negates, either way round
    turned = claim.replace("without", "with")
    assert aligned_changes(turned, claim) == (
        'the evidence says "up without surgery" where the sentence has no negation',
    )
    assert aligned_changes(claim, turned) == (
        'the sentence says "up without surgery" where the evidence has no negation',
    )


def test_a_window_stating_the_sentence_word_for_word_is_not_red() -> None:
    """The README question's answer was listed beside a 'conflicting' page-1 window of the same
    paper that holds the answer's own sentence (P(CONTRADICT) 0.67 from its other sentences)."""
    window = (
        "We specifically use citations as a naturally occurring, inter-document incidental "
        "supervision signal indicating which documents are most related and formulate the "
        "signal into\na triplet-loss pretraining objective. Unlike many prior works, at "
        "inference time, our model does not require any citation information."
    )
    claim = (
        "SPECTER uses citations as a naturally occurring, inter-document incidental "
        "supervision signal indicating which documents are most related and formulate the "
        "signal into a triplet-loss pretraining objective."
    )
    assert states_verbatim(claim, window)
    assert findings(claim, window, window, NliLabel.CONTRADICT) == (
        Finding("aligned", Effect.HOLD, "the evidence states the sentence word for word"),
    )
    assert findings(claim, window, window, NliLabel.CONTRADICT, NO_CHECKS) == ()
    changed = "Statins were associated with AKI."
    assert not states_verbatim(changed, "Statins were not associated with AKI.")


def test_support_first_keeps_the_contradicting_window_as_a_conflict() -> None:
    verifier = ScriptedVerifier({"Dogs bark.": (0.05, 0.9, 0.05), "Birds sing.": (0.8, 0.1, 0.1)})
    items = [(TEXT, "Dogs are quiet.")]
    by_max = verify_pairs(verifier, items, granularity="sentences", sentence_spans=[SPANS],
                          checks=NO_CHECKS, thresholds=T)  # fmt: skip
    assert by_max.shown == (ShownLabel.CONTRADICT,) and by_max.spans == ((12, 22),)
    assert by_max.conflicts == (None,)
    first = verify_pairs(verifier, items, granularity="sentences", sentence_spans=[SPANS],
                         thresholds=T, checks=UNGATED)  # fmt: skip
    assert first.shown == (ShownLabel.SUPPORT,) and first.spans == ((23, 34),)
    conflict = first.conflict(0, TEXT, 2)
    assert conflict is not None and conflict.evidence == "Dogs bark."
    assert conflict.shown is ShownLabel.CONTRADICT and conflict.passage_number == 2


def test_windows_holding_an_aim_are_not_evidence() -> None:
    text = "We tested whether dogs bark. Dogs sleep. Birds sing."
    spans = ((0, 28), (29, 40), (41, 52))
    verifier = ScriptedVerifier({"We tested whether dogs bark.": (0.9, 0.05, 0.05)})
    result = verify_pairs(verifier, [(text, "Dogs bark.")], granularity="sentences",
                          sentence_spans=[spans], thresholds=T, checks=UNGATED)  # fmt: skip
    premises = [p for p, _ in verifier.batches[0]]
    assert premises == ["Dogs sleep.", "Birds sing.", "Dogs sleep. Birds sing."]
    assert result.shown == (ShownLabel.NO_EVIDENCE,)
    only_aims = verify_pairs(verifier, [("We tested whether dogs bark.", "Dogs bark.")],
                             granularity="sentences", thresholds=T)  # fmt: skip
    assert only_aims.shown == (ShownLabel.NO_EVIDENCE,) and only_aims.flags == ((AIM_FLAG,),)
    whole = verify_pairs(verifier, [(text, "Dogs bark.")], granularity="sentences",
                         sentence_spans=[spans], thresholds=T, checks=NO_CHECKS)  # fmt: skip
    assert whole.shown == (ShownLabel.SUPPORT,)  # without the check the aim decided


def _abstract(doc_id: int) -> str:
    from tests.conftest import SHARED_DATA

    path = SHARED_DATA / "scifact" / "original" / "corpus.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is not on this machine")
    for line in path.open(encoding="utf-8"):
        d = json.loads(line)
        if d["doc_id"] == doc_id:
            return " ".join(s.strip() for s in d["abstract"])
    raise AssertionError(f"SciFact document {doc_id} not found")


def test_a_correct_negative_claim_is_not_shown_red_by_the_aim_or_the_not(
    bundled: OnnxVerifier,
) -> None:
    """Issue 26: 'X is not associated with Y', as the paper's results and conclusion say, was
    shown contradicted at p 0.96 because the window stating the study's aim decided."""
    text = _abstract(40156901)  # statins and acute kidney injury after cardiac surgery
    claim = "Statin treatment is not associated with postoperative acute kidney injury."
    before = verify_pairs(bundled, [(text, claim)], granularity="sentences",
                          thresholds=T, checks=NO_CHECKS)  # fmt: skip
    start, end = before.spans[0]
    assert before.shown == (ShownLabel.CONTRADICT,) and before.probs[0, 1] > 0.9
    assert text[start:end].startswith("METHODS We assessed whether statin treatment")
    after = verify_pairs(bundled, [(text, claim)], granularity="sentences",
                         thresholds=T, checks=ALL_CHECKS)  # fmt: skip
    assert after.shown[0] is not ShownLabel.CONTRADICT
    start, end = after.spans[0]
    assert "We assessed whether" not in text[start:end]
    assert after.flags[0] and "negat" in after.flags[0][0]
    assert np.isclose(after.probs[0].sum(), 1.0, atol=1e-4)


def test_checks_change_nothing_for_a_plain_supported_sentence(bundled: OnnxVerifier) -> None:
    text = _abstract(40156901)
    claim = "Of the 2,104 patients, 495 developed acute kidney injury."
    shown = verify_pairs(bundled, [(text, claim)], granularity="sentences", thresholds=T).shown
    plain = verify_pairs(bundled, [(text, claim)], granularity="sentences", thresholds=T,
                         checks=NO_CHECKS).shown  # fmt: skip
    assert shown == plain
