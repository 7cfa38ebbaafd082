"""Shared fixtures: an isolated VERIFAI_HOME per test and the shared data folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("VERIFAI_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
DOCS_CLEAN = SHARED_DATA / "docs" / "clean"
DOCS_NASTY = SHARED_DATA / "docs" / "nasty"


@pytest.fixture(autouse=True)
def verifai_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point VERIFAI_HOME at a fresh folder so no test touches the user's data."""
    home = tmp_path / "verifai_home"
    monkeypatch.setenv("VERIFAI_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return home


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the checkout (``$VERIFAI_SHARED_DATA`` overrides)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data not found at {SHARED_DATA}; set VERIFAI_SHARED_DATA")
    return SHARED_DATA
