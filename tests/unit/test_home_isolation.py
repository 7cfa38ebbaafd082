"""No test writes into the user's real data folder, whatever the scope of its fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def home_seen_by_a_module_fixture() -> Path:
    return Path(os.environ["VERIFAI_HOME"])


def test_a_module_fixture_sees_a_temporary_home(
    home_seen_by_a_module_fixture: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.getbasetemp()
    assert home_seen_by_a_module_fixture.is_relative_to(base)


def test_a_test_sees_its_own_home(verifai_home: Path) -> None:
    assert Path(os.environ["VERIFAI_HOME"]) == verifai_home
