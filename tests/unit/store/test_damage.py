"""Damaged catalogs are reported when a collection opens, not as a crash mid-search.

Real collections built here from real text files (the fake embedder stands in for the model),
then damaged the way disks and tools damage them: emptied, or pages overwritten.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from verifai_desktop.cli import main
from verifai_desktop.errors import IndexCorrupt
from verifai_desktop.settings import Settings, collections_dir
from verifai_desktop.store.catalog import Catalog
from verifai_desktop.store.collection import Collection

PAGE = 4096


def _build(tmp_path: Path, settings: Settings, name: str = "d", files: int = 40) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(files):
        words = " ".join(f"word{i}x{j}" for j in range(400))
        (folder / f"f{i:03}.txt").write_text(f"Document {i} about topic {i}. {words}\n")
    with Collection.open(name, create=True, settings=settings) as col:
        col.add_paths([folder])
    catalog = collections_dir() / name / "catalog.sqlite"
    db = sqlite3.connect(catalog)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return catalog


def test_a_zero_byte_catalog_is_damage_not_a_new_empty_collection(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = _build(tmp_path, fake_settings, files=2)
    catalog.write_bytes(b"")
    for side in catalog.parent.glob("catalog.sqlite-*"):
        side.unlink()
    with pytest.raises(IndexCorrupt, match=r"empty \(0 bytes\)\); repair collection 'd'") as info:
        Collection.open("d")
    assert info.value.collection == "d"
    assert catalog.stat().st_size == 0  # nothing was written over it
    assert main(["status", "-c", "d"]) == 1
    err = capsys.readouterr().err
    assert "catalog.sqlite is damaged (the catalog file is empty (0 bytes))" in err
    assert "(`verifai repair --collection d`)" in err


def test_overwritten_pages_fail_at_open_instead_of_in_search(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = _build(tmp_path, fake_settings)
    data = bytearray(catalog.read_bytes())
    pages = len(data) // PAGE
    assert pages > 20
    rng = random.Random(14)
    for page in rng.sample(range(2, pages), 5):  # page 1 (the header) left intact
        data[page * PAGE : (page + 1) * PAGE] = rng.randbytes(PAGE)
    catalog.write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt, match=r"catalog\.sqlite is damaged \(") as info:
        Collection.open("d")
    assert info.value.collection == "d"
    assert main(["status", "-c", "d"]) == 1
    assert main(["search", "topic", "-c", "d"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "catalog.sqlite is damaged (database disk image is malformed); repair" in err
    assert err.count("(`verifai repair --collection d`)") == 2


def test_collections_lists_a_damaged_one_beside_the_healthy(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = _build(tmp_path, fake_settings, name="bad", files=2)
    with Collection.open("good", create=True, settings=fake_settings):
        pass
    catalog.write_bytes(b"")
    assert main(["collections"]) == 0
    out = capsys.readouterr().out
    assert "good" in out and "0 documents" in out
    assert "bad" in out and "damaged:" in out and "verifai repair --collection bad" in out


def test_full_check_on_a_healthy_catalog_passes(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    _build(tmp_path, fake_settings, files=3)
    with Collection.open("d") as col:
        col.check()
    assert main(["status", "-c", "d", "--check"]) == 0
    assert "3 documents" in capsys.readouterr().out


def test_quick_check_findings_are_summarised_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("CREATE TABLE documents (x)")
    db.execute("CREATE TABLE chunks (x)")
    db.execute("CREATE INDEX meta_value ON meta(value)")
    db.executemany("INSERT INTO meta VALUES (?, ?)", [(f"k{i}", "v" * 50) for i in range(300)])
    db.commit()
    root = db.execute("SELECT rootpage FROM sqlite_schema WHERE name='meta_value'").fetchone()[0]
    db.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * PAGE
    data[start + 8 : start + 40] = bytes(32)  # cells of the index page point nowhere sensible
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt) as info:
        Catalog(path, create=False)
    assert "\n" not in str(info.value)
    assert "damaged (SQLite's quick check failed: On tree page " in str(info.value)
    assert " more); repair the collection to rebuild it" in str(info.value)
