"""Answer splitting (the ingest splitter) and citation parsing."""

from __future__ import annotations

import pytest

from verifai_desktop.domain import strip_citations
from verifai_desktop.verify.claims import parse_citations, split_answer


@pytest.mark.parametrize(
    ("text", "n", "valid", "invalid"),
    [
        ("Aspirin lowers fever [1].", 3, (1,), ()),
        ("Two sources agree [1, 3].", 3, (1, 3), ()),
        ("Chained [2][1].", 3, (2, 1), ()),
        ("Spaced [ 2 ] and grouped [3,1].", 3, (2, 3, 1), ()),
        ("Repeated [1][1] once.", 3, (1,), ()),
        ("Out of range [4] and zero [0].", 3, (), (4, 0)),
        ("Mixed [1, 7][2].", 3, (1, 2), (7,)),
        ("No citation here.", 3, (), ()),
        ("Not a citation [a] nor [1.5].", 3, (), ()),
        ("Ten passages [10].", 10, (10,), ()),
        ("Ten passages [10].", 9, (), (10,)),
    ],
)
def test_parse_citations(
    text: str, n: int, valid: tuple[int, ...], invalid: tuple[int, ...]
) -> None:
    assert parse_citations(text, n) == (valid, invalid)


def test_strip_citations() -> None:
    assert strip_citations("Aspirin lowers fever [1][2].") == "Aspirin lowers fever."
    assert strip_citations("It works [1, 3], mostly [2].") == "It works, mostly."


def test_split_answer_with_the_ingest_splitter() -> None:
    answer = "SPECTER uses citations as a training signal [1]. It embeds papers [2][3]. It is fast."
    sentences = split_answer(answer, 3)
    assert [s.text for s in sentences] == [
        "SPECTER uses citations as a training signal [1].",
        "It embeds papers [2][3].",
        "It is fast.",
    ]
    assert [s.citations for s in sentences] == [(1,), (2, 3), ()]
    assert [s.claim for s in sentences] == [
        "SPECTER uses citations as a training signal.",
        "It embeds papers.",
        "It is fast.",
    ]
    for s in sentences:
        assert answer[s.char_start : s.char_end] == s.text


def test_marker_after_full_stop_joins_its_sentence() -> None:
    def splitter(text: str) -> tuple[tuple[int, int], ...]:
        # split after every ". " the way a rule splitter does
        spans, start = [], 0
        for i, ch in enumerate(text):
            if ch == "." and (i + 1 == len(text) or text[i + 1] == " "):
                spans.append((start, i + 1))
                start = i + 2
        if start < len(text):
            spans.append((start, len(text)))
        return tuple(spans)

    answer = "First claim. [2] Second claim [1]. Third claim [1]. [2]"
    sentences = split_answer(answer, 2, splitter=splitter)
    assert [s.text for s in sentences] == [
        "First claim. [2]",
        "Second claim [1].",
        "Third claim [1]. [2]",
    ]
    assert [s.citations for s in sentences] == [(2,), (1,), (1, 2)]
    # markers opening a sentence stay there when the sentence before already cites
    sentences = split_answer("One [1]. [2] Two.", 2, splitter=splitter)
    assert [s.citations for s in sentences] == [(1,), (2,)]


def test_invalid_citations_are_dropped_and_counted() -> None:
    sentences = split_answer("Claim one [1][5]. Claim two [6].", 2)
    assert [s.citations for s in sentences] == [(1,), ()]
    assert [s.invalid_citations for s in sentences] == [(5,), (6,)]


def test_grammar_format_citations_after_the_full_stop() -> None:
    answer = "SPECTER uses citations. [1] It embeds papers. [2][3] Dose was 3.5 mg. [1]"
    sentences = split_answer(answer, 3)
    assert [(s.text, s.citations, s.claim) for s in sentences] == [
        ("SPECTER uses citations. [1]", (1,), "SPECTER uses citations."),
        (
            "It embeds papers. [2][3]",
            (2, 3),
            "It embeds papers.",
        ),
        ("Dose was 3.5 mg. [1]", (1,), "Dose was 3.5 mg."),
    ]
