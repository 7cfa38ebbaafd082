"""Issue 39, eighth round: conflicts that are real.

Each case is a false conflict the app showed in the answers to the 50 dev figure questions
(``models/shown_conflicts.py``; PubMedQA PQA-L contexts, MIT, quoted here), and each test checks
the rule both ways: the false conflict is gone, and the real error of the same kind is still
caught."""

from __future__ import annotations

from tests.unit.verify.test_rules_binding import DISTRESS
from verifai_desktop.domain import NliLabel, ShownLabel, Verdict
from verifai_desktop.settings import VerifySettings
from verifai_desktop.verify.check import verify_pairs
from verifai_desktop.verify.checks import aligned_changes, figures_verbatim
from verifai_desktop.verify.figure_subjects import figures
from verifai_desktop.verify.figures import NO_FIGURE_HERE, figure_findings, figures_rule
from verifai_desktop.verify.finding import Effect
from verifai_desktop.verify.labels import conflicts_with
from verifai_desktop.verify.nli import OnnxVerifier
from verifai_desktop.verify.parts import claim_parts
from verifai_desktop.verify.rules import findings

# PubMedQA PMID 26175531 (dev figure question f-2): aspiration thrombectomy, a meta-analysis.
STROKE = (
    "Aspiration thrombectomy was associated with a nonsignificant increase in the risk of stroke "
    "0.6% versus 0.4% (RR, 1.45; 95% CI, 0.96-2.21; P=0.08)."
)
# PubMedQA PMID 23792130 (f-20): detection rate by prostate volume, the chunk the answer cites;
# the abstract has no comma between 46.9% and 33.3%.
PROSTATE = (
    "The overall detection rate of the magnetic resonance-ultrasound fusion platform was 55%. "
    "For prostates less than 40 cc the detection rate was 71.1% compared to 57.5%, 46.9%, 46.9% "
    "33.3%, 36.4% and 30.4% for glands 40 to 54.9, 55 to 69.9, 70 to 84.9, 85 to 99.9, 100 to "
    "114.9 and 115 cc or greater, respectively (p<0.0001). Multivariable logistic regression "
    "showed a significant inverse association of magnetic resonance imaging volume with prostate "
    "cancer detection, controlling for age and prostate specific antigen."
)
PROSTATE_ANSWER = (
    "The cancer detection rate of MR-ultrasound fusion biopsy for prostates smaller than 40 cc "
    "was 71.1% compared to 57.5%, 46.9%, 46.9%, 33.3%, 36.4%, and 30.4% for glands 40 to 54.9, "
    "55 to 69.9, 70 to 84.9, 85 to 99.9, 100 to 114.9 and 115 cc or greater, respectively "
    "(p<0.0001)."
)  # the bundled generator's sentence
# PubMedQA PMID 17076590 (f-27): a table caption, the chunk without its figures.
CAPTION = (
    "The percentage of the total yearly prescriptions for nonsteroidal anti-inflammatory drugs "
    "(NSAIDs), antihistamines, and acid-relief medications that consisted of focus-COX-2 NSAIDs, "
    "nonsedating antihistamines, and proton pump inhibitors (PPIs), respectively."
)
T = VerifySettings(contradict_threshold=0.5, support_threshold=0.6)


def _red(*flags: str) -> Verdict:
    return Verdict(0, NliLabel.CONTRADICT, 0.2, 0.7, 0.1, shown=ShownLabel.CONTRADICT, flags=flags)


def test_a_sentence_with_figures_is_listed_as_conflicting_only_on_a_rules_finding() -> None:
    """f-45: "The respective times of median recurrence-free survival were 67.2, 16.0, and 9.4
    months" read as contradicting "... of the matched group ... was 16.0 months" (P 0.61): the
    figures rule found the sentence's figure stated, so nothing lines up against it."""
    claim = "The median recurrence-free survival of the matched group was 16.0 months."
    assert not conflicts_with(_red(), T, claim)
    assert not conflicts_with(_red('part 1 of 2, "...": contradicted'), T, claim)
    assert conflicts_with(
        _red("the figure 16.0 months: the passage gives 9.4 months here"), T, claim
    )
    # a sentence without figures keeps the verifier's own contradiction (the registry note of
    # tests/unit/test_recite_real.py), and so does a caller that gives no claim
    assert conflicts_with(_red(), T, "PE was a rare cause of death in injured patients.")
    assert conflicts_with(_red(), T)


def test_a_figure_changed_inside_a_statistics_bracket_of_another_outcome_is_no_change() -> None:
    """f-2: the claim follows the passage only in "(RR, ...; 95% CI, ...; P=...)"; the stroke
    sentence reports another outcome than the claim's stent thrombosis."""
    claim = (
        "The meta-analysis of STEMI trials found that patients who had aspiration thrombectomy "
        "before PCI had a stent thrombosis rate of 0.9% compared to 1.2% (RR, 0.82; 95% CI, "
        "0.62-1.08; P=0.15)."
    )
    assert aligned_changes(claim, STROKE) == ()
    # the passage's own sentence with its ratio changed is still caught
    edited = STROKE.replace("1.45", "1.55")
    assert aligned_changes(edited, STROKE) == ("the figure 1.55 where the evidence has 1.45",)
    # and so is a figure framed by words, however little else of the claim aligns
    paraphrase = "Strokes were more common after thrombectomy, 0.9% versus 0.4% (RR, 1.45)."
    assert aligned_changes(paraphrase, STROKE) == ()  # "% versus" is no word frame
    worded = "After thrombectomy the risk of stroke 0.9% versus 0.4% was reported."
    assert aligned_changes(worded, STROKE) == ("the figure 0.9 where the evidence has 0.6",)


def test_a_list_whose_members_open_with_for_gives_the_first_member_only_its_own_words() -> None:
    """f-48: "... the lowest quartile were for myocardial infarction 2.34 (...), for depression
    2.50 (...)": the first member's item was "lowest quartile myocardial infarction", so a claim
    about depression in the lowest quartile was bound to 2.34."""
    claim = (
        "The relative risk of disability due to depression for farmers in the highest versus "
        "the lowest quartile of psychological distress was for depression 2.50 (95% CI: "
        "1.09-5.72)."
    )  # the bundled generator's sentence
    assert all(f.rival is None for f in figure_findings(claim, DISTRESS))
    first = next(f for f in figures(DISTRESS) if f.mention.text == "2.34")
    assert first.item == {"myocardial", "infarction"}
    # both wrong bindings are still red
    wrong = claim.replace("2.50", "2.34")
    reasons = [f.reason for f in figures_rule(wrong, DISTRESS, DISTRESS, NliLabel.SUPPORT)]
    assert "the figure 2.34: the passage gives 2.50 here" in reasons[0]
    other = (
        "For myocardial infarction, the relative risk of disability in the highest versus the "
        "lowest quartile was 2.50."
    )
    (found,) = figures_rule(other, DISTRESS, DISTRESS, NliLabel.SUPPORT)
    assert found.effect is Effect.RED and "the passage gives 2.34 here" in found.reason


def test_a_respectively_list_is_one_part_and_a_verbatim_one_is_not_read_against_itself() -> None:
    """f-20: the generator copied the passage's sentence (adding a comma) and was shown red: cut
    at ", and 30.4%" its first part lost the list's items, and the passage's missing comma bound
    36.4% to the glands of the next clause."""
    assert len(claim_parts(PROSTATE_ANSWER)) == 1
    # a sentence with two findings is still cut
    assert (
        len(claim_parts("Detection fell with volume, and biopsies were fewer in large glands."))
        == 2
    )
    # the passage read alone binds 36.4% to another value; the window (the chunk's three
    # sentences) writes it word for word
    assert any(f.rival is not None for f in figure_findings(PROSTATE_ANSWER, PROSTATE))
    assert figures_verbatim(PROSTATE_ANSWER, PROSTATE)
    assert not [f for f in findings(PROSTATE_ANSWER, PROSTATE, PROSTATE, NliLabel.SUPPORT)
                if f.rule == "figures"]  # fmt: skip
    # a figure or its unit changed is no verbatim copy, and the figures rule reads it
    assert not figures_verbatim(PROSTATE_ANSWER.replace("36.4%", "38.4%"), PROSTATE)
    assert not figures_verbatim(PROSTATE_ANSWER.replace("115 cc", "115 ml"), PROSTATE)


def test_a_window_without_figures_does_not_contradict_a_sentence_with_figures() -> None:
    """f-27: a bare table caption read as contradicting "In the control clinic, 77.5% of ...
    were for nonsedating antihistamines" (P 0.73)."""
    claim = "In the control clinic, 77.5% of the antihistamine prescriptions were nonsedating ones."
    found = figures_rule(claim, CAPTION, CAPTION, NliLabel.CONTRADICT)
    assert [(f.effect, f.reason) for f in found] == [(Effect.HOLD, NO_FIGURE_HERE)]
    assert NO_FIGURE_HERE not in [f.reason for f in figures_rule(claim, CAPTION, CAPTION,
                                                                 NliLabel.SUPPORT)]  # fmt: skip
    plain = "In the control clinic, antihistamine prescriptions were mostly nonsedating ones."
    assert figures_rule(plain, CAPTION, CAPTION, NliLabel.CONTRADICT) == ()


def test_a_passage_stating_the_figures_word_for_word_is_no_conflict_through_a_shorter_window(
    bundled: OnnxVerifier,
) -> None:
    """f-20 with the bundled verifier: the chunk's three sentences support the copied sentence,
    and its middle sentence alone (where the missing comma binds 36.4% to 71.1%) was listed
    beside the support as conflicting evidence."""
    result = verify_pairs(bundled, [(PROSTATE, PROSTATE_ANSWER)], granularity="sentences")
    assert result.shown[0] is ShownLabel.SUPPORT
    assert result.conflict(0, PROSTATE, 1) is None
    # the middle sentence alone is still red: it is the support that decides
    middle = PROSTATE.split(". ")[1] + "."
    alone = verify_pairs(bundled, [(middle, PROSTATE_ANSWER)], granularity="passage")
    assert alone.shown[0] is ShownLabel.CONTRADICT


# PubMedQA PMID 19712912 (f-28): the 80-hour workweek in New England surgical programs.
WORKWEEK = (
    "In all, 85% (17/20) of surgical programs in New England responded to the survey. The "
    "programs began to implement the 80-hour workweek from 2002 to 2004. Prior to the initiation "
    "of the 80-hour workweek, residency programs emphasized weekly didactic sessions given by "
    "attending physicians (88%), mock orals (88%), and conventional journal club (76%)."
)
# PubMedQA PMID 26518378 (f-47): reviewers cited in the manuscripts they review.
REVIEWS = (
    "The 83 reviews by cited reviewers (8.3%) had a mean score of 2.8 (SD 1.4); the 916 reviews "
    "by noncited reviewers (91.7%), 2.5 (1.2; Δ=0.3; 95% confidence interval [CI] 0 to 0.6). The "
    "mean score in the 117 reviews of the noncited reviewers of the 57 manuscripts that had both "
    "cited and noncited reviewers was 2.9 (SD 1.2) compared with 2.9 (SD 1.1) for the 68 reviews "
    "by cited reviewers (Δ=0; 95% CI -0.3 to 0.4)."
)


def test_a_figure_of_the_time_before_an_event_is_no_rival_of_a_claim_about_after_it() -> None:
    """f-28: the passage gives 88% for the time before the workweek and nothing for after it;
    the sentence's 85% (the survey's response rate) is unstated, not bound to 88%."""
    after = (
        "After the 80-hour workweek was introduced, 85% of New England surgical programs held "
        "didactic sessions by attending physicians."
    )  # the bundled generator's sentence
    (found,) = figures_rule(after, WORKWEEK, WORKWEEK, NliLabel.SUPPORT)
    assert found.effect is Effect.HOLD and "not stated" in found.reason
    before = after.replace(
        "After the 80-hour workweek was introduced", "Before the 80-hour workweek"
    )
    (found,) = figures_rule(before, WORKWEEK, WORKWEEK, NliLabel.SUPPORT)
    assert found.effect is Effect.RED and "the passage gives 88% here" in found.reason


def test_the_non_group_is_no_rival_and_a_figure_written_twice_is_no_change() -> None:
    """f-47: "the 83 reviews by cited reviewers" was bound to "the 117 reviews of the noncited
    reviewers", and aligned word for word with "for the 68 reviews by cited reviewers" though
    the passage also writes "The 83 reviews by cited reviewers"."""
    claim = "The passage gives the mean desirability score for the 83 reviews by cited reviewers."
    assert all(f.rival is None for f in figure_findings(claim, REVIEWS))
    quoting = (
        "The passage that bears most on the question is the second passage, which states: "
        '"The 83 reviews by cited reviewers (8.3%) had a mean score of 2.8 (SD 1.4); the 916 '
        "reviews by noncited reviewers (91.7%), 2.5 (1.2; Δ=0.3; 95% confidence interval (CI) 0 "
        'to 0.6). " This passage provides the mean desirability score for the 83 reviews by cited '
        "reviewers, which is 2.8."
    )  # the bundled generator's sentence
    assert aligned_changes(quoting, REVIEWS) == ()
    # the noncited reviewers' figure for the cited ones is still red
    wrong = "The mean score for the 916 reviews by cited reviewers was 2.5."
    found = figures_rule(wrong, REVIEWS, REVIEWS, NliLabel.SUPPORT)
    assert any(f.effect is Effect.RED for f in found), found
    # a figure the window does not write elsewhere is still a change
    changed = "A mean score of 2.9 (SD 1.1) for the 86 reviews by cited reviewers was reported."
    assert "the figure 86 where the evidence has 68" in aligned_changes(changed, REVIEWS)
