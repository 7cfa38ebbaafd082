"""The universal-count rule (issue 39, a total for a sub-count): "all 680 families" is held back
when the passage counts 680 families without saying all of them had the finding.

Passages: PubMedQA PQA-L contexts 11247896, 23052500 and 23735520 (after the first 40
questions; MIT licence, as ``models/data/README.md`` says) and SciFact abstract 11705328
(ODC-By 1.0), with claims of the paraphrase dev set (b-21, b-148, b-173, a-17), cut to the
sentences that bear on them.
"""

from __future__ import annotations

from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.checks import ALL_CHECKS, Checks
from verifai_desktop.verify.finding import Effect
from verifai_desktop.verify.quantifiers import universal_counts, universal_rule
from verifai_desktop.verify.rules import findings

APC = (
    "We examined 680 unrelated FAP families for germline mutations in the APC gene. Clinical "
    "information was obtained from 1256 patients. APC mutations were detected in 48% (327/680) "
    "of families."
)
LAPAROSCOPY = (
    "Consequently, the yield of SL was 7 % (95 % confidence interval (CI), 3-17 %), and the "
    "accuracy was 27 % (95 % CI, 11-52 %). A biopsy of the contralateral liver was performed for "
    "45 patients who underwent SL, leading to changes in management for 4 patients (17 %) with "
    "cirrhosis."
)
FMRI = (
    "In 14 of the 22 examined patients (VS, n=5; MCS, n=9), a significant activation of the "
    "regions of interest (ROIs) of the mental imagery paradigm could be found. All 5 patients "
    "with activation of a significant blood oxygen level dependent signal, who were in a VS at "
    "the time of the fMRI examination, reached at least an MCS at the end of the observation "
    "period."
)
FOLIC = (
    "METHODS We randomized 151 patients with ischemic heart disease to 1 of 5 dosages of folic "
    "acid (0.2, 0.4, 0.6, 0.8, and 1.0 mg/d) or placebo."
)


def test_the_counts_a_sentence_quantifies_over_all_of() -> None:
    assert universal_counts("mutations in all 680 FAP families they examined") == (680.0,)
    assert universal_counts("Every one of the 404 patients carried one") == (404.0,)
    assert universal_counts("Each of the 151 patients took folic acid") == (151.0,)
    assert universal_counts("All five vegetative-state patients recovered") == (5.0,)
    assert universal_counts("In all, 680 families were examined") == ()
    assert universal_counts("mutations were found in 327 of 680 families") == ()


def test_all_of_a_count_the_passage_gives_as_examined_is_held_back() -> None:
    claim = "The researchers detected germline APC mutations in all 680 FAP families they examined."
    found = universal_rule(claim, APC.split(". ")[0], APC, NliLabel.SUPPORT)
    assert [(f.rule, f.effect) for f in found] == [("quantifiers", Effect.HOLD)]
    assert "all 680" in found[0].reason
    claim = "Biopsy of the contralateral liver changed management for all 45 patients who had it."
    assert universal_rule(claim, LAPAROSCOPY, LAPAROSCOPY, NliLabel.SUPPORT)
    claim = "Each of the 151 patients in the trial took a daily dose of folic acid."
    assert universal_rule(claim, FOLIC, FOLIC, NliLabel.SUPPORT)


def test_all_of_a_count_the_passage_says_all_of_is_kept() -> None:
    claim = "All five vegetative-state patients with activation reached at least a minimally "
    claim += "conscious state."
    assert universal_rule(claim, FMRI, FMRI, NliLabel.SUPPORT) == ()
    passage = "A biopsy was performed for 45 patients, leading to changes in management for 45/45."
    claim = "Biopsy changed management for all 45 patients who had it."
    assert universal_rule(claim, passage, passage, NliLabel.SUPPORT) == ()


def test_only_a_support_guess_is_held_and_the_rule_can_be_switched_off() -> None:
    claim = "The researchers detected germline APC mutations in all 680 FAP families they examined."
    assert universal_rule(claim, APC, APC, NliLabel.CONTRADICT) == ()
    assert universal_rule(claim, APC, APC, NliLabel.NO_EVIDENCE) == ()
    rules = {f.rule for f in findings(claim, APC, APC, NliLabel.SUPPORT, ALL_CHECKS)}
    assert "quantifiers" in rules
    off = Checks(quantifiers=False)
    assert "quantifiers" not in {f.rule for f in findings(claim, APC, APC, NliLabel.SUPPORT, off)}
