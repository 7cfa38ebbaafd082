"""Issue 39, ninth round: a change "from X in 2009 to Y in 2013" is two clauses, and counts of two
units joined by "and" share the words after the second.

The passages are real PubMedQA contexts (sentences quoted from
``models/data/paraphrase_dev.jsonl``); the claims are worded as a chatbot words them. Each rule
is checked both ways: the right claim's figures are stated, its wrong twin's are not."""

from __future__ import annotations

from verifai_desktop.verify.figure_subjects import Figure, figures, unstated_numbers

# PubMedQA context (central line infections in a neonatal unit).
CLABSI = (
    "Overall, our CLABSI rates decreased from 4.1 per 1000 line days in 2009 (13 infections; "
    "3163 line days) to 0.94 in 2013 (2 infections; 2115 line days), which represents a 77% "
    "reduction over a 5-year period."
)
# PubMedQA context (aortic stenosis progression).
STENOSIS = (
    "Hemodynamic, echocardiographic, and clinical data of 169 men and 88 women with aortic "
    "stenosis, aged 55.2 +/- 15.7 years at their first and 63.4 +/- 15.6 years at their second "
    "cardiac catheterization, were analyzed."
)
# PubMedQA context (body circumferences and height).
RANGE = (
    "Age- and race-adjusted incremental increases in circumferences ranged from 0.2 to 0.5 cm "
    "per centimeter increase in height."
)


def _figure(text: str, figure: str) -> Figure:
    (found,) = [f for f in figures(text) if f.mention.text == figure]
    return found


def _subject(text: str, figure: str) -> frozenset[str]:
    return _figure(text, figure).subject


def test_a_change_from_one_year_to_another_is_two_clauses() -> None:
    claim = (
        "The NICU's CLABSI rate dropped from 4.1 per 1,000 line days in 2009 to 0.94 in 2013, "
        "a 77% reduction."
    )
    # the year after "to" tells 0.94 from 4.1; before, both years were in one clause
    assert _figure(claim, "0.94").item == {"2013"}
    assert unstated_numbers(claim, CLABSI) == ()


def test_the_swapped_change_is_still_unstated() -> None:
    twin = "In the NICU, the CLABSI rate went from 0.94 per 1,000 line days in 2009 to 4.1 in 2013."
    assert [m.text for m in unstated_numbers(twin, CLABSI)] == ["0.94"]


def test_a_range_from_one_figure_to_the_next_stays_one_clause() -> None:
    assert _subject(RANGE, "0.2") == _subject(RANGE, "0.5 cm")
    assert "circumferenc" in _subject(RANGE, "0.2")


def test_counts_joined_by_and_share_the_words_after_them() -> None:
    assert {"aortic", "stenosis"} <= _subject(STENOSIS, "169 men")
    claim = "The analysis covered 257 patients with aortic stenosis, 169 men and 88 women."
    assert "169 men" not in [m.text for m in unstated_numbers(claim, STENOSIS)]


def test_a_count_given_the_other_unit_is_still_unstated() -> None:
    wrong = "The analysis covered 169 women with aortic stenosis."
    assert [m.text for m in unstated_numbers(wrong, STENOSIS)] == ["169 women"]
