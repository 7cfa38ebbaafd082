"""Sentence-aware chunking sized for the embedder, with sentence overlap.

Chunks never cross a section (page, slide, chapter, heading section), so every chunk has one
location. A chunk is a run of whole sentences whose word pieces, plus the embedder's special
tokens ([CLS] and [SEP] for BERT models), fit ``max_tokens``; all-MiniLM-L6-v2 reads 256 word
pieces (its ``max_seq_length``), so nothing is silently truncated. A sentence longer than the
limit is cut at word boundaries into pieces that fit (and a single over-long "word" into
character slices).

Token counts are taken once per sentence and summed. WordPiece pre-tokenises on whitespace and
punctuation, so the count of a run of sentences is the sum of their counts; for other
tokenizers the sum is an upper bound, which keeps chunks within the limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifai_desktop.domain import Chunk, Document, Location, LocationKind, Section
from verifai_desktop.ingest.sentences import split_sentences

TokenCounter = Callable[[str], int]
"""Number of tokens the embedder's tokenizer makes of a text (with or without special tokens:
the count for ``""`` is measured and subtracted). It must not truncate."""

BatchTokenCounter = Callable[[Sequence[str]], Sequence[int]]
"""Token counts for many texts in one call (e.g. ``tokenizers.Tokenizer.encode_batch``)."""

SPECIAL_TOKENS = 2
"""[CLS] and [SEP]: the tokens a BERT-style embedder adds to every input."""

_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class _Unit:
    """A sentence (or a piece of an over-long one): offsets into the text and word pieces."""

    start: int
    end: int
    tokens: int


class CachedTokenCounter:
    """A token counter that counts each whitespace-separated word once and caches it.

    BERT's WordPiece (and SentencePiece with a whitespace pre-tokenizer) tokenises every
    whitespace-separated word on its own, so a text's count is the sum of its words' counts and
    repeated words need no second tokenizer call. For byte-level BPE tokenizers (GPT-2,
    RoBERTa) the sum can differ by a token or so; pass ``word_cache=False`` to the chunkers.
    Create one per embedder and reuse it across documents so the cache pays off.

    Args:
        count_tokens: the tokenizer's count for one text (special tokens included or not;
            the count of ``""`` is subtracted). Must not truncate.
        count_batch: optional batched version, used for the words not yet cached.
        word_cache: False counts whole texts (for tokenizers that are not word-local).
        max_cached_words: the cache is cleared when it grows past this many words.
    """

    def __init__(
        self,
        count_tokens: TokenCounter,
        count_batch: BatchTokenCounter | None = None,
        *,
        word_cache: bool = True,
        max_cached_words: int = 1_000_000,
    ) -> None:
        self._one = count_tokens
        self._batch = count_batch
        self._word_cache = word_cache
        self._max_cached = max_cached_words
        self._cache: dict[str, int] = {}
        self.special_tokens = count_tokens("")
        """Tokens the wrapped counter adds to every text (2 for [CLS]/[SEP] if it counts them)."""

    def _raw(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text, special tokens excluded."""
        if self._batch is not None:
            counts = list(self._batch(texts))
        else:
            counts = [self._one(t) for t in texts]
        return [max(0, n - self.special_tokens) for n in counts]

    def pieces(self, text: str) -> int:
        """Word pieces of ``text`` without special tokens."""
        return self.pieces_many([text])[0]

    def pieces_many(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text without special tokens."""
        if not texts:
            return []
        if not self._word_cache:
            return self._raw(texts)
        cache = self._cache
        split = [t.split() for t in texts]
        missing = list({w for words in split for w in words if w not in cache})
        if missing:
            if len(cache) + len(missing) > self._max_cached:
                cache.clear()
            cache.update(zip(missing, self._raw(missing), strict=True))
        return [sum(cache[w] for w in words) for words in split]

    def __call__(self, text: str) -> int:
        """Count as the wrapped counter does (special tokens included if it includes them)."""
        return self.pieces(text) + self.special_tokens


_RECENT_COUNTERS: dict[tuple[int, object, object, bool], CachedTokenCounter] = {}
_MAX_RECENT_COUNTERS = 4


def _counter(
    count_tokens: TokenCounter, count_batch: BatchTokenCounter | None, word_cache: bool
) -> CachedTokenCounter:
    """A cached counter for these functions, reused across calls so the word cache pays off.

    ``embedder.count_tokens`` is a new bound-method object on every access, so counters are
    keyed by the bound object's id and function; the entry holds the method, so the id cannot
    be reused by another object while the entry lives.
    """
    if isinstance(count_tokens, CachedTokenCounter):
        return count_tokens
    owner = getattr(count_tokens, "__self__", None)
    func = getattr(count_tokens, "__func__", count_tokens)
    batch_func = getattr(count_batch, "__func__", count_batch)
    key = (id(owner), func, batch_func, word_cache)
    counter = _RECENT_COUNTERS.get(key)
    if counter is None:
        if len(_RECENT_COUNTERS) >= _MAX_RECENT_COUNTERS:
            _RECENT_COUNTERS.pop(next(iter(_RECENT_COUNTERS)))
        counter = CachedTokenCounter(count_tokens, count_batch, word_cache=word_cache)
        _RECENT_COUNTERS[key] = counter
    return counter


def _split_long(
    text: str, start: int, end: int, budget: int, counter: CachedTokenCounter
) -> list[_Unit]:
    """Cut ``text[start:end]`` (more than ``budget`` word pieces) at word boundaries."""
    words = [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]
    counts = counter.pieces_many([text[a:b] for a, b in words])
    units: list[_Unit] = []
    piece_start: int | None = None
    piece_end = 0
    total = 0
    for (a, b), n in zip(words, counts, strict=True):
        if n > budget:  # one "word" too long on its own (URL, base64, sequence): cut its chars
            if piece_start is not None:
                units.append(_Unit(piece_start, piece_end, total))
                piece_start, total = None, 0
            units.extend(_split_chars(text, a, b, budget, counter))
            continue
        if piece_start is not None and total + n > budget:
            units.append(_Unit(piece_start, piece_end, total))
            piece_start, total = None, 0
        if piece_start is None:
            piece_start = a
        piece_end = b
        total += n
    if piece_start is not None:
        units.append(_Unit(piece_start, piece_end, total))
    return units


def _split_chars(
    text: str, start: int, end: int, budget: int, counter: CachedTokenCounter
) -> list[_Unit]:
    """Cut one over-long word into the longest character slices that fit ``budget``."""
    units = []
    pos = start
    while pos < end:
        lo, hi = pos + 1, end  # find the largest stop with count(text[pos:stop]) <= budget
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if counter.pieces(text[pos:mid]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        units.append(_Unit(pos, lo, counter.pieces(text[pos:lo])))
        pos = lo
    return units


def _units(
    text: str, start: int, end: int, budget: int, counter: CachedTokenCounter
) -> list[_Unit]:
    """Sentences of ``text[start:end]`` (offsets into ``text``), long ones split to fit."""
    spans = [(start + a, start + b) for a, b in split_sentences(text[start:end])]
    counts = counter.pieces_many([text[a:b] for a, b in spans])
    units: list[_Unit] = []
    for (a, b), n in zip(spans, counts, strict=True):
        if n <= budget:
            units.append(_Unit(a, b, n))
        else:
            units.extend(_split_long(text, a, b, budget, counter))
    return units


def _windows(units: list[_Unit], budget: int, overlap: int) -> list[tuple[int, int]]:
    """Greedy runs ``[i, j]`` of units within ``budget``; the next run restarts ``overlap``
    units back when those units plus the next new one still fit."""
    runs: list[tuple[int, int]] = []
    i, n = 0, len(units)
    while i < n:
        j, total = i, units[i].tokens
        while j + 1 < n and total + units[j + 1].tokens <= budget:
            j += 1
            total += units[j].tokens
        runs.append((i, j))
        if j == n - 1:
            break
        k = max(j + 1 - overlap, i + 1)
        while k <= j and sum(u.tokens for u in units[k : j + 2]) > budget:
            k += 1
        i = k
    return runs


def _chunk_section(
    text: str,
    section: Section,
    counter: CachedTokenCounter,
    budget: int,
    overlap: int,
    first_ordinal: int,
) -> list[Chunk]:
    units = _units(text, section.char_start, section.char_end, budget, counter)
    chunks = []
    for n, (i, j) in enumerate(_windows(units, budget, overlap)):
        start, end = units[i].start, units[j].end
        chunks.append(
            Chunk(
                ordinal=first_ordinal + n,
                text=text[start:end],
                char_start=start,
                char_end=end,
                location=section.location,
                sentence_spans=tuple((u.start - start, u.end - start) for u in units[i : j + 1]),
                ocr=section.ocr.within(start, end) if section.ocr is not None else None,
            )
        )
    return chunks


def _check(max_tokens: int, overlap_sentences: int) -> int:
    budget = max_tokens - SPECIAL_TOKENS
    if budget < 1:
        raise ValueError(f"max_tokens must exceed {SPECIAL_TOKENS} (got {max_tokens})")
    if overlap_sentences < 0:
        raise ValueError(f"overlap_sentences must be >= 0 (got {overlap_sentences})")
    return budget


def chunk_document(
    doc: Document,
    *,
    count_tokens: TokenCounter,
    max_tokens: int = 256,
    overlap_sentences: int = 1,
    count_tokens_batch: BatchTokenCounter | None = None,
    word_cache: bool = True,
) -> tuple[Chunk, ...]:
    """Split a document into sentence-aligned chunks that fit the embedder.

    Args:
        doc: the parsed document.
        count_tokens: tokenizer token count of a text; must not truncate.
        max_tokens: the embedder's input limit in tokens, special tokens included
            (256 for all-MiniLM-L6-v2).
        overlap_sentences: how many final sentences of a chunk start the next one (when they
            fit alongside the next new sentence).
        count_tokens_batch: optional batched counter, used instead of ``count_tokens`` for
            the per-sentence counts (much faster with a Rust tokenizer).
        word_cache: count per whitespace-separated word with a cache (exact for WordPiece;
            see :class:`CachedTokenCounter`). Pass a :class:`CachedTokenCounter` as
            ``count_tokens`` to keep the cache across documents.

    Returns:
        Chunks in document order, ``ordinal`` 0.., each within one section, with
        ``chunk.text == doc.text[chunk.char_start:chunk.char_end]`` and sentence spans into
        ``chunk.text``. A document with no text gives ``()``.

    Raises:
        ValueError: ``max_tokens <= 2`` or ``overlap_sentences < 0``.
    """
    budget = _check(max_tokens, overlap_sentences)
    counter = _counter(count_tokens, count_tokens_batch, word_cache)
    chunks: list[Chunk] = []
    for section in doc.sections:
        chunks.extend(
            _chunk_section(doc.text, section, counter, budget, overlap_sentences, len(chunks))
        )
    return tuple(chunks)


def chunk_text(
    text: str,
    location: Location | None = None,
    *,
    count_tokens: TokenCounter,
    max_tokens: int = 256,
    overlap_sentences: int = 1,
    count_tokens_batch: BatchTokenCounter | None = None,
    word_cache: bool = True,
) -> tuple[Chunk, ...]:
    """Chunk a plain string as one section (e.g. a BEIR abstract).

    Args:
        text: the text; chunk offsets point into it.
        location: location given to every chunk (default: a ``SECTION`` with no heading).
        count_tokens: as for :func:`chunk_document`.
        max_tokens: as for :func:`chunk_document`.
        overlap_sentences: as for :func:`chunk_document`.
        count_tokens_batch: as for :func:`chunk_document`.
        word_cache: as for :func:`chunk_document`.

    Returns:
        Chunks with offsets into ``text``.

    Raises:
        ValueError: ``max_tokens <= 2`` or ``overlap_sentences < 0``.
    """
    budget = _check(max_tokens, overlap_sentences)
    counter = _counter(count_tokens, count_tokens_batch, word_cache)
    section = Section(0, len(text), location or Location(LocationKind.SECTION))
    return tuple(_chunk_section(text, section, counter, budget, overlap_sentences, 0))
