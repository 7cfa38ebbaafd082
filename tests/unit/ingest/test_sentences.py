"""Sentence splitting: sentencex inside blocks, layout boundaries between them."""

from __future__ import annotations

import pytest

from tests.conftest import DOCS_CLEAN
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.ingest.sentences import split_sentences


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_abbreviations_and_decimals() -> None:
    text = (
        "Dr. Smith et al. gave 3.5 mg, i.e. a low dose, to 12 pts. vs. 1.2 mg. It worked!  Why? "
        "See Fig. 2 and Eq. 3, e.g. the p-value was approx. 0.05 in the U.S. cohort. "
        "2020 was the year. No. 5 is next. Cells were lysed. mRNA was extracted. "
        "It was done in the lab. then it was not."
    )
    assert sentences(text) == [
        "Dr. Smith et al. gave 3.5 mg, i.e. a low dose, to 12 pts. vs. 1.2 mg.",
        "It worked!",
        "Why?",
        "See Fig. 2 and Eq. 3, e.g. the p-value was approx. 0.05 in the U.S. cohort.",
        "2020 was the year.",
        "No. 5 is next.",
        "Cells were lysed.",
        "mRNA was extracted.",
        "It was done in the lab. then it was not.",  # "lab" might be an abbreviation
    ]


def test_layout_boundaries() -> None:
    text = (
        "Introduction\nThe U.S. trial (n = 12) was fine. Next one?\n\n"
        "- item one\n- item two\n1. numbered\n\n"
        "Name | Value\nalpha | 1\n\n"
        "A hard-wrapped line of a PDF column that goes on\nand ends here. Short tail"
    )
    assert sentences(text) == [
        "Introduction",
        "The U.S. trial (n = 12) was fine.",
        "Next one?",
        "- item one",
        "- item two",
        "1. numbered",
        "Name | Value",
        "alpha | 1",
        "A hard-wrapped line of a PDF column that goes on\nand ends here.",
        "Short tail",
    ]


@pytest.mark.parametrize("text", ["", "   \n\n  ", "\t"])
def test_blank(text: str) -> None:
    assert split_sentences(text) == ()


@pytest.mark.parametrize(
    "name", ["bmc_trauma_2010_dvt_prophylaxis_review.pdf", "pandoc_MANUAL.txt"]
)
def test_spans_trimmed_ordered_and_covering(name: str) -> None:
    text = parse_file(DOCS_CLEAN / name).text
    spans = split_sentences(text)
    assert len(spans) > 100
    covered = [False] * len(text)
    prev_end = 0
    for start, end in spans:
        assert prev_end <= start < end
        assert not text[start].isspace() and not text[end - 1].isspace()
        covered[start:end] = [True] * (end - start)
        prev_end = end
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())


def test_real_pdf_heading_split_from_text() -> None:
    text = parse_file(DOCS_CLEAN / "bmc_trauma_2010_dvt_prophylaxis_review.pdf").text
    got = sentences(text)
    assert "Introduction" in got
    assert "Each modality has potential complications." in got
    assert "The risks of heparin\ninclude bleeding and heparin induced thrombocytopenia." in got
