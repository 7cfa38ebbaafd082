"""No test writes into the user's real data folder, whatever the scope of its fixtures.

Issue 41 row 17: the tests checked only the variable their own fixture set; they now have the
app write (settings, a collection with its catalog and indexes, a history entry, the audit
key) and look where the files went: under the test's home, and nowhere in the platform's
real data folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest

from tests.unit.fakes import FAKE_NAME, HashEmbedder
from tests.unit.test_codec import ANSWER
from verifai_desktop.audit import install_public_key, key_path
from verifai_desktop.index import embedder as embedder_mod
from verifai_desktop.settings import APP_NAME, ModelSettings, Settings, save_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import collection_history

REAL_HOME = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
"""The data folder the app would use without ``$VERIFAI_HOME``."""


def _real_files(name: str) -> list[Path]:
    """Files under the real data folder whose path names ``name`` (none should exist)."""
    if not REAL_HOME.exists():
        return []
    return [p for p in REAL_HOME.rglob("*") if name in str(p)]


def _write_all(fake_settings: Settings, collection: str, notes: Path) -> None:
    """What a user's first session writes: settings, a collection, a kept answer, the key."""
    save_settings(fake_settings)
    notes.mkdir()
    (notes / "note.md").write_text("# Note\n\nAspirin lowers stroke risk.\n", encoding="utf-8")
    with Collection.open(collection, create=True, settings=fake_settings) as col:
        col.add_paths([notes])
    with collection_history(collection) as history:
        history.add(ANSWER, fake_settings, {})
    install_public_key()


@pytest.fixture(scope="module")
def written_by_a_module_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Writes as a module-scoped fixture (built before the per-test home exists)."""
    embedder_mod._CACHE[FAKE_NAME] = HashEmbedder()
    try:
        settings = Settings(models=ModelSettings(embedder=FAKE_NAME))
        _write_all(settings, "isolation_module", tmp_path_factory.mktemp("notes") / "notes")
        yield Path(os.environ["VERIFAI_HOME"])
    finally:
        embedder_mod._CACHE.pop(FAKE_NAME, None)


def _files_under(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()}


def test_a_module_fixture_writes_under_a_temporary_home(
    written_by_a_module_fixture: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = written_by_a_module_fixture
    assert home.is_relative_to(tmp_path_factory.getbasetemp())
    files = _files_under(home)
    assert "settings.toml" in files and key_path().name in {Path(f).name for f in files}
    assert any(f.startswith("collections/isolation_module/") for f in files), files
    assert _real_files("isolation_module") == []


def test_a_test_writes_under_its_own_home(
    verifai_home: Path, fake_settings: Settings, tmp_path: Path
) -> None:
    assert not verifai_home.exists()  # nothing was written before the test
    _write_all(fake_settings, "isolation_test", tmp_path / "notes")
    files = _files_under(verifai_home)
    assert "settings.toml" in files
    assert f"keys/{key_path().name}" in files
    collection = {f for f in files if f.startswith("collections/isolation_test/")}
    assert any(f.endswith(".sqlite") for f in collection), collection
    assert _real_files("isolation_test") == []
