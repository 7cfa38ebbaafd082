"""The name rule (issue 39): a sentence the passage says of one named subject is no support for
the same words said of another.

Passages: SciFact abstracts 30303335 and 18956141 (cited by SciFact dev/train claims; ODC-By
1.0, as ``models/data/README.md`` says), with claims of the name-binding dev set
(``models/data/name_binding_dev.jsonl``, n-51/n-52 and n-55/n-56), and the abstract of the
paraphrase dev set's a-50.
"""

from __future__ import annotations

from verifai_desktop.domain import NliLabel
from verifai_desktop.verify.finding import Effect
from verifai_desktop.verify.names import (
    anchor_sentence,
    name_rule,
    names,
    spelled_out,
    swap_rule,
    swapped_pair,
)

NFAT = (
    "NFAT1 is rephosphorylated (deactivated) more slowly than NFAT4 in both cytoplasm and "
    "nucleus, enabling a more prolonged activation phase. Oscillations in cytoplasmic Ca2+, long "
    "considered the physiological form of Ca2+ signaling, play no role in activating either NFAT "
    "protein. Instead, effective sustained physiological activation of NFAT4 is tightly linked to "
    "oscillations in nuclear Ca2+."
)
NEMO = (
    "IEC-specific ablation of nuclear factor κB (NF-κB) essential modulator (NEMO) caused Paneth "
    "cell apoptosis and impaired antimicrobial factor expression in the ileum, as well as "
    "colonocyte apoptosis and microbiota-driven chronic inflammation in the colon. Combined RelA, "
    "c-Rel, and RelB deficiency in IECs caused Paneth cell apoptosis but not colitis, suggesting "
    "that NEMO prevents colon inflammation by NF-κB-independent functions."
)
HSC = (
    "Here we tested these hypotheses in haematopoietic stem cells (HSCs), which can be highly "
    "purified using well characterized markers. We administered BrdU to newborn mice, mice "
    "treated with cyclophosphamide and granulocyte colony-stimulating factor, and normal adult "
    "mice for 4 to 10 days, followed by 70 days without BrdU. In each case, less than 6% of HSCs "
    "retained BrdU and less than 0.5% of all BrdU-retaining haematopoietic cells were HSCs, "
    "revealing that BrdU has poor specificity and poor sensitivity as an HSC marker."
)


def test_names_are_words_with_inner_capitals_not_headings_or_statistics() -> None:
    text = "METHODS AND RESULTS In SCID mice, IL-6 and HIV-positive SciBERT (95% CI, OR 1.2)"
    assert names(text) == ("SCID", "IL-6", "HIV", "SciBERT")
    assert spelled_out("HSCs", "under 6% of haematopoietic stem cells retained BrdU")
    assert not spelled_out("HSCs", "under 6% of stem cells retained BrdU")


def test_a_finding_said_of_another_named_subject_is_held_back() -> None:
    wrong = "Oscillations in nuclear Ca2+ are tightly coupled to the sustained physiological "
    wrong += "activation of NFAT1."
    found = name_rule(wrong, NFAT, NFAT, NliLabel.SUPPORT)
    assert [(f.rule, f.effect) for f in found] == [("names", Effect.HOLD)]
    assert found[0].reason == "the passage says this of NFAT4, not NFAT1"
    right = wrong.replace("NFAT1", "NFAT4")
    assert name_rule(right, NFAT, NFAT, NliLabel.SUPPORT) == ()
    # only a SUPPORT guess is held back: the rule shows nothing red by itself
    assert name_rule(wrong, NFAT, NFAT, NliLabel.CONTRADICT) == ()


def test_the_anchor_is_the_sentence_saying_what_the_part_says() -> None:
    wrong = "Deleting RelA specifically in IECs led to colonocyte apoptosis and chronic, "
    wrong += "microbiota-driven inflammation of the colon."
    assert anchor_sentence(wrong, NEMO).startswith("IEC-specific ablation")
    found = name_rule(wrong, NEMO, NEMO, NliLabel.SUPPORT)
    assert len(found) == 1 and found[0].reason.endswith(", not RelA")  # of κB (NEMO's name)
    right = wrong.replace("RelA", "NEMO")
    assert name_rule(right, NEMO, NEMO, NliLabel.SUPPORT) == ()


def test_an_abbreviation_spelled_out_is_the_same_subject() -> None:
    # the sentence naming "HSCs" is about the claim's "haematopoietic stem cells", and the
    # claim's BrdU is in the window: nothing is held back
    claim = "After the 70-day label-free period, under 6% of haematopoietic stem cells still "
    claim += "retained BrdU."
    assert name_rule(claim, HSC, HSC, NliLabel.SUPPORT) == ()


# SciFact corpus abstract 4961038 (PIK3CA hotspots; paraphrase dev a-107).
HOTSPOTS = (
    "Somatic mutations that activate phosphoinositide 3-kinase (PI3K) have been identified in "
    "the p110-alpha catalytic subunit (encoded by PIK3CA). They are most frequently observed in "
    "two hotspots: the helical domain (E545K and E542K) and the kinase domain (H1047R)."
)


def test_attributes_exchanged_between_two_names_are_held_back() -> None:
    (found,) = swap_rule(
        "The H1047R hotspot lies in the helical domain", HOTSPOTS, HOTSPOTS, NliLabel.SUPPORT
    )
    assert found.effect is Effect.HOLD
    assert "not H1047R" in found.reason and "the helical domain (E545K" in found.reason
    assert swapped_pair("E545K and E542K are in the kinase domain.", HOTSPOTS) is not None
    # the right binding, and a CONTRADICT guess, are left alone
    for right in ("The H1047R hotspot lies in the kinase domain", "E545K is in the helical domain"):
        assert swap_rule(right, HOTSPOTS, HOTSPOTS, NliLabel.SUPPORT) == (), right
    wrong = "The H1047R hotspot lies in the helical domain"
    assert swap_rule(wrong, HOTSPOTS, HOTSPOTS, NliLabel.CONTRADICT) == ()
    # a word found only near another name, in no parallel phrase, is no swap
    window = "GLI2 was expressed in basal cell carcinomas, as well as AIRE in the thymus."
    assert swapped_pair("AIRE is expressed in some skin carcinomas.", window) is None
