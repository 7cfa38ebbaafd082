"""Fixtures shared by the unit tests: the fake embedder registered by name, and the real
all-MiniLM-L6-v2 tokenizer (loaded once) for chunking real documents as ingest does."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import resources

import pytest
from tokenizers import Tokenizer

from tests.unit.fakes import FAKE_NAME, HashEmbedder
from verifai_desktop.index import embedder as embedder_mod
from verifai_desktop.settings import ModelSettings, Settings


@pytest.fixture
def fake_embedder() -> Iterator[HashEmbedder]:
    """Register the fake under its name in the process-wide embedder cache."""
    fake = HashEmbedder()
    embedder_mod._CACHE[FAKE_NAME] = fake
    yield fake
    embedder_mod._CACHE.pop(FAKE_NAME, None)


@pytest.fixture
def fake_settings(fake_embedder: HashEmbedder) -> Settings:
    """Settings whose embedder is the fake."""
    return Settings(models=ModelSettings(embedder=FAKE_NAME))


@pytest.fixture(scope="session")
def tokenizer() -> Tokenizer:
    """The bundled all-MiniLM-L6-v2 WordPiece tokenizer, without truncation or padding.

    A token counter must not truncate, or chunk sizes would be measured wrong (the model's
    original tokenizer.json truncated and padded to 128; the shipped one does neither, this
    makes sure).
    """
    path = resources.files("verifai_desktop") / "bundled/embedder/all-MiniLM-L6-v2/tokenizer.json"
    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


@pytest.fixture(scope="session")
def count_tokens(tokenizer: Tokenizer) -> Callable[[str], int]:
    """Token count with [CLS] and [SEP], as the embedder sees a text."""

    def count(text: str) -> int:
        return len(tokenizer.encode(text).ids)

    return count
