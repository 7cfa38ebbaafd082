"""Shared fixtures: an isolated VERIFAI_HOME per test and the shared data folder."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hub_server import LocalHub

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("VERIFAI_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
DOCS_CLEAN = SHARED_DATA / "docs" / "clean"
needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="the default OCR engine, Debian's tesseract-ocr, is not installed (.ci/run installs it)",
)
"""For tests that recognise a page with Tesseract (the program, not only pytesseract)."""
DOCS_NASTY = SHARED_DATA / "docs" / "nasty"


@pytest.fixture(scope="session", autouse=True)
def session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A VERIFAI_HOME for the whole run, set before any fixture of wider scope runs.

    Module-scoped fixtures are built before the per-test ``verifai_home`` below, so without
    this a module fixture that opens a collection wrote into the user's real data folder (and
    found the collections of earlier runs there).
    """
    home = tmp_path_factory.mktemp("session_home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VERIFAI_HOME", str(home))
        yield home


@pytest.fixture(scope="module", autouse=True)
def module_tmp_cleanup(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Remove the folders a module made under the base temp folder once it ends, unless one
    of its tests failed.

    ``tmp_path_retention_policy = "failed"`` removes a passed test's ``tmp_path`` at once, but
    folders of module fixtures (``tmp_path_factory.mktemp``: homes with an assembled 470 MB
    generator, PostgreSQL data, an installed bundle) stayed until the session ended: a whole
    run kept 13 GB and filled CI's disk. Being autouse, this is set up before the module's
    own fixtures and torn down after them.
    """
    base = tmp_path_factory.getbasetemp()
    before = set(base.iterdir())
    failed_before = request.session.testsfailed
    yield
    if request.session.testsfailed != failed_before:
        return
    for path in set(base.iterdir()) - before:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def verifai_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point VERIFAI_HOME at a fresh folder so no test touches the user's data.

    The Hub's offline flags are set as a user would set them (``offline.stay_offline`` in an
    earlier test of the process set them too, and would otherwise count as their author).
    """
    from verifai_desktop import offline

    home = tmp_path / "verifai_home"
    monkeypatch.setenv("VERIFAI_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setattr(offline, "_set_here", set())
    return home


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the checkout (``$VERIFAI_SHARED_DATA`` overrides)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data not found at {SHARED_DATA}; set VERIFAI_SHARED_DATA")
    return SHARED_DATA


@pytest.fixture
def local_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    """A local Hugging Face Hub on 127.0.0.1 (``tests/hub_server.py``), ``HF_ENDPOINT`` pointed
    at it and the offline flags unset, as for a user who downloads a model."""
    with LocalHub(lifetime_s=300) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
        yield hub
