"""Chunking invariants measured with the real all-MiniLM-L6-v2 tokenizer."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from tokenizers import Tokenizer

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import Document, Location, LocationKind
from verifai_desktop.ingest.chunking import CachedTokenCounter, chunk_document, chunk_text
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.ingest.sentences import split_sentences

Count = Callable[[str], int]


@pytest.fixture(
    scope="module",
    params=[
        "bmc_trauma_2010_dvt_prophylaxis_review.pdf",
        "ten_quick_tips_deep_learning_biology.docx",
        "alice_in_wonderland.epub",
    ],
)
def doc(request: pytest.FixtureRequest) -> Document:
    return parse_file(DOCS_CLEAN / request.param)


def test_document_chunk_invariants(doc: Document, count_tokens: Count) -> None:
    chunks = chunk_document(doc, count_tokens=count_tokens, max_tokens=256)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    covered = [False] * len(doc.text)
    for chunk in chunks:
        assert chunk.text == doc.text[chunk.char_start : chunk.char_end]
        assert count_tokens(chunk.text) <= 256  # [CLS] + pieces + [SEP]: nothing truncated
        section = next(s for s in doc.sections if s.char_start <= chunk.char_start < s.char_end)
        assert chunk.char_end <= section.char_end  # never crosses a page/chapter/section
        assert chunk.location == section.location
        assert chunk.sentence_spans[0][0] == 0
        assert chunk.sentence_spans[-1][1] == len(chunk.text)
        for start, end in chunk.sentence_spans:
            assert 0 <= start < end <= len(chunk.text)
            assert chunk.text[start:end].strip() == chunk.text[start:end]
        covered[chunk.char_start : chunk.char_end] = [True] * len(chunk.text)
    assert all(covered[i] for i, ch in enumerate(doc.text) if not ch.isspace())


def test_sentence_spans_are_the_sentences(count_tokens: Count) -> None:
    text = parse_file(DOCS_CLEAN / "deep_rules_02_intro.md").text
    chunks = chunk_text(text, count_tokens=count_tokens, max_tokens=128, overlap_sentences=0)
    got = [c.text[a:b] for c in chunks for a, b in c.sentence_spans]
    assert got == [text[a:b] for a, b in split_sentences(text)]
    assert all(c.location == Location(LocationKind.SECTION) for c in chunks)


def numbered_text(n: int) -> str:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    words += ["kappa", "lambda", "mu"]
    return " ".join(f"Sentence {i} says {' '.join(words[: 6 + i % 5])}." for i in range(n))


def test_overlap_one_sentence(count_tokens: Count) -> None:
    text = numbered_text(40)
    chunks = chunk_text(text, count_tokens=count_tokens, max_tokens=64, overlap_sentences=1)
    assert len(chunks) > 5
    for prev, nxt in itertools.pairwise(chunks):
        last_start, last_end = prev.sentence_spans[-1]
        last = prev.text[last_start:last_end]
        first_start, first_end = nxt.sentence_spans[0]
        assert nxt.text[first_start:first_end] == last
        assert nxt.char_start == prev.char_start + last_start
        assert len(nxt.sentence_spans) >= 2  # each chunk adds at least one new sentence
    assert chunks[-1].char_end == len(text)


def test_no_overlap_chunks_are_adjacent(count_tokens: Count) -> None:
    text = numbered_text(40)
    chunks = chunk_text(text, count_tokens=count_tokens, max_tokens=64, overlap_sentences=0)
    for prev, nxt in itertools.pairwise(chunks):
        assert text[prev.char_end : nxt.char_start] == " "
        # greedy: the next chunk's first sentence did not fit into this one
        first = nxt.text[: nxt.sentence_spans[0][1]]
        assert count_tokens(prev.text + " " + first) > 64
    assert all(count_tokens(c.text) <= 64 for c in chunks)


def test_long_sentence_split_at_word_boundaries(count_tokens: Count) -> None:
    sentence = " ".join(f"Word{i} interleukin" for i in range(400)) + "."
    text = f"Short opener. {sentence} Short closer."
    chunks = chunk_text(text, count_tokens=count_tokens, max_tokens=256, overlap_sentences=1)
    assert count_tokens(sentence) > 3 * 256
    pieces = [c.text[a:b] for c in chunks for a, b in c.sentence_spans]
    assert all(count_tokens(c.text) <= 256 for c in chunks)
    for chunk in chunks:  # starts and ends on word boundaries
        assert chunk.char_start == 0 or text[chunk.char_start - 1] == " "
        assert chunk.char_end == len(text) or text[chunk.char_end] == " "
    # the pieces, de-duplicated from overlap, rebuild the text word for word
    unique = list(
        dict.fromkeys(
            (c.char_start + a, c.char_start + b) for c in chunks for a, b in c.sentence_spans
        )
    )
    assert " ".join(text[a:b] for a, b in unique) == text
    assert pieces[0] == "Short opener."
    assert pieces[-1] == "Short closer."


def test_single_overlong_word(count_tokens: Count) -> None:
    blob = "x" * 3000 + "ACGT" * 500
    chunks = chunk_text(blob, count_tokens=count_tokens, max_tokens=32, overlap_sentences=0)
    assert "".join(c.text for c in chunks) == blob
    assert all(count_tokens(c.text) <= 32 for c in chunks)


def test_cached_counter_matches_tokenizer(tokenizer: Tokenizer, count_tokens: Count) -> None:
    text = parse_file(DOCS_CLEAN / "bmc_trauma_2010_dvt_prophylaxis_review.pdf").text
    sentences = [text[a:b] for a, b in split_sentences(text)][:300]

    def batch(texts: object) -> list[int]:
        return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]  # type: ignore[call-overload]

    cached = CachedTokenCounter(count_tokens, batch)
    assert cached.special_tokens == 2
    assert [cached(s) for s in sentences] == [count_tokens(s) for s in sentences]
    assert cached.pieces_many(sentences) == [count_tokens(s) - 2 for s in sentences]


def test_counter_without_special_tokens(count_tokens: Count) -> None:
    def pieces_only(text: str) -> int:
        return count_tokens(text) - 2

    text = numbered_text(30)
    with_specials = chunk_text(text, count_tokens=count_tokens, max_tokens=64)
    without = chunk_text(text, count_tokens=pieces_only, max_tokens=64)
    assert with_specials == without


def test_empty_and_invalid(count_tokens: Count) -> None:
    empty = Document(DOCS_CLEAN / "x.txt", "txt", "x", "", ())  # type: ignore[arg-type]
    assert chunk_document(empty, count_tokens=count_tokens) == ()
    assert chunk_text("  \n ", count_tokens=count_tokens) == ()
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_text("a", count_tokens=count_tokens, max_tokens=2)
