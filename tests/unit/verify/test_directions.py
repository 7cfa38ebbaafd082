"""The direction rule (issue 39, two facts with one wrong): "lowered ROS levels" against a
passage saying "elevated ROS levels" is red; the right twin and other changes are not read as
reversed.

Passages: SciFact abstract 1686997 (ODC-By 1.0) and PubMedQA PQA-L contexts 24809662 and
19299238 (MIT licence, as ``models/data/README.md`` says), with claims of the paraphrase dev
set (a-110 / a-111, b-129 / b-130, b-73 / b-74), cut to the sentences that bear on them; the
other opposite words on SciFact abstracts 34469966 and 38485364 (a-157, a-87).
"""

from __future__ import annotations

from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.checks import ALL_CHECKS, Checks
from verifai_desktop.verify.directions import direction_rule, reversed_change
from verifai_desktop.verify.finding import Effect
from verifai_desktop.verify.rules import findings

PGD = (
    "We found that suppression of 6PGD decreased lipogenesis and RNA biosynthesis and elevated "
    "ROS levels in cancer cells, attenuating cell proliferation and tumour growth."
)
SLING = (
    "Of 151 women, 67 (44 %) underwent MUS-only and 84 (56 %) underwent MUS + AA. The MUS-only "
    "cohort was younger and had less severe baseline prolapse (p < 0.05 for both)."
)
AROMATASE = (
    "Similarly, the group receiving tamoxifen before AIs had fewer patients with arthralgia or "
    "generalized bone pain/myalgia or bone fracture (P<.001). Furthermore, the group receiving "
    "AIs plus Ca/Bis had more patients without musculoskeletal symptoms and had fewer fractures."
)


def test_a_change_the_passage_gives_the_other_way_is_red_with_its_sentence() -> None:
    found = direction_rule("it lowered ROS levels in cancer cells.", PGD, PGD, NliLabel.SUPPORT)
    assert [(f.rule, f.effect) for f in found] == [("directions", Effect.RED)]
    assert "elevated ROS levels" in found[0].reason
    part = "they had more severe prolapse at baseline."
    assert "less severe baseline prolapse" in (reversed_change(part, SLING) or "")
    part = "patients given calcium or bisphosphonates had more fractures."
    assert "had fewer fractures" in (reversed_change(part, AROMATASE) or "")


def test_the_same_direction_and_other_changes_are_not_read_as_reversed() -> None:
    assert reversed_change("it raised ROS levels.", PGD) is None
    assert reversed_change("Suppressing 6PGD cut lipogenesis and RNA biosynthesis", PGD) is None
    assert reversed_change("they had less severe prolapse at baseline.", SLING) is None
    part = "Adding calcium or bisphosphonates to AIs left fewer of them with fractures."
    assert reversed_change(part, AROMATASE) is None


def test_a_negated_change_a_comparator_and_a_change_of_a_loss_are_not_read() -> None:
    # a negated direction word is the negation rule's; "more than" before a figure the
    # figures rule's; "more weight loss" is less weight
    assert reversed_change("it did not lower ROS levels in cancer cells.", PGD) is None
    assert reversed_change("ROS levels were more than 2 times higher.", PGD) is None
    window = "Compared with placebo, orlistat reduced weight by 2.9 kg."
    assert reversed_change("Orlistat produced about 2.9 kg more weight loss.", window) is None


def test_the_rule_runs_in_the_verification_path_and_can_be_switched_off() -> None:
    part = "it lowered ROS levels in cancer cells."
    assert any(f.rule == "directions" for f in findings(part, PGD, PGD, NliLabel.SUPPORT))
    off = Checks(directions=False)
    assert not any(f.rule == "directions" for f in findings(part, PGD, PGD, NliLabel.SUPPORT, off))
    assert ALL_CHECKS.directions


# SciFact abstracts 34469966 (the alternative inflammasome) and 38485364 (Tks5/Fish).
INFLAMMASOME = (
    "Genetic dissection of the underlying signaling pathway in a monocyte transdifferentiation "
    "system revealed that alternative inflammasome activation was propagated by "
    "TLR4-TRIF-RIPK1-FADD-CASP8 signaling upstream of NLRP3."
)
TKS5 = (
    "Tks5/Fish expression was also required for protease-driven matrigel invasion in human "
    "cancer cells."
)


def test_other_opposite_words_are_read_as_the_other_way() -> None:
    wrong = "the TLR4-TRIF-RIPK1-FADD-CASP8 cascade acted downstream of NLRP3."
    (found,) = direction_rule(wrong, INFLAMMASOME, INFLAMMASOME, NliLabel.SUPPORT)
    assert found.effect is Effect.RED and "upstream of NLRP3" in found.reason
    assert reversed_change(wrong.replace("downstream", "upstream"), INFLAMMASOME) is None
    wrong = "it proved dispensable for protease-driven Matrigel invasion."
    assert "required for protease-driven" in (reversed_change(wrong, TKS5) or "")
    assert reversed_change("it proved essential for protease-driven invasion.", TKS5) is None
    # opposite words of two different pairs are not read against each other
    assert reversed_change("it proved dispensable for protease-driven invasion.", PGD) is None
    assert reversed_change("it worsened protease-driven matrigel invasion.", TKS5) is None
