"""Abstention by evidence and its best-guess form (``verify.abstain_best_guess``)."""

from __future__ import annotations

from verifai_desktop.domain import AnswerSentence, NliLabel, SentenceLabel, Verdict
from verifai_desktop.verify.abstention import best_guess_support, supported_anywhere


def _sentence(label: SentenceLabel, guess: NliLabel, flags: tuple[str, ...] = ()) -> AnswerSentence:
    p = {NliLabel.SUPPORT: (0.6, 0.1, 0.3), NliLabel.CONTRADICT: (0.2, 0.6, 0.2)}.get(
        guess, (0.2, 0.2, 0.6)
    )
    verdict = Verdict(1, guess, *p, flags=flags)
    return AnswerSentence("X is Y. [1]", 0, 11, (1,), (verdict,), label)


def test_green_counts_under_both_rules() -> None:
    green = _sentence(SentenceLabel.SUPPORTED, NliLabel.SUPPORT)
    assert supported_anywhere([green]) and supported_anywhere([green], best_guess=True)


def test_an_unsure_sentence_leaning_to_support_counts_only_for_the_best_guess_rule() -> None:
    unsure = _sentence(SentenceLabel.UNSURE, NliLabel.SUPPORT)
    assert best_guess_support(unsure)
    assert not supported_anywhere([unsure])
    assert supported_anywhere([unsure], best_guess=True)


def test_a_held_back_guess_or_another_lean_never_counts() -> None:
    held_back = _sentence(
        SentenceLabel.UNSURE, NliLabel.SUPPORT, ("the figure 12% is not stated in the evidence",)
    )
    leaning_red = _sentence(SentenceLabel.UNSURE, NliLabel.CONTRADICT)
    nothing = _sentence(SentenceLabel.NO_EVIDENCE, NliLabel.NO_EVIDENCE)
    for s in (held_back, leaning_red, nothing):
        assert not best_guess_support(s)
    assert not supported_anywhere([held_back, leaning_red, nothing], best_guess=True)
