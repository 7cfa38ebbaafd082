"""Quote before paraphrasing: the sentences that bear on the question, quoted before it.

The passage is PubMedQA PMID 21979183 (PQA-L, MIT), whose results sentence gives the same
figure for two groups ("38.8% of the restorative proctocolectomy group and 51.4% the ileorectal
group"), the neighbouring-figure trap of issue 39.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.generate.numbered import number_sentences
from verifai_desktop.generate.prompt import ANSWER_CUE, build_answer_prompt
from verifai_desktop.generate.quote import (
    KEEP_FIGURES,
    QUOTE_HEAD,
    QUOTED,
    asks_for_figure,
    quote_block,
    rank_sentences,
)

METHODS = (
    "This study aims to determine whether the clinical effects of abdominal desmoids would be "
    "worse in patients with restorative proctocolectomy than in patients with ileorectal "
    "anastomosis. This is a retrospective, database study. The primary outcome measures were "
    "the clinical course of the desmoids; morbidity, and the requirement for stoma."
)
RESULTS = (
    "There were 86 patients: 49 had restorative proctocolectomy and 37 had ileorectal "
    "anastomosis. Patient demographics were similar. Treatment of the desmoids included surgery "
    "(64.4% vs 65.6%), medical therapy (69.4% vs 59.5%), chemotherapy (36.2% vs 30.0%), and "
    "radiotherapy (4.5% vs 10.0%), and was the same for each group. The risk of individual "
    "complications was also similar (bleeding (2.0% vs 0.0%), fistula (10.2% vs 13.5%)); 38.8% "
    "of the restorative proctocolectomy group and 51.4% the ileorectal group had surgery for "
    "desmoid tumor complications (P = .21), and 22.4% and 22.2% of patients ultimately had "
    "permanent stomas."
)
QUESTION = (
    "What percentage of the ileorectal anastomosis group needed surgery for desmoid tumor "
    "complications?"
)


def _passage(i: int, text: str) -> Passage:
    return Passage(
        ChunkId(i),
        DocId(i),
        Path(f"/d/paper{i}.pdf"),
        "t",
        text,
        0,
        len(text),
        Location(LocationKind.PAGE, 1, ""),
        (),
    )


def _words(text: str) -> int:
    return len(text.split())


def test_the_sentence_giving_the_asked_figure_ranks_first() -> None:
    sentences = number_sentences([METHODS, RESULTS])
    ranked = rank_sentences(QUESTION, sentences)
    assert "51.4% the ileorectal group had surgery for desmoid tumor" in ranked[0].text
    assert ranked[0].passage == 2
    assert sorted(s.ref for s in ranked) == sorted(s.ref for s in sentences)  # none lost


def test_sentences_sharing_no_word_keep_the_prompt_order_at_the_end() -> None:
    sentences = number_sentences([METHODS, RESULTS])
    ranked = rank_sentences("zebrafish fins?", sentences)
    assert ranked == sentences


def test_the_quotes_are_verbatim_with_their_passage_number() -> None:
    sentences = number_sentences([METHODS, RESULTS])
    block = quote_block(QUESTION, sentences)
    lines = block.splitlines()
    assert lines[0] == QUOTE_HEAD
    assert len(lines) == 1 + QUOTED
    best = rank_sentences(QUESTION, sentences)[0]
    assert lines[1] == f'"{best.text}" [2]'
    assert quote_block(QUESTION, ()) == ""


def test_a_quote_first_prompt_adds_quotes_and_keeps_the_passages() -> None:
    passages = [_passage(1, METHODS), _passage(2, RESULTS)]
    plain = build_answer_prompt(QUESTION, passages, count_tokens=_words, max_prompt_tokens=10_000)
    quoted = build_answer_prompt(
        QUESTION, passages, count_tokens=_words, max_prompt_tokens=10_000, quote_first=True
    )
    plain_user, quoted_user = plain.messages[1].content, quoted.messages[1].content
    assert QUOTE_HEAD not in plain_user and plain.sentences == ()
    passages_part = plain_user.split("\nQuestion:")[0]
    assert quoted_user.startswith(passages_part)  # the passages as without quotes
    quotes = quoted_user[len(passages_part) :]
    assert quotes.index(QUOTE_HEAD) < quotes.index("Question:")
    assert "51.4% the ileorectal group" in quotes.split("Question:")[0]
    assert quoted_user.endswith(f"{KEEP_FIGURES}\n{ANSWER_CUE}")
    assert quoted.passage_texts == plain.passage_texts
    assert {s.passage for s in quoted.sentences} == {1, 2}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (QUESTION, True),
        ("How many patients had a wound infection after laparoscopy?", True),
        ("What was the 5-year overall survival of women with stage I adenocarcinoma?", True),
        ("What was the in-hospital mortality of emergency aortic surgery patients?", True),
        ("What does SPECTER use citations for?", False),
        ("Is laparoscopic surgery associated with fewer wound infections?", False),
        ("Does vitamin C prevent complex regional pain syndrome?", False),
    ],
)
def test_only_a_question_asking_for_a_figure_is_answered_from_quotes(
    question: str, expected: bool
) -> None:
    assert asks_for_figure(question) is expected
    prompt = build_answer_prompt(
        question,
        [_passage(1, METHODS), _passage(2, RESULTS)],
        count_tokens=_words,
        max_prompt_tokens=10_000,
        quote_first=True,
    )
    assert (QUOTE_HEAD in prompt.messages[1].content) is expected
