"""The generator's second opinion on green sentences with figures, negations or a low margin:
control flow with a scripted generator, and the real bundled generator on real pairs."""

from __future__ import annotations

import pytest

from tests.unit.test_pipeline import FakeGenerator
from verifai_desktop.domain import (
    AnswerSentence,
    NliLabel,
    SentenceLabel,
    ShownLabel,
    Verdict,
)
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.second_opinion import JUDGE_GRAMMAR, judge, needs_second_opinion, review

WINDOW = "Of the 2,104 patients, 495 (24%) developed acute kidney injury."


def _green(p_support: float = 0.9) -> Verdict:
    rest = (1 - p_support) / 2
    return Verdict(1, NliLabel.SUPPORT, p_support, rest, rest, WINDOW, (0, len(WINDOW)),
                   shown=ShownLabel.SUPPORT)  # fmt: skip


def _sentence(text: str, verdict: Verdict) -> AnswerSentence:
    return AnswerSentence(text, 0, len(text), (1,), (verdict,), SentenceLabel.SUPPORTED)


def test_only_risky_green_verdicts_are_judged_again() -> None:
    assert needs_second_opinion("495 patients developed AKI.", _green())  # a figure
    assert needs_second_opinion("Statins did not prevent AKI.", _green())  # a negation
    assert needs_second_opinion("Statins prevent AKI.", _green(0.5))  # a low margin
    assert not needs_second_opinion("Statins prevent AKI.", _green(0.95))
    red = Verdict(1, NliLabel.CONTRADICT, 0.1, 0.8, 0.1, WINDOW, shown=ShownLabel.CONTRADICT)
    assert not needs_second_opinion("495 patients developed AKI.", red)


def test_a_disagreeing_generator_makes_green_unsure_never_red() -> None:
    generator = FakeGenerator(("CONTRADICT",))
    sentences = (
        _sentence("Of the patients, 459 developed acute kidney injury. [1]", _green()),
        _sentence("Statins prevent acute kidney injury. [1]", _green(0.95)),
    )
    out, judged = review(generator, sentences, VerifySettings())
    assert judged == 1 and len(generator.calls) == 1
    prompt, grammar = generator.calls[0]["messages"][-1].content, generator.calls[0]["grammar"]
    assert WINDOW in prompt and "459 developed" in prompt and grammar == JUDGE_GRAMMAR
    first, second = out
    assert first.label is SentenceLabel.UNSURE
    assert first.verdicts[0].shown is ShownLabel.UNSURE
    assert first.verdicts[0].flags == ('a second reading by the generator says "CONTRADICT"',)
    assert second == sentences[1]


def test_an_agreeing_generator_changes_nothing() -> None:
    sentences = (_sentence("Of the patients, 495 developed acute kidney injury. [1]", _green()),)
    out, judged = review(FakeGenerator(("SUPPORT",)), sentences, VerifySettings())
    assert judged == 1 and out == sentences


@pytest.mark.slow
def test_the_bundled_generator_judges_real_pairs() -> None:
    """Through the real bundled 0.5B: the grammar holds its answer to the three labels, and a
    sentence it does not support comes back unsure with its answer as the reason."""
    from verifai_desktop import modelstore
    from verifai_desktop.generate import make_generator
    from verifai_desktop.settings import ModelSettings

    path = modelstore.ensure_bundled_generator()
    generator = make_generator(path, ModelSettings(context_tokens=2048))
    premise = (
        "After propensity adjustment statin treatment was not associated with postoperative "
        "AKI (odds ratio 0.79; 95% confidence interval 0.59 to 1.06; p = 0.11)."
    )
    claims = (
        "Statin treatment was not associated with postoperative AKI.",
        "Statin treatment was associated with postoperative AKI.",
        "The odds ratio was 0.79.",
    )
    said = [judge(generator, premise, claim) for claim in claims]
    assert set(said) <= {"SUPPORT", "CONTRADICT", "NOT ENOUGH INFO"}
    verdict = Verdict(1, NliLabel.SUPPORT, 0.9, 0.05, 0.05, premise, (0, len(premise)),
                      shown=ShownLabel.SUPPORT)  # fmt: skip
    sentences = tuple(_sentence(f"{claim} [1]", verdict) for claim in claims)
    out, judged = review(generator, sentences, VerifySettings())
    assert judged == 3  # each holds a figure or a negation (the window's "not" counts)
    for answer, sentence in zip(said, out, strict=True):  # greedy: the same answers again
        if answer == "SUPPORT":
            assert sentence.label is SentenceLabel.SUPPORTED
        else:
            assert sentence.label is SentenceLabel.UNSURE
            assert sentence.verdicts[0].flags == (
                f'a second reading by the generator says "{answer}"',
            )
