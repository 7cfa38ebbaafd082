"""The rules of issue 39 on real passages: claim parts, figures bound to their subject,
negation read both ways, and the one flow that turns findings into a shown label.

The passages are real SciFact corpus abstracts and PubMedQA contexts (sentences quoted from
``models/data/paraphrase_dev.jsonl``, which holds them whole); the claims are worded as a
chatbot words them. The end-to-end cases run the real bundled verifier."""

from __future__ import annotations

import pytest

from verifai_desktop.domain import NliLabel, ShownLabel
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import verify_pairs
from verifai_desktop.verify.checks import ALL_CHECKS
from verifai_desktop.verify.figures import figure_findings, figures_rule
from verifai_desktop.verify.finding import Effect, Finding
from verifai_desktop.verify.negation import (
    matching_clause,
    negates,
    negation_rule,
    positive_form,
    positive_pair,
)
from verifai_desktop.verify.nli import OnnxVerifier
from verifai_desktop.verify.parts import claim_parts
from verifai_desktop.verify.rules import findings, reasons, shown_with

T = VerifySettings(support_threshold=0.4, contradict_threshold=0.6)

# SciFact corpus (variant Creutzfeldt-Jakob disease, appendix survey), two sentences.
PRION = (
    "RESULTS Of the 32,441 appendix samples 16 were positive for abnormal PrP, indicating an "
    "overall prevalence of 493 per million population (95% confidence interval 282 to 801 per "
    "million). The prevalence in those born in 1941-60 (733 per million, 269 to 1596 per "
    "million) did not differ significantly from those born between 1961 and 1985 (412 per "
    "million, 198 to 758 per million) and was similar in both sexes and across the three broad "
    "geographical areas sampled."
)
# PubMedQA context (poster campaigns on antibiotic use), one sentence.
POSTERS = (
    "Among English respondents, there was a small increase in recollection of campaign posters "
    "(2009 23.7% versus 2008 19.2%; P = 0.03), but this increase was only 2.3% higher in "
    "England than in Scotland."
)
# SciFact corpus (cystic fibrosis mice, rosiglitazone), two sentences.
ROSIGLITAZONE = (
    "Treatment of Cftr-deficient mice with the synthetic PPAR-gamma ligand rosiglitazone "
    "partially normalizes the altered gene expression pattern associated with Cftr deficiency "
    "and reduces disease severity. Rosiglitazone has no effect on chloride secretion in the "
    "colon, but it increases expression of the bicarbonate transporter and of components "
    "of the mucus layer."
)


def test_a_sentence_with_two_findings_is_cut_where_the_second_begins() -> None:
    parts = claim_parts(
        "The registry holds 12M records, and full text is available for 8M of them."
    )
    assert [p.text for p in parts] == [
        "The registry holds 12M records",
        "full text is available for 8M of them.",
    ]
    claim = "The registry holds 12M records, and full text is available for 8M of them."
    assert [claim[a:b] for a, b in (p.span for p in parts)] == [p.text for p in parts]
    # one predicate with two subjects, a list of figures, brackets: one part
    for one in (
        "Smoking and obesity increased the risk of stroke.",
        "Mortality was 12% in the treated arm and 30% in the control arm.",
        "Patients given statins (n = 20, and older) had fewer events.",
        "Yes, and it works.",
        # a generated answer quoting a passage (PubMedQA 26518378, a dev figure question)
        'The second passage states: "The 83 reviews by cited reviewers (8.3%) had a mean score '
        'of 2.8 (SD 1.4); the 916 reviews by noncited reviewers (91.7%), 2.5."',
    ):
        assert [p.text for p in claim_parts(one)] == [one]


def test_a_figure_given_for_a_neighbouring_group_is_bound_to_that_groups_value() -> None:
    claim = (
        "For people born from 1941 to 1960, the survey estimated a prevalence of 493 per million."
    )
    (finding,) = figure_findings(claim, PRION)
    assert finding.stated is None and finding.rival is not None
    assert finding.rival.text == "733"
    (red,) = figures_rule(claim, PRION, PRION, NliLabel.SUPPORT)
    assert red.effect is Effect.RED
    assert red.reason.startswith("the figure 493: the passage gives 733 here")
    # the same figure for its own subject is stated
    right = "The survey put the overall prevalence at about 493 per million people."
    assert figures_rule(right, PRION, PRION, NliLabel.SUPPORT) == ()


def test_a_share_of_the_wrong_year_is_red_and_the_right_year_is_stated() -> None:
    wrong = (
        "In 2008, before the campaigns ran, 23.7% of English respondents remembered the posters."
    )
    (red,) = figures_rule(wrong, POSTERS, POSTERS, NliLabel.SUPPORT)
    assert red.effect is Effect.RED and "19.2%" in red.reason
    right = "In 2009, 23.7% of English respondents remembered the campaign posters."
    assert figures_rule(right, POSTERS, POSTERS, NliLabel.SUPPORT) == ()


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Mean age was about 63 years.", "Mean age was 62.9 years."),  # rounding
        ("The IC50 was 10.4 uM in the assay.", "The IC50 in the assay was 10,395 nM."),
        ("About 72% of the patients were men.", "Of 122 patients, 88 patients were men."),
        ("The analysis covered 257 patients.", "The analysis covered 169 men and 88 women."),
        ("The virus stayed viable for 2 days on steel.", "It was viable for 48 hours on steel."),
    ],
)
def test_equivalent_forms_of_a_figure_count_as_stated(claim: str, evidence: str) -> None:
    found = figure_findings(claim, evidence)
    assert found and all(f.stated is not None and f.rival is None for f in found), found


def test_a_figure_in_another_unit_of_the_same_dimension_is_red() -> None:
    evidence = "Americans eat, on average, 5.4 kg of sugar candy per person annually."
    claim = "On average, Americans eat about 5.4 grams of sugar candy per person each year."
    (red,) = figures_rule(claim, evidence, evidence, NliLabel.SUPPORT)
    assert red.effect is Effect.RED and "5.4 kg" in red.reason


def test_negation_is_read_both_ways_on_a_real_passage() -> None:
    assert negates("Rosiglitazone has no effect on chloride secretion in the colon")
    assert not negates("women without Medicaid insurance were more often hypothyroid")
    dropped = "Rosiglitazone treatment increased chloride secretion in the mouse colon."
    (red,) = negation_rule(dropped, ROSIGLITAZONE, ROSIGLITAZONE, NliLabel.SUPPORT)
    assert red.effect is Effect.RED
    assert red.reason == (
        'the passage negates it: "Rosiglitazone has no effect on chloride secretion in the colon"'
    )
    kept = "Rosiglitazone did not affect chloride secretion in the colon."
    assert negation_rule(kept, ROSIGLITAZONE, ROSIGLITAZONE, NliLabel.SUPPORT) == ()
    pair = positive_pair(kept, ROSIGLITAZONE)
    assert pair is not None
    window, claim = pair
    assert claim == "Rosiglitazone did affect chloride secretion in the colon."
    assert "Rosiglitazone has effect on chloride secretion" in window
    added = "Rosiglitazone did not reduce disease severity in Cftr-deficient mice."
    (red,) = negation_rule(added, ROSIGLITAZONE, ROSIGLITAZONE, NliLabel.SUPPORT)
    assert red.effect is Effect.RED and red.reason.startswith("the sentence negates")


def test_the_clause_a_claim_speaks_of_is_never_a_statement_of_aim() -> None:
    text = (
        "METHODS We assessed whether statin treatment is associated with postoperative AKI. "
        "RESULTS Statin treatment was not associated with postoperative AKI (odds ratio 0.79)."
    )
    match = matching_clause("Statin treatment is not associated with postoperative AKI.", text)
    assert match.clause.startswith("RESULTS Statin treatment was not associated")
    assert match.claim_negates and match.clause_negates


@pytest.mark.parametrize(
    ("text", "positive"),
    [
        ("X is not associated with Y.", "X is associated with Y."),
        ("No significant association was found.", "significant association was found."),
        (
            "Complications were similar between cohorts.",
            "Complications were different between cohorts.",
        ),
        ("The cells were unable to form podosomes.", "The cells were able to form podosomes."),
        ("Neither age nor sex influenced progression.", "age and sex influenced progression."),
    ],
)
def test_positive_forms(text: str, positive: str) -> None:
    assert positive_form(text) == positive


def test_findings_decide_the_shown_label_in_one_place() -> None:
    red = Finding("figures", Effect.RED, "the figure 48 hours: the passage gives 4 hours here")
    hold = Finding("figures", Effect.HOLD, "the figure 3 is not stated for the same subject")
    assert shown_with(0.9, 0.05, 0.05, (red,), T) is ShownLabel.CONTRADICT
    assert reasons((red, hold), ShownLabel.CONTRADICT) == (red.reason,)
    assert shown_with(0.9, 0.05, 0.05, (hold,), T) is ShownLabel.UNSURE
    assert reasons((hold,), ShownLabel.UNSURE) == (hold.reason,)
    assert shown_with(0.9, 0.05, 0.05, (), T) is ShownLabel.SUPPORT
    # every rule runs through findings(): a copied sentence with one figure changed is red
    window = "Fluoroscopy was required in 6 patients (4%) for a calcified stricture."
    found = findings(window.replace("6 patients", "13 patients"), window, window,
                     NliLabel.SUPPORT, ALL_CHECKS)  # fmt: skip
    assert any(f.effect is Effect.RED and f.rule == "aligned" for f in found)


def test_real_verifier_a_wrong_second_part_makes_the_sentence_red(bundled: OnnxVerifier) -> None:
    claim = (
        "Of the 32,441 appendix samples 16 were positive for abnormal PrP, and the prevalence in "
        "those born in 1941-60 was 412 per million."
    )
    result = verify_pairs(bundled, [(PRION, claim)], granularity="sentences", thresholds=T)
    assert result.shown == (ShownLabel.CONTRADICT,)
    assert result.flags[0][0].startswith('part 1 of 2, "Of the 32,441 appendix samples 16')
    assert result.flags[0][1].startswith('part 2 of 2, "the prevalence in those born in 1941-60')
    assert result.flags[0][1].endswith(": contradicted")


def test_real_verifier_negation_both_ways(bundled: OnnxVerifier) -> None:
    """The issue's case built from a real passage: the claim that keeps the passage's "no
    effect" is not red, the one that drops it is red, on the same passage."""
    items = [
        (ROSIGLITAZONE, "Rosiglitazone did not affect chloride secretion in the colon."),
        (ROSIGLITAZONE, "Rosiglitazone increased chloride secretion in the colon."),
    ]
    result = verify_pairs(bundled, items, granularity="sentences", thresholds=T)
    assert result.shown[1] is ShownLabel.CONTRADICT
    assert result.shown[0] is not ShownLabel.CONTRADICT


NEGATIVE_ON_AN_ION = (
    "The alternative inflammasome did not depend on K+ efflux and did not induce pyroptosis."
)
INFLAMMASOME = (  # SciFact corpus abstract 34469966 (ODC-By 1.0), paraphrase dev a-153
    'Indeed, in human monocytes, lipopolysaccharide triggered an "alternative inflammasome" '
    "that relied on NLRP3-ASC-caspase-1 signaling, yet was devoid of any classical inflammasome "
    "characteristics including pyroptosome formation, pyroptosis induction, and K(+) efflux "
    "dependency. Genetic dissection of the underlying signaling pathway in a monocyte "
    "transdifferentiation system revealed that alternative inflammasome activation was "
    "propagated by TLR4-TRIF-RIPK1-FADD-CASP8 signaling upstream of NLRP3."
)


def test_an_ions_bracketed_charge_does_not_cut_the_clause_a_negative_claim_speaks_of() -> None:
    match = matching_clause(NEGATIVE_ON_AN_ION, INFLAMMASOME)
    assert match.clause.startswith("was devoid of any classical inflammasome")
    assert "and K(+) efflux dependency" in match.clause
    assert match.claim_negates and match.clause_negates


def test_real_verifier_a_negative_claim_on_a_charged_ion_is_green(bundled: OnnxVerifier) -> None:
    items = [(INFLAMMASOME, NEGATIVE_ON_AN_ION)]
    result = verify_pairs(bundled, items, granularity="sentences", thresholds=T)
    assert result.shown == (ShownLabel.SUPPORT,)
