"""A smaller prompt: each passage trimmed to the sentences that bear on the question (issue 40).

The passages are PubMedQA PMID 21979183 (PQA-L, MIT; the same as ``test_quote.py``).
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.generate.test_quote import METHODS, QUESTION, RESULTS
from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.generate.focus import (
    focus_passage,
    focus_passages,
    focus_to_fit,
    kept_sentences,
)
from verifai_desktop.generate.passages import ELLIPSIS
from verifai_desktop.generate.prompt import build_answer_prompt
from verifai_desktop.ingest.sentences import split_sentences

OTHER = (
    "Desmoid tumors are rare fibroblastic neoplasms. They arise in the abdominal wall. "
    "Familial adenomatous polyposis raises their incidence. Surgery remains debated. "
    "Sulindac and tamoxifen are often given first. Radiotherapy is reserved for recurrences."
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
        tuple(split_sentences(text)),
    )


def _count(text: str) -> int:
    return len(text.split())


def test_kept_sentences_are_the_first_the_best_and_their_neighbours() -> None:
    scores = [0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 1.0, 0.0]
    assert kept_sentences(scores, keep=1) == [0, 2, 3, 4]
    assert kept_sentences(scores, keep=2) == [0, 2, 3, 4, 5, 6, 7]
    assert kept_sentences(scores, keep=1, neighbours=0) == [0, 3]
    assert kept_sentences(scores, keep=0) == list(range(8))  # 0: whole
    assert kept_sentences([0.0, 0.0, 0.0], keep=2) == [0]  # nothing shared: the opening


def test_a_trimmed_passage_marks_its_gaps_and_keeps_spans_into_its_new_text() -> None:
    passage = _passage(1, OTHER)
    focused = focus_passage(passage, [0, 3])
    assert focused.text == (
        f"Desmoid tumors are rare fibroblastic neoplasms.{ELLIPSIS} Surgery remains debated."
        f"{ELLIPSIS}"
    )
    assert focused.sentences() == (
        "Desmoid tumors are rare fibroblastic neoplasms.",
        "Surgery remains debated.",
    )
    assert focused.chunk_id == passage.chunk_id and focused.path == passage.path
    assert focus_passage(passage, range(6)) is passage


def test_the_sentence_that_answers_survives_and_the_prompt_shrinks() -> None:
    passages = [_passage(1, METHODS), _passage(2, RESULTS), _passage(3, OTHER)]
    whole = build_answer_prompt(QUESTION, passages, count_tokens=_count, max_prompt_tokens=4000)
    short = build_answer_prompt(
        QUESTION, passages, count_tokens=_count, max_prompt_tokens=4000, reading_sentences=1
    )
    assert short.prompt_tokens < whole.prompt_tokens
    assert "51.4% the ileorectal group had surgery for desmoid tumor" in short.passage_texts[1]
    assert "Patient demographics were similar." not in short.passage_texts[1]
    # the answer's passages stay whole: verification and the app read all of them
    assert short.passages == tuple(passages)
    assert short.passage_texts[0].startswith("This study aims")


def test_trimming_lets_the_budget_take_more_passages() -> None:
    passages = [_passage(2, RESULTS), _passage(3, OTHER), _passage(1, METHODS)]
    budget = 130
    whole = build_answer_prompt(
        QUESTION,
        passages,
        count_tokens=_count,
        max_prompt_tokens=4000,
        passage_budget_tokens=budget,
    )
    short = build_answer_prompt(
        QUESTION,
        passages,
        count_tokens=_count,
        max_prompt_tokens=4000,
        passage_budget_tokens=budget,
        reading_sentences=1,
    )
    assert len(short.passages) > len(whole.passages)
    assert short.passages == tuple(passages[: len(short.passages)])


def test_idf_is_over_all_passages_so_a_shared_word_counts_little() -> None:
    # "desmoid" is in every passage; "ileorectal" only in two: the results sentence wins
    trimmed = focus_passages(QUESTION, [_passage(2, RESULTS), _passage(3, OTHER)], keep=1)
    assert "51.4%" in trimmed[0].text
    assert trimmed[1].text.startswith("Desmoid tumors are rare")


def test_the_cut_keeps_what_bears_on_the_question_not_the_opening() -> None:
    # the answer (51.4%) is in the results' fourth sentence, past what an opening cut keeps
    passage = _passage(2, RESULTS)
    scores = [1.0 if "51.4%" in s else 0.0 for s in passage.sentences()]
    cut = focus_to_fit(passage, scores, 60, _count)
    assert cut is not None and _count(cut) <= 60
    assert "51.4% the ileorectal group had surgery for desmoid tumor" in cut
    assert cut.startswith("There were 86 patients")  # the first sentence, as room allows
    tight = focus_to_fit(passage, scores, 50, _count)  # no room for neighbours or the opening
    assert tight is not None and "51.4%" in tight and "There were 86" not in tight
    assert focus_to_fit(passage, [0.0] * len(scores), 60, _count) is None  # nothing shared
    assert focus_to_fit(passage, scores, 10, _count) is None  # the best does not fit
    assert focus_to_fit(passage, scores, 500, _count) == RESULTS  # fits whole


def test_the_passage_crossing_the_budget_is_cut_to_the_question() -> None:
    passages = [_passage(1, METHODS), _passage(2, RESULTS)]
    kwargs = {"count_tokens": _count, "max_prompt_tokens": 4000, "passage_budget_tokens": 150}
    opening = build_answer_prompt(QUESTION, passages, **kwargs)
    focused = build_answer_prompt(QUESTION, passages, cut_to_question=True, **kwargs)
    assert len(opening.passages) == len(focused.passages) == 2
    assert opening.truncated == focused.truncated == 1
    assert "51.4%" not in opening.passage_texts[1]
    assert "51.4% the ileorectal group had surgery for desmoid tumor" in focused.passage_texts[1]
    assert focused.passage_texts[0] == METHODS  # a passage that fits is not touched
    assert focused.passage_tokens <= 150


FILLER = (
    "Restorative proctocolectomy removes the colon and rectum. An ileal pouch is formed. "
    "The pouch is joined to the anal canal. Function is usually good after a year. "
    "Pouchitis is the commonest late problem. It responds to antibiotics in most patients."
)


def test_the_sentence_that_bears_most_is_read_though_its_passage_ranks_past_the_budget() -> None:
    # the answer (51.4%) is in the fourth passage; the first three fill the budget
    passages = [_passage(1, OTHER), _passage(2, METHODS), _passage(3, FILLER), _passage(4, RESULTS)]
    kwargs = {
        "count_tokens": _count,
        "max_prompt_tokens": 4000,
        "passage_budget_tokens": 165,
        "cut_to_question": True,
    }
    ranked = build_answer_prompt(QUESTION, passages, **kwargs)
    assert ranked.passages == tuple(passages[:3]) and ranked.left_out == 1
    assert not any("51.4%" in text for text in ranked.passage_texts)
    best = build_answer_prompt(QUESTION, passages, keep_best_sentence=True, **kwargs)
    # the fourth is given last, as its best sentence alone (with neighbours it takes more
    # than a third of the budget); the third makes room
    assert best.passages == (passages[0], passages[1], passages[3])
    assert best.left_out == 1 and best.truncated == 1
    assert best.passage_texts[2] == passages[3].sentences()[3]
    assert "51.4% the ileorectal group had surgery for desmoid tumor" in best.passage_texts[2]
    assert best.passage_texts[:2] == (OTHER, METHODS)
    assert best.passage_tokens <= 165
    assert "[3] (source: paper4.pdf" in best.messages[1].content  # numbered as given
    # the best sentence already given: nothing moves
    first = [passages[3], passages[0], passages[1]]
    given = build_answer_prompt(QUESTION, first, keep_best_sentence=True, **kwargs)
    assert given == build_answer_prompt(QUESTION, first, **kwargs)
