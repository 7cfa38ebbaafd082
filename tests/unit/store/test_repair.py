"""`verifai repair`: a damaged collection rebuilt from its source files, swapped in whole.

Real collections on real files made here, damaged on disk; the fake embedder stands in for
the model (control flow only).
"""

from __future__ import annotations

import random
import sqlite3
import threading
from pathlib import Path

import pytest

from verifai_desktop.cli import main
from verifai_desktop.errors import Cancelled, IndexCorrupt, RepairImpossible
from verifai_desktop.retrieve import Retriever
from verifai_desktop.settings import RetrievalSettings, Settings, collections_dir, save_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import list_collections
from verifai_desktop.store.repair import catalogued_sources, repair_collection

PAGE = 4096


def _docs(tmp_path: Path, n: int = 30) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(n):
        words = " ".join(f"w{i}x{j}" for j in range(300))
        (folder / f"f{i:02}.txt").write_text(f"Topic {i} is about zebra{i}. {words}\n")
    return folder


def _build(tmp_path: Path, settings: Settings, n: int = 30) -> tuple[Path, Path]:
    folder = _docs(tmp_path, n)
    with Collection.open("r", create=True, settings=settings) as col:
        col.add_paths([folder])
    catalog = collections_dir() / "r" / "catalog.sqlite"
    db = sqlite3.connect(catalog)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return folder, catalog


def _damage_chunk_pages(catalog: Path) -> None:
    """Overwrite pages of the chunks table (the bulk of the file), not the documents table."""
    db = sqlite3.connect(catalog)
    doc_pages = {
        r[0] for r in db.execute("SELECT pageno FROM dbstat WHERE name IN ('documents', 'meta')")
    } | {r[0] for r in db.execute("SELECT pageno FROM dbstat WHERE name LIKE 'sqlite_%'")}
    chunk_pages = [
        r[0]
        for r in db.execute("SELECT pageno FROM dbstat WHERE name = 'chunks'")
        if r[0] not in doc_pages
    ]
    db.close()
    data = bytearray(catalog.read_bytes())
    rng = random.Random(7)
    for page in rng.sample(chunk_pages, 4):
        data[(page - 1) * PAGE : page * PAGE] = rng.randbytes(PAGE)
    catalog.write_bytes(bytes(data))


def test_repair_rebuilds_a_collection_with_damaged_pages(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, catalog = _build(tmp_path, fake_settings)
    _damage_chunk_pages(catalog)
    with pytest.raises(IndexCorrupt):
        Collection.open("r")
    (folder / "f29.txt").unlink()  # one source gone since
    save_settings(fake_settings)
    assert main(["repair", "-c", "r"]) == 0
    out = capsys.readouterr().out
    assert f"missing {folder}/f29.txt  - no longer on disk" in out
    assert "collection 'r' rebuilt: 30 files named by its catalog, 1 missing" in out
    with Collection.open("r") as col:
        assert len(col.documents()) == 29
        col.check()
        top = Retriever(col, RetrievalSettings(mode="lexical")).search("zebra7", k=1)
        assert top[0].path == folder / "f07.txt"
    assert list_collections() == ["r"]
    assert sorted(p.name for p in collections_dir().iterdir()) == ["r"]  # staging gone


def test_catalogued_sources_reads_a_healthy_catalog_whole(
    tmp_path: Path, fake_settings: Settings
) -> None:
    folder, catalog = _build(tmp_path, fake_settings, n=3)
    sources, complete = catalogued_sources(catalog)
    assert complete
    assert sorted(sources) == [str(folder / f"f{i:02}.txt") for i in range(3)]


def test_catalogued_sources_reads_row_by_row_past_a_damaged_page(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.sqlite"
    db = sqlite3.connect(catalog)
    db.execute("CREATE TABLE documents (doc_id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT)")
    db.executemany(
        "INSERT INTO documents (source) VALUES (?)",
        [(f"/data/{i:04}/{'x' * 200}.txt",) for i in range(400)],
    )
    db.commit()
    leaves = [
        r[0]
        for r in db.execute(
            "SELECT pageno FROM dbstat WHERE name = 'documents' AND pagetype = 'leaf' "
            "ORDER BY pageno"
        )
    ]
    db.close()
    assert len(leaves) > 10
    data = bytearray(catalog.read_bytes())
    bad = leaves[len(leaves) // 2]
    data[(bad - 1) * PAGE : bad * PAGE] = bytes(PAGE)
    catalog.write_bytes(bytes(data))
    sources, complete = catalogued_sources(catalog)
    assert not complete
    assert 350 < len(sources) < 400
    assert sources[0] == f"/data/0000/{'x' * 200}.txt"
    assert sources[-1] == f"/data/0399/{'x' * 200}.txt"


def test_an_empty_catalog_needs_the_files_named(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, catalog = _build(tmp_path, fake_settings, n=3)
    catalog.write_bytes(b"")
    for side in catalog.parent.glob("catalog.sqlite-*"):
        side.unlink()
    with pytest.raises(RepairImpossible, match="no source file can be read from its catalog"):
        repair_collection("r", settings=fake_settings)
    assert catalog.stat().st_size == 0  # left as it was
    save_settings(fake_settings)
    assert main(["repair", "-c", "r", str(folder)]) == 0
    assert "part of the damaged catalog could not be read" in capsys.readouterr().err
    with Collection.open("r") as col:
        assert len(col.documents()) == 3


def test_a_cancelled_repair_leaves_the_old_collection_untouched(
    tmp_path: Path, fake_settings: Settings
) -> None:
    _, catalog = _build(tmp_path, fake_settings, n=3)
    before = catalog.read_bytes()
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        repair_collection("r", settings=fake_settings, cancel=cancel)
    assert catalog.read_bytes() == before
    assert sorted(p.name for p in collections_dir().iterdir()) == ["r"]
    with Collection.open("r") as col:
        assert len(col.documents()) == 3


def test_repair_keeps_the_answer_history_and_the_folders_followed(
    tmp_path: Path, fake_settings: Settings
) -> None:
    from tests.unit.test_codec import ANSWER
    from verifai_desktop.store.history import History
    from verifai_desktop.store.roots import roots_of

    folder, catalog = _build(tmp_path, fake_settings, n=3)
    path = collections_dir() / "r"
    with History(path) as history:
        kept = history.add(ANSWER, fake_settings, {"/docs/aspirin.pdf": "a" * 64})
        before = history.get(kept)
    _damage_chunk_pages(catalog)
    repair_collection("r", settings=fake_settings)
    with Collection.open("r") as col:
        roots = roots_of(col)
    assert [(r.path, r.is_folder) for r in roots] == [(folder.resolve(), True)]
    with History(path) as history:
        assert history.get(kept) == before
