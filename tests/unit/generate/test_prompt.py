"""Prompt building: numbered passages with sources, question never cut, passages fit the budget."""

from __future__ import annotations

import re
from pathlib import Path

from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.generate.prompt import SYSTEM_PROMPT, build_answer_prompt


def _words(text: str) -> int:
    return len(text.split())


def _passage(i: int, n_sentences: int) -> Passage:
    sentences = [f"Passage {i} sentence {j} has six words." for j in range(n_sentences)]
    text = " ".join(sentences)
    spans, pos = [], 0
    for s in sentences:
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    return Passage(
        ChunkId(i),
        DocId(i),
        Path(f"/d/file{i}.pptx"),
        "t",
        text,
        0,
        len(text),
        Location(LocationKind.SLIDE, i, "Intro"),
        tuple(spans),
    )


def test_passages_numbered_with_sources() -> None:
    passages = [_passage(1, 2), _passage(2, 2)]
    prompt = build_answer_prompt(
        "What is six?", passages, count_tokens=_words, max_prompt_tokens=10_000
    )
    user = prompt.messages[1].content
    assert user.index("[1] (source: file1.pptx, slide 1 Intro)") < user.index(
        "[2] (source: file2.pptx"
    )
    assert "Question: What is six?" in user
    assert prompt.truncated == 0
    assert prompt.passage_texts == (passages[0].text, passages[1].text)
    assert passages[0].source_label() == "file1.pptx, slide 1 Intro"


def test_long_passages_cut_at_sentences_question_kept() -> None:
    passages = [_passage(1, 40), _passage(2, 2), _passage(3, 40)]
    question = "A question that is long " * 10
    prompt = build_answer_prompt(question, passages, count_tokens=_words, max_prompt_tokens=300)
    assert prompt.prompt_tokens <= 300
    assert question.strip() in prompt.messages[1].content
    assert prompt.truncated == 2
    assert prompt.passage_texts[1] == passages[1].text  # the short one is whole
    for cut, full in (
        (prompt.passage_texts[0], passages[0].text),
        (prompt.passage_texts[2], passages[2].text),
    ):
        assert cut.endswith(" …")
        kept = cut[: -len(" …")]
        assert full.startswith(kept) and kept.endswith("words.")  # whole sentences only


def test_system_prompt_gives_no_cited_example_sentence():
    # The bundled 0.5B answered 14 of 60 PubMedQA dev questions with the example sentence
    # "The method was tested on 40 patients. [2]" of the earlier prompt
    # (benchmarks/answer_prompt.py).
    assert not re.search(r"[.!?]\s*\[\d+\]", SYSTEM_PROMPT)
    assert "for example" not in SYSTEM_PROMPT.lower()
