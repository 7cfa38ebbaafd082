"""Statements of aim, hypothesis or open question: sentences that are not evidence.

A paper's abstract states what it set out to test ("We sought to determine whether X is
associated with Y", "We hypothesised that X reduces Y") before it states what it found. To a
small NLI model such a sentence looks like a claim about X and Y: a window holding it decided a
correct negative answer as contradicted at p 0.96, and the contradiction search listed a paper's
own hypothesis as a conflicting passage (issue 26). An aim asserts nothing about the finding, so
premise windows that contain one are not evidence for or against a claim
(:func:`verifai_desktop.verify.check.verify_pairs` leaves them out) and a perturbation pair made
from one is labelled NO_EVIDENCE (:mod:`verifai_desktop.verify.perturb`).

The cue list follows the aim/objective sentences of structured abstracts (the OBJECTIVE and
BACKGROUND sections of PubMed 200k RCT, Dernoncourt and Lee 2017) and the hedges and
hypotheses annotated in BioScope (Vincze et al. 2008). A sentence that states an aim *and* a
result ("To test whether X, we measured Y and found Z") still counts as an aim: the finding is
stated again elsewhere in a real abstract, and a missed window costs less than an aim that
decides.

Issue 39 added "Our objective in this study was", "The study goal was", a question earlier
studies left open ("..., but the results are inconclusive") and a method stated with its
purpose ("The medical records of 14 patients were reviewed retrospectively to analyze the
outcome"): windows of those kinds had decided four of the generator's unsupported sentences of
the paraphrase dev set green (green precision on its sentences 0.54 -> 0.65, coverage
unchanged; nothing moved on the written claims, SciFact dev, HealthVer dev or the self-check).
"""

from __future__ import annotations

import re

_AIM_VERB = (
    r"(?:determine|assess|evaluate|investigate|examine|test|explore|compare|establish|"
    r"identify|clarify|characteri[sz]e|quantify|measure|estimate|describe|analy[sz]e|"
    r"ascertain|elucidate|understand|address|study|answer)"
)
_AIM_PATTERNS: tuple[str, ...] = (
    # "The aim of this study was ...", "Our objective was ...", "The purpose of the trial is"
    # "The study goal was ...", "Our objective in this study was ..."
    r"^(?:the|our|this|a)?\s*(?:main\s+|primary\s+|principal\s+|overall\s+|specific\s+)?"
    r"(?:(?:study|research|trial|review)\s+)?"
    r"(?:aims?|objectives?|purposes?|goals?|intents?|intentions?)\s+"
    r"(?:(?:of|in|for)\s+(?:this|the|our|the\s+present|the\s+current)\s+\w+(?:\s+\w+)?\s+)?"
    r"(?:was|were|is|are)\b",
    # structured abstract headings kept in the text: "OBJECTIVE: To assess ..."
    r"^(?:objectives?|aims?|purposes?|goals?|hypothes[ie]s|questions?)\s*[:.\-]",
    # "To determine whether ...", "In order to assess the ..."
    rf"^(?:in\s+order\s+)?to\s+(?:better\s+)?{_AIM_VERB}\b",
    # "We sought to ...", "We aimed to ...", "The authors set out to ..."
    r"\b(?:we|i|the\s+authors|investigators|researchers)\s+(?:therefore\s+|thus\s+|then\s+|"
    r"now\s+|here\s+)?(?:sought|aimed|aim|set\s+out|wanted|wished|attempted|tried|intended|"
    r"planned|proposed|undertook)\s+to\b",
    # "We hypothesised that ...", "It was hypothesized that ...", "Our hypothesis was that"
    # (past tense only: "we hypothesize that ..." closing an abstract reads its findings)
    r"\b(?:we|i|it\s+(?:was|had\s+been))\s+(?:\w+\s+)?"
    r"(?:hypothesi[sz]ed|postulated|predicted|speculated|conjectured)\b",
    r"\b(?:our|the|this|a)\s+(?:\w+\s+)?(?:hypothesis|hypotheses|research\s+question)\s+"
    r"(?:was|is|were|are)\b",
    # "We tested whether ...", "This study examined whether ..."
    rf"\b(?:we|this\s+\w+|the\s+present\s+\w+|the\s+current\s+\w+|our\s+\w+)\s+"
    rf"(?:\w+\s+)?(?:{_AIM_VERB}[sd]?|tested|asked|investigated|examined|explored|"
    rf"evaluated|assessed|analy[sz]ed|determined)\s+(?:whether|if)\b",
    # "This study was designed to ...", "The trial aimed to ..."
    r"\b(?:study|trial|work|analysis|review|experiment|paper|report|project|survey)\s+"
    r"(?:was|is)?\s*(?:designed|conducted|undertaken|performed|carried\s+out|aimed|aims|"
    r"sought|seeks)\s+to\b",
    # "It is unclear whether ...", "Whether X ... remains unknown."
    r"\b(?:it\s+(?:is|was|remains)|remains?|remained)\s+(?:\w+\s+)?"
    r"(?:unclear|unknown|uncertain|not\s+known|not\s+clear|to\s+be\s+determined|"
    r"controversial|debated|an\s+open\s+question)\b",
    # "... to evaluate the hypothesis that X enhances Y", "We tested the idea that ..."
    rf"\b(?:{_AIM_VERB}|tested|evaluated|examined|investigated|explored|addressed)\s+the\s+"
    r"(?:\w+\s+)?(?:hypothesis|hypotheses|possibility|idea|notion|prediction)\s+that\b",
    # "The records of 14 patients were reviewed retrospectively to analyze the outcome"
    r"\b(?:was|were)\s+(?:\w+\s+)?(?:reviewed|collected|recorded|analy[sz]ed|studied|"
    rf"examined|followed|enrolled|recruited|surveyed|interviewed)\s+(?:\w+\s+)?to\s+{_AIM_VERB}\b",
    # "..., but the results are inconclusive": what earlier studies asked, still open
    r"\b(?:results?|findings?|evidence|data)\s+(?:\w+\s+)?(?:are|is|were|was|remains?|"
    r"remained)\s+(?:\w+\s+)?(?:inconclusive|conflicting|contradictory|controversial)\b",
    r"^whether\b",
    r"\?\s*$",
)
_AIM_RE = re.compile("|".join(f"(?:{p})" for p in _AIM_PATTERNS), re.IGNORECASE)


def is_aim(sentence: str) -> bool:
    """Whether ``sentence`` states an aim, a hypothesis or an open question, not a finding.

    Args:
        sentence: one sentence (a premise sentence or a claim).

    Returns:
        True for sentences such as "We sought to determine whether X is associated with Y",
        "The aim of this study was to ...", "OBJECTIVE: To assess ...", "We hypothesised
        that ...", "It remains unclear whether ...", or a question.
    """
    return bool(_AIM_RE.search(sentence.strip()))


def aim_sentences(text: str, spans: tuple[tuple[int, int], ...]) -> frozenset[int]:
    """Indices of the sentences of ``text`` (given as half-open ``spans`` into it) that state
    an aim, a hypothesis or an open question (:func:`is_aim`)."""
    return frozenset(i for i, (start, end) in enumerate(spans) if is_aim(text[start:end]))
