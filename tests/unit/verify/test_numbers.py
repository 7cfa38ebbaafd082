"""Figures in text and the same-subject number rule, on hand-made and real SciFact sentences."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SHARED_DATA
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.figure_subjects import unstated_numbers
from verifai_desktop.verify.numbers import (
    NumberMention,
    compatible_units,
    find_numbers,
    numeral_span,
    same_value,
)

LIST = "Tensile strength was 320 MPa for steel, 110 MPa for titanium and 45 MPa for aluminium."
RESPECTIVELY = (
    "The tensile strengths of steel, titanium and aluminium were 320, 110 and 45 MPa, respectively."
)
SEPSIS = "Of the 1,200 patients enrolled, 312 developed sepsis."


def figures(text: str) -> list[tuple[float, str]]:
    return [(m.value, m.unit) for m in find_numbers(text)]


def texts(mentions: tuple[NumberMention, ...]) -> list[str]:
    return [m.text for m in mentions]


def test_integers_decimals_separators_percent_and_negative_values() -> None:
    text = "Of 1,234 rats and 1 500 mice, 12.5 % gained -0.5 kg and 3·2% lost \u22121.25 kg."
    assert figures(text) == [
        (1234.0, "rats"),
        (1500.0, "mice"),
        (12.5, "%"),
        (-0.5, "kg"),
        (3.2, "%"),
        (-1.25, "kg"),
    ]
    mention = find_numbers(text)[2]
    assert mention.text == "12.5 %" and text[mention.span[0] : mention.span[1]] == "12.5 %"
    assert text[slice(*numeral_span(mention))] == "12.5"


def test_ranges_plus_minus_and_lists_give_each_figure_the_unit_written_last() -> None:
    assert figures("Doses of 10-20 mg were given for 3 to 6 months.") == [
        (10.0, "mg"),
        (20.0, "mg"),
        (3.0, "months"),
        (6.0, "months"),
    ]
    assert figures("HbA1c fell by 12.5 \u00b1 3.2 mmol/L (+/- 0.4 mmol/mol).") == [
        (12.5, "mmol/l"),
        (3.2, "mmol/l"),
        (0.4, "mmol/mol"),
    ]
    assert figures("Rates were 12, 30 and 5%, respectively.") == [
        (12.0, "%"),
        (30.0, "%"),
        (5.0, "%"),
    ]
    mention = find_numbers("Rates were 12, 30 and 5%.")[0]
    assert mention.text == "12" and mention.unit == "%"  # the unit is not in the text


def test_units_are_normalised() -> None:
    assert figures(
        "We saw 40 per cent, 2-fold, 5-year, 3 wk, 24 h, 8 participants, one patient, "
        "7 mL, 37 \u00b0C and 140 mm Hg."
    ) == [
        (40.0, "%"),
        (2.0, "fold"),
        (5.0, "years"),
        (3.0, "weeks"),
        (24.0, "hours"),
        (8.0, "patients"),
        (1.0, "patients"),
        (7.0, "ml"),
        (37.0, "\u00b0C"),
        (140.0, "mmHg"),
    ]


def test_number_words_and_scientific_notation() -> None:
    assert figures("Twelve women and twenty-five men were tested; one of the men left.") == [
        (12.0, "women"),
        (25.0, "men"),
    ]
    assert figures("Titres reached 1.5 x 10^6 cells/ml, 2 \u00d7 10(-3) and 4.2e5.") == [
        (1.5e6, "cells/ml"),
        (2e-3, ""),
        (4.2e5, ""),
    ]
    assert not figures("The concentration doubled, and half of the mice responded twice.")


def test_one_and_a_single_are_figures_only_when_a_list_coordinates_them_with_a_count() -> None:
    # SciFact abstract 38485364 (Tks5/Fish) and its swapped paraphrase (paraphrase dev a-83)
    domains = "Tks5/Fish is a scaffolding protein with five SH3 domains and one PX domain."
    assert texts(find_numbers(domains)) == ["five", "one"]
    swapped = "Tks5/Fish carries a single SH3 domain and five PX domains."
    assert figures(swapped) == [(1.0, ""), (5.0, "")]
    assert not figures("One of the mice had a single PX domain, and one of them lost it.")


def test_citations_labels_glued_numbers_and_years_are_not_figures() -> None:
    text = (
        "As shown in Figure 2 and Table 3 [1, 2], IL-6 and p53 rose in type 2 diabetes "
        "(COVID-19, Arg 257) between 2010 and 2015 [4-6]; see (ref. 3)."
    )
    assert figures(text) == []
    assert figures("In 2010, 2000 patients were enrolled.") == [(2000.0, "patients")]
    assert figures("These included: (1) PML and (2) telomere factors.") == []


def test_values_compare_with_a_relative_tolerance_and_units_must_be_compatible() -> None:
    assert same_value(0.1 + 0.2, 0.3) and not same_value(0.5, 50.0)
    assert compatible_units("%", "%") and compatible_units("", "patients")
    assert not compatible_units("mg", "kg")


def test_the_value_of_the_neighbouring_list_item_is_unstated() -> None:
    for evidence in (LIST, RESPECTIVELY):
        wrong = unstated_numbers("Titanium had a tensile strength of 320 MPa.", evidence)
        assert [(m.value, m.unit) for m in wrong] == [(320.0, "MPa")], evidence
        assert unstated_numbers("Titanium had a tensile strength of 110 MPa.", evidence) == ()
        assert unstated_numbers("The tensile strength of steel was 320 MPa.", evidence) == ()
        assert unstated_numbers("Aluminium reached 45 MPa.", evidence) == ()


def test_list_items_in_brackets_pair_each_figure_with_its_item() -> None:
    evidence = "Adverse events were nausea (12%), headache (30%) and fatigue (5%)."
    assert unstated_numbers("Headache occurred in 30% of patients.", evidence) == ()
    assert texts(unstated_numbers("Headache occurred in 12% of patients.", evidence)) == ["12%"]
    assert texts(unstated_numbers("Nausea: 5%.", evidence)) == ["5%"]


def test_a_respectively_list_with_spreads_pairs_each_item_with_its_figure() -> None:
    # PubMedQA context 21123461 (allometric scaling of weight to height)
    evidence = (
        "After adjustment for age and race, weight scaled to height in men and women with mean "
        "(\u00b1SEE) powers of 2.29 \u00b1 0.11 and 1.80 \u00b1 0.07, respectively (both P<0.001)."
    )
    right = (
        "Once age and race were adjusted for, men's weight scaled with height to the power 2.29."
    )
    assert unstated_numbers(right, evidence) == ()
    women = "Women's weight scaled to height with a power of 1.80."
    assert unstated_numbers(women, evidence) == ()
    swapped = "After age and race adjustment, weight scaled to height with a power of 1.80 in men."
    assert texts(unstated_numbers(swapped, evidence)) == ["1.80"]


def test_a_p_value_after_a_figure_is_not_the_clause_it_runs_into() -> None:
    # PubMedQA context (quality of life after antireflux surgery, paraphrase dev b-65)
    evidence = (
        "Short Form 36 median physical composite scores 52.0 and 54.0 (P=0.034) and mental "
        "composite scores 51.0 and 56.0 (P=0.020)."
    )
    assert unstated_numbers("The mental composite score rose from 51 to 56.", evidence) == ()
    assert texts(unstated_numbers("The mental composite score rose to 54.", evidence)) == ["54"]


def test_a_total_given_where_a_sub_count_was_asked_is_unstated() -> None:
    wrong = unstated_numbers("1,200 patients developed sepsis.", SEPSIS)
    assert [(m.text, m.value, m.span) for m in wrong] == [("1,200 patients", 1200.0, (0, 14))]
    assert unstated_numbers("312 patients developed sepsis.", SEPSIS) == ()
    assert unstated_numbers("312 of 1,200 patients developed sepsis.", SEPSIS) == ()
    assert unstated_numbers("Sepsis developed in 312 of the 1,200 patients enrolled.", SEPSIS) == ()


def test_a_subject_that_belongs_to_another_figure_makes_the_value_unstated() -> None:
    evidence = (
        "Mortality was 12% at discharge in the treated group. "
        "Readmission was 30% at discharge in the treated group."
    )
    assert texts(unstated_numbers("Mortality was 30% at discharge.", evidence)) == ["30%"]
    assert unstated_numbers("Mortality was 12% at discharge.", evidence) == ()


def test_absent_figures_citations_and_claims_without_figures() -> None:
    evidence = "Statin use reduced LDL cholesterol by 35% in the treated group [2]."
    assert texts(unstated_numbers("Statins reduced LDL cholesterol by 45%.", evidence)) == ["45%"]
    assert unstated_numbers("Statins reduced LDL cholesterol by 35% [2].", evidence) == ()
    assert unstated_numbers("Statins reduced LDL cholesterol [3].", evidence) == ()
    assert unstated_numbers("Statins reduced LDL cholesterol.", evidence) == ()
    # 0.5 and 50% are different figures, though one of them has no unit
    flagged = unstated_numbers("Relapse occurred in 50% of treated patients.", "Relapse: 0.5.")
    assert texts(flagged) == ["50%"]


def test_spans_of_unstated_figures_are_offsets_into_the_claim() -> None:
    claim = "Sepsis was rare. Titanium had a tensile strength of 320 MPa."
    (mention,) = unstated_numbers(claim, LIST)
    assert claim[mention.span[0] : mention.span[1]] == "320 MPa" == mention.text


def scifact_abstracts(ids: tuple[str, ...]) -> dict[str, str]:
    """SciFact corpus abstracts by ``_id`` (the test is skipped without the corpus)."""
    corpus = SHARED_DATA / "scifact" / "beir" / "corpus.jsonl"
    if not corpus.exists():
        pytest.skip(f"the SciFact corpus is not at {corpus}")
    found: dict[str, str] = {}
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            if doc["_id"] in ids:
                found[doc["_id"]] = doc["text"]
            if len(found) == len(ids):
                break
    return found


def test_real_sentences_state_their_own_figures_and_swapped_figures_are_caught() -> None:
    abstracts = scifact_abstracts(("641459", "4983", "18670", "87758", "152245"))
    checked = 0
    for text in abstracts.values():
        for start, end in split_sentences(text):
            sentence = text[start:end]
            if find_numbers(sentence):
                checked += 1
                assert unstated_numbers(sentence, text) == (), sentence
    assert checked >= 10
    athletes = abstracts["641459"]
    original = (
        "RESULTS Of the 699 athletes who completed the questionnaire, 107 (15.3%) had a previous "
        "diagnosis of asthma, and 97 (13.9%) recorded use of an asthma medication at some time "
        "in the past."
    )
    assert original in athletes
    swapped = original.replace("15.3%", "@").replace("13.9%", "15.3%").replace("@", "13.9%")
    assert texts(unstated_numbers(swapped, athletes)) == ["13.9%", "15.3%"]
    total = "699 athletes had a previous diagnosis of asthma."
    assert texts(unstated_numbers(total, athletes)) == ["699"]
