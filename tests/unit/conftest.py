"""Fixtures shared by the unit tests: the fake embedder registered by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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
