"""Fixtures of the training-script tests: ``models/`` importable, the real NLI pool."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "models"))


@pytest.fixture(scope="module")
def pool_dir(shared_data: Path) -> Path:
    """The NLI training pool, ``shared/data/nli_train``."""
    return shared_data / "nli_train"
