"""A second opinion from the generator already loaded, on green sentences that are easy to get
wrong (``verify.second_opinion``, off by default).

A small NLI model misses changed figures and dropped negations that the deterministic checks
(:mod:`verifai_desktop.verify.checks`) do not see, and a low margin between SUPPORT and the
next label says it barely decided. For a sentence shown green whose claim holds a figure or a
negation, or whose margin is below :data:`LOW_MARGIN`, the generator judges the deciding window
once more, greedy and constrained by a grammar to SUPPORT / CONTRADICT / NOT ENOUGH INFO (the
LLM-as-judge of VerifAI's evaluation; G-Eval, Liu et al. 2023, for constrained judging). Any
answer but SUPPORT turns the green verdict into *unsure* with the reason, never into red: the
judge is a small model too.

Measured on dev perturbation pairs (``models/second_opinion_dev.py``, 20 per kind; README,
Measured): the bundled 0.5B catches more swapped items and dropped negations but turns 8 of 20
correct greens into false alarms; the 1.5B turns 2 of 20, catching 3 more swapped items and 3
more dropped negations, at about 29 s per judged sentence on a loaded 2-core CPU. It is off by
default; with the 1.5B on a GPU it is worth turning on.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from verifai_desktop.domain import AnswerSentence, ShownLabel, Verdict
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.labels import sentence_label
from verifai_desktop.verify.numbers import find_numbers

if TYPE_CHECKING:
    from verifai_desktop.generate import Generator

LOW_MARGIN = 0.3
"""P(SUPPORT) minus the next label's probability below which a green verdict is judged again."""
JUDGE_GRAMMAR = 'root ::= "SUPPORT" | "CONTRADICT" | "NOT ENOUGH INFO"'
JUDGE_PROMPT = (
    "You check scientific claims against evidence.\n"
    "Evidence: {premise}\n"
    "Claim: {claim}\n"
    "Does the evidence support the claim, contradict it, or not give enough information? "
    "Answer with exactly one of: SUPPORT, CONTRADICT, NOT ENOUGH INFO."
)
MAX_PREMISE_CHARS = 3000
_NEGATION = re.compile(r"\b(?:not|no|never|without|neither|nor|none)\b|n't\b", re.IGNORECASE)


def needs_second_opinion(claim: str, verdict: Verdict) -> bool:
    """Whether a verdict is shown green and its claim holds a figure or a negation, or its
    margin is below :data:`LOW_MARGIN`."""
    if verdict.shown is not ShownLabel.SUPPORT:
        return False
    margin = verdict.p_support - max(verdict.p_contradict, verdict.p_no_evidence)
    risky = bool(find_numbers(claim)) or bool(_NEGATION.search(claim + " " + verdict.evidence))
    return risky or margin < LOW_MARGIN


def judge(generator: Generator, premise: str, claim: str) -> str:
    """The generator's label for one pair: ``"SUPPORT"``, ``"CONTRADICT"`` or
    ``"NOT ENOUGH INFO"``.

    Raises:
        GenerationError: the generator failed.
    """
    prompt = JUDGE_PROMPT.format(premise=premise[:MAX_PREMISE_CHARS], claim=claim)
    reply = "".join(
        generator.stream([ChatMessage("user", prompt)], grammar=JUDGE_GRAMMAR, max_tokens=6)
    )
    return reply.strip()


def review(
    generator: Generator,
    sentences: Sequence[AnswerSentence],
    thresholds: VerifySettings,
) -> tuple[tuple[AnswerSentence, ...], int]:
    """Ask the generator about every green verdict :func:`needs_second_opinion` picks.

    Args:
        generator: the session's generator (loaded: it has just written the answer).
        sentences: the verified sentences.
        thresholds: the thresholds the labels were made with.

    Returns:
        The sentences, those with a verdict the generator does not support relabelled (that
        verdict shown UNSURE with the generator's answer as its flag), and how many verdicts
        were judged.

    Raises:
        GenerationError: the generator failed.
    """
    out: list[AnswerSentence] = []
    judged = 0
    for sentence in sentences:
        verdicts = list(sentence.verdicts)
        changed = False
        for n, verdict in enumerate(verdicts):
            if not needs_second_opinion(sentence.claim, verdict):
                continue
            judged += 1
            said = judge(generator, verdict.evidence, sentence.claim)
            if said != "SUPPORT":
                flag = f'a second reading by the generator says "{said}"'
                verdicts[n] = dataclasses.replace(
                    verdict, shown=ShownLabel.UNSURE, flags=(*verdict.flags, flag)
                )
                changed = True
        if changed:
            sentence = dataclasses.replace(
                sentence,
                verdicts=tuple(verdicts),
                label=sentence_label(verdicts, thresholds),
            )
        out.append(sentence)
    return tuple(out), judged
