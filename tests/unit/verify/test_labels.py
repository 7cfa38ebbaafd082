"""Sentence label rules: unreferenced, contradicted, supported, partially supported, no evidence."""

from __future__ import annotations

import itertools

import pytest

from verifai_desktop.domain import (
    NliLabel,
    SentenceLabel,
    ShownLabel,
    Verdict,
    label_counts,
    label_probability,
)
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.labels import CONFLICT_ON_TOPIC, conflicts_with, sentence_label

T = VerifySettings(contradict_threshold=0.5, support_threshold=0.6)

SUP = Verdict(1, NliLabel.SUPPORT, 0.9, 0.05, 0.05)
SUP_WEAK = Verdict(2, NliLabel.SUPPORT, 0.55, 0.05, 0.40)  # argmax SUPPORT but below 0.6
CON = Verdict(3, NliLabel.CONTRADICT, 0.1, 0.8, 0.1)
CON_EDGE = Verdict(4, NliLabel.CONTRADICT, 0.25, 0.5, 0.25)  # exactly at the threshold
NEI = Verdict(5, NliLabel.NO_EVIDENCE, 0.1, 0.1, 0.8)
SUP_EDGE = Verdict(6, NliLabel.SUPPORT, 0.6, 0.2, 0.2)  # exactly at the threshold


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ((), SentenceLabel.UNREFERENCED),
        ((SUP,), SentenceLabel.SUPPORTED),
        ((SUP_EDGE,), SentenceLabel.SUPPORTED),
        ((SUP, SUP_EDGE), SentenceLabel.SUPPORTED),
        ((SUP_WEAK,), SentenceLabel.NO_EVIDENCE),
        ((NEI,), SentenceLabel.NO_EVIDENCE),
        ((NEI, SUP_WEAK), SentenceLabel.NO_EVIDENCE),
        ((SUP, NEI), SentenceLabel.PARTIALLY_SUPPORTED),
        ((NEI, SUP), SentenceLabel.PARTIALLY_SUPPORTED),
        ((SUP, SUP_WEAK), SentenceLabel.PARTIALLY_SUPPORTED),
        ((CON,), SentenceLabel.CONTRADICTED),
        ((CON_EDGE,), SentenceLabel.CONTRADICTED),
        ((SUP, CON), SentenceLabel.CONTRADICTED),
        ((SUP, SUP, CON_EDGE), SentenceLabel.CONTRADICTED),
        ((NEI, CON), SentenceLabel.CONTRADICTED),
    ],
)
def test_rules(verdicts: tuple[Verdict, ...], expected: SentenceLabel) -> None:
    assert sentence_label(verdicts, T) is expected


def test_contradiction_below_threshold_does_not_count() -> None:
    below = Verdict(1, NliLabel.CONTRADICT, 0.3, 0.49, 0.21)
    assert sentence_label((below,), T) is SentenceLabel.NO_EVIDENCE
    assert sentence_label((below, SUP), T) is SentenceLabel.PARTIALLY_SUPPORTED


def test_thresholds_come_from_settings() -> None:
    lenient = VerifySettings(contradict_threshold=0.9, support_threshold=0.5)
    assert sentence_label((SUP_WEAK,), lenient) is SentenceLabel.SUPPORTED
    assert sentence_label((CON,), lenient) is SentenceLabel.NO_EVIDENCE


def test_every_combination_obeys_the_definitions() -> None:
    pool = (SUP, SUP_WEAK, CON, CON_EDGE, NEI, SUP_EDGE)
    for n in range(1, 4):
        for combo in itertools.product(pool, repeat=n):
            label = sentence_label(combo, T)
            n_sup = sum(v.p_support >= 0.6 for v in combo)
            any_con = any(v.p_contradict >= 0.5 for v in combo)
            if any_con:
                assert label is SentenceLabel.CONTRADICTED
            elif n_sup == n:
                assert label is SentenceLabel.SUPPORTED
            elif n_sup:
                assert label is SentenceLabel.PARTIALLY_SUPPORTED
            else:
                assert label is SentenceLabel.NO_EVIDENCE


def test_probability_backing_the_label() -> None:
    assert label_probability(SentenceLabel.SUPPORTED, (SUP, SUP_EDGE)) == pytest.approx(0.6)
    assert label_probability(SentenceLabel.PARTIALLY_SUPPORTED, (SUP, NEI)) == pytest.approx(0.9)
    assert label_probability(SentenceLabel.CONTRADICTED, (CON, CON_EDGE)) == pytest.approx(0.8)
    assert label_probability(SentenceLabel.NO_EVIDENCE, (NEI, SUP_WEAK)) == pytest.approx(0.8)
    assert label_probability(SentenceLabel.UNREFERENCED, ()) == 0.0


def test_label_counts_include_zeros() -> None:
    counts = label_counts(
        [SentenceLabel.SUPPORTED, SentenceLabel.SUPPORTED, SentenceLabel.UNREFERENCED]
    )
    assert counts[SentenceLabel.SUPPORTED] == 2
    assert counts[SentenceLabel.UNREFERENCED] == 1
    assert counts[SentenceLabel.CONTRADICTED] == 0
    assert set(counts) == set(SentenceLabel)


# -- shown labels (verdicts made by the checked verification path) ---------------------------

S_SUP = Verdict(1, NliLabel.SUPPORT, 0.9, 0.05, 0.05, shown=ShownLabel.SUPPORT)
S_UNSURE = Verdict(
    2, NliLabel.SUPPORT, 0.9, 0.05, 0.05, shown=ShownLabel.UNSURE, flags=("the figure 12%",)
)
S_CON = Verdict(3, NliLabel.CONTRADICT, 0.1, 0.8, 0.1, shown=ShownLabel.CONTRADICT)
S_HELD_CON = Verdict(4, NliLabel.CONTRADICT, 0.1, 0.8, 0.1, shown=ShownLabel.UNSURE)
S_NEI = Verdict(5, NliLabel.NO_EVIDENCE, 0.1, 0.1, 0.8, shown=ShownLabel.NO_EVIDENCE)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ((S_SUP,), SentenceLabel.SUPPORTED),
        ((S_UNSURE,), SentenceLabel.UNSURE),  # P(SUPPORT) 0.9, but a check held it back
        ((S_HELD_CON,), SentenceLabel.UNSURE),  # P(CONTRADICT) 0.8, held back: never red
        ((S_UNSURE, S_NEI), SentenceLabel.UNSURE),
        ((S_SUP, S_UNSURE), SentenceLabel.PARTIALLY_SUPPORTED),
        ((S_UNSURE, S_CON), SentenceLabel.CONTRADICTED),
        ((S_NEI,), SentenceLabel.NO_EVIDENCE),
    ],
)
def test_shown_labels_decide_and_unsure_is_never_green_or_red(
    verdicts: tuple[Verdict, ...], expected: SentenceLabel
) -> None:
    lenient = VerifySettings(contradict_threshold=0.1, support_threshold=0.1)
    assert sentence_label(verdicts, lenient) is expected  # thresholds no longer decide


def test_an_unsure_sentence_shows_its_best_guess_probability() -> None:
    assert label_probability(SentenceLabel.UNSURE, (S_UNSURE, S_NEI)) == pytest.approx(0.9)
    assert label_probability(SentenceLabel.UNSURE, (S_HELD_CON,)) == pytest.approx(0.8)


def test_a_conflict_is_listed_only_when_the_verifier_reads_the_passage_as_bearing_on_it() -> None:
    # a rule turned these red (shown CONTRADICT with the rule's reason) whatever the passage's topic
    flag = ("the figure 51.4%: the passage gives 64.4% here",)
    off_topic = Verdict(
        7, NliLabel.NO_EVIDENCE, 0.01, 0.07, 0.92, shown=ShownLabel.CONTRADICT, flags=flag
    )
    on_topic = Verdict(
        8, NliLabel.SUPPORT, 0.65, 0.10, 0.25, shown=ShownLabel.CONTRADICT, flags=flag
    )
    edge = Verdict(
        9, NliLabel.NO_EVIDENCE, 0.1, CONFLICT_ON_TOPIC, 0.6, shown=ShownLabel.CONTRADICT
    )
    assert not conflicts_with(off_topic, T)
    assert conflicts_with(on_topic, T) and conflicts_with(edge, T)
    assert conflicts_with(CON, T)  # the verifier's own contradiction
    assert not conflicts_with(SUP, T) and not conflicts_with(NEI, T)
