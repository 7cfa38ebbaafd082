"""Passages for the generator: near-duplicates dropped, a token budget filled, numbering kept.

Real text (a paper from ``shared/data/docs/clean`` chunked as ingest chunks it) and the real
bundled generator's tokenizer.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from itertools import pairwise

import pytest

from tests.conftest import DOCS_CLEAN
from verifai_desktop import modelstore
from verifai_desktop.domain import Chunk, ChunkId, DocId, Document, Passage
from verifai_desktop.generate.llama import LlamaGenerator
from verifai_desktop.generate.passages import (
    ELLIPSIS,
    MIN_PART_TOKENS,
    dedupe_passages,
    near_duplicates,
)
from verifai_desktop.generate.prompt import build_answer_prompt
from verifai_desktop.ingest.chunking import chunk_document
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.settings import ModelSettings

PAPER = DOCS_CLEAN / "bmc_trauma_2010_dvt_prophylaxis_review.pdf"
QUESTION = "What are the complications of heparin thromboprophylaxis in trauma patients?"


@pytest.fixture(scope="module")
def paper(count_tokens: Callable[[str], int]) -> tuple[Document, tuple[Chunk, ...]]:
    """The heparin review and its chunks (all-MiniLM-L6-v2 sizes, one sentence of overlap)."""
    doc = parse_file(PAPER)
    return doc, chunk_document(doc, count_tokens=count_tokens, max_tokens=256)


@pytest.fixture(scope="module")
def count_generator_tokens() -> Callable[[str], int]:
    """The bundled generator's own tokenizer (Qwen2.5), as the pipeline counts prompt tokens."""
    settings = ModelSettings(context_tokens=2048, max_answer_tokens=8)
    return LlamaGenerator(modelstore.ensure_bundled_generator(), settings, n_threads=2).count_tokens


def _passage(chunk: Chunk, doc_id: int, rank: int, name: str = "review.pdf") -> Passage:
    return Passage(
        chunk_id=ChunkId(doc_id * 1000 + chunk.ordinal),
        doc_id=DocId(doc_id),
        path=PAPER.with_name(name),
        title="review",
        text=chunk.text,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        location=chunk.location,
        sentence_spans=chunk.sentence_spans,
        fused_score=1.0 / rank,
    )


def _body(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The first body chunks of the review (before its reference list)."""
    return list(chunks[:8])


def test_adjacent_chunks_sharing_a_sentence_are_not_duplicates(
    paper: tuple[Document, tuple[Chunk, ...]],
) -> None:
    _, chunks = paper
    body = _body(chunks)
    passages = [_passage(c, 1, i) for i, c in enumerate(body, start=1)]
    # ingest overlaps consecutive chunks of a page by a sentence: they share text, yet are kept
    shared = [a.char_end - b.char_start for a, b in pairwise(body) if a.location == b.location]
    assert len(shared) == 6 and all(n > 0 for n in shared)
    assert dedupe_passages(passages) == tuple(passages)


def test_the_same_text_in_another_file_is_given_once(
    paper: tuple[Document, tuple[Chunk, ...]],
) -> None:
    """A copy of the paper ingested from another folder: each chunk comes back twice."""
    _, chunks = paper
    a, b = _body(chunks)[2:4]
    ranked = [
        _passage(a, 1, 1),
        _passage(a, 2, 2, "copy of review.pdf"),
        _passage(b, 2, 3, "copy of review.pdf"),
        _passage(b, 1, 4),
    ]
    assert near_duplicates(ranked[0], ranked[1])
    assert dedupe_passages(ranked) == (ranked[0], ranked[2])  # the better-ranked of each pair


def test_an_overlapping_window_of_the_same_document_keeps_the_better_ranked(
    paper: tuple[Document, tuple[Chunk, ...]],
) -> None:
    doc, chunks = paper
    c0, c1, c2 = _body(chunks)[3:6]
    # the same text re-chunked: c0 without its first sentence (a window inside c0)
    start = c0.char_start + c0.sentence_spans[1][0]
    window = dataclasses.replace(
        c0,
        text=doc.text[start : c0.char_end],
        char_start=start,
        sentence_spans=tuple((s - (start - c0.char_start), e - (start - c0.char_start))
                             for s, e in c0.sentence_spans[1:]),
    )  # fmt: skip
    ranked = [_passage(c1, 1, 1), _passage(window, 1, 2), _passage(c0, 1, 3), _passage(c2, 1, 4)]
    assert dedupe_passages(ranked) == (ranked[0], ranked[1], ranked[3])


def _numbers(user: str) -> list[int]:
    return [int(n) for n in re.findall(r"^\[(\d+)\] \(source: ", user, flags=re.MULTILINE)]


def test_the_budget_gives_passages_best_first_and_numbers_only_those(
    paper: tuple[Document, tuple[Chunk, ...]], count_generator_tokens: Callable[[str], int]
) -> None:
    _, chunks = paper
    offered = [_passage(c, 1, i) for i, c in enumerate(_body(chunks), start=1)]
    count = count_generator_tokens
    costs = [
        count(f"[{i}] (source: {p.source_label()})\n") + 2 + count(p.text)
        for i, p in enumerate(offered, start=1)
    ]
    budget = sum(costs[:3]) + MIN_PART_TOKENS + 40  # three whole passages and part of a fourth
    prompt = build_answer_prompt(
        QUESTION,
        offered,
        count_tokens=count,
        max_prompt_tokens=8000,
        passage_budget_tokens=budget,
    )
    assert prompt.passages == tuple(offered[:4])
    assert prompt.passage_texts[:3] == tuple(p.text for p in offered[:3])
    cut = prompt.passage_texts[3]
    assert cut.endswith(ELLIPSIS) and offered[3].text.startswith(cut[: -len(ELLIPSIS)])
    kept_end = len(cut) - len(ELLIPSIS)
    assert kept_end in {e for _, e in offered[3].sentence_spans}  # cut after a whole sentence
    assert (prompt.truncated, prompt.left_out) == (1, len(offered) - 4)
    assert prompt.passage_tokens <= budget
    user = prompt.messages[1].content
    assert _numbers(user) == [1, 2, 3, 4]  # what is not given is not numbered
    assert offered[4].text not in user

    # No budget: every passage, whole.
    everything = build_answer_prompt(QUESTION, offered, count_tokens=count, max_prompt_tokens=8000)
    assert everything.passages == tuple(offered) and everything.left_out == 0
    assert _numbers(everything.messages[1].content) == list(range(1, len(offered) + 1))


def test_a_passage_that_would_leave_too_little_room_is_left_out(
    paper: tuple[Document, tuple[Chunk, ...]], count_generator_tokens: Callable[[str], int]
) -> None:
    _, chunks = paper
    offered = [_passage(c, 1, i) for i, c in enumerate(_body(chunks), start=1)]
    count = count_generator_tokens
    first = count(f"[1] (source: {offered[0].source_label()})\n") + 2 + count(offered[0].text)
    prompt = build_answer_prompt(
        QUESTION,
        offered,
        count_tokens=count,
        max_prompt_tokens=8000,
        passage_budget_tokens=first + MIN_PART_TOKENS // 2,
    )
    assert prompt.passages == (offered[0],) and prompt.truncated == 0
    assert prompt.passage_texts == (offered[0].text,)


def test_the_first_passage_is_always_given(
    paper: tuple[Document, tuple[Chunk, ...]], count_generator_tokens: Callable[[str], int]
) -> None:
    _, chunks = paper
    offered = [_passage(c, 1, i) for i, c in enumerate(_body(chunks), start=1)]
    count = count_generator_tokens
    assert count(offered[0].text) > 128
    prompt = build_answer_prompt(
        QUESTION, offered, count_tokens=count, max_prompt_tokens=8000, passage_budget_tokens=128
    )
    assert prompt.passages == (offered[0],) and prompt.truncated == 1
    assert prompt.passage_tokens <= 128
    assert prompt.passage_texts[0].endswith(ELLIPSIS)
