"""A watched reference library (issue 43): a ``.bib`` edited on disk and a Zotero database
replaced are followed like files, through the real watchdog observer and
:func:`~verifai_desktop.store.watch.sync_changes`; a deleted ``.bib`` takes its documents with
it, a missing Zotero folder deletes nothing. Real files, the hashing fake embedder."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.unit.ingest.zotero_db import build_zotero
from tests.unit.store.test_library import BIB
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.library import LIBRARIES_KEY, ingest_sources
from verifai_desktop.store.watch import FolderWatcher, SyncReport, sync_changes, watched_roots
from verifai_desktop.store.writer import Outcome


def _wait_for(check: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("the collection did not follow the library in time")
        time.sleep(0.1)


def _keys(col: Collection, library: Path) -> dict[str, str]:
    """``{file name or '#key': entry key}`` of the documents kept for ``library``."""
    return {Path(source).name: ref.key for source, ref in col.references_of(str(library)).items()}


@contextlib.contextmanager
def _following(col: Collection) -> Iterator[list[SyncReport]]:
    """A real watcher on what the collection follows, syncing each batch; yields the reports."""
    lock = threading.Lock()
    reports: list[SyncReport] = []

    def on_batch(paths: set[Path]) -> None:
        with lock:
            reports.append(sync_changes(col, sorted(paths)))

    roots = watched_roots(col)
    watcher = FolderWatcher(roots, on_batch, debounce_s=0.3)
    watcher.start()
    try:
        assert watcher.watched == sorted(r.path for r in roots)
        yield reports
    finally:
        watcher.stop()


def _bib(tmp_path: Path) -> Path:
    shutil.copy(DOCS_CLEAN / "deep_rules_02_intro.md", tmp_path / "intro.md")
    (tmp_path / "sub").mkdir(exist_ok=True)  # the .bib names ../ paths through it
    shutil.copy(DOCS_CLEAN / "scifact_covid_claims.txt", tmp_path / "claims.txt")
    shutil.copy(DOCS_CLEAN / "scifact_data_description.md", tmp_path / "data.md")
    bib = tmp_path / "library.bib"
    bib.write_text(BIB.replace("/ABSOLUTE", str(tmp_path)), encoding="utf-8")
    return bib.resolve()


def test_an_edited_bib_is_followed_added_changed_and_removed_entries(
    tmp_path: Path, fake_settings: Settings
) -> None:
    bib = _bib(tmp_path)
    with Collection.open("lib", create=True, settings=fake_settings) as col:
        ingest_sources(col, [bib])
        assert [r.path for r in watched_roots(col)] == [bib]
        assert _keys(col, bib) == {
            "intro.md": "lee2024md",
            "claims.txt": "wang2019claims",
            "library.bib#nofile2001": "nofile2001",
        }
        with _following(col) as reports:
            # An editor saves the whole file: one author changed, one entry removed, one
            # entry added with a file.
            text = bib.read_text(encoding="utf-8").replace("Lee, Ada", "Young, Ada")
            text = text[: text.index("@misc")] + text[text.index("@book") :]
            text += "@article{kim2021data, author = {Kim, Jo}, title = {Data}, year = {2021},"
            text += " file = {data.md}}\n"
            bib.write_text(text, encoding="utf-8")
            _wait_for(lambda: "data.md" in _keys(col, bib) and "claims.txt" not in _keys(col, bib))
            _wait_for(lambda: bool(reports))
        assert _keys(col, bib) == {
            "intro.md": "lee2024md",
            "data.md": "kim2021data",
            "library.bib#nofile2001": "nofile2001",
        }
        assert col.document(str(tmp_path / "claims.txt")) is None
        intro = col.references_of(str(bib))[str(tmp_path / "intro.md")]
        assert intro.authors == ("Young", "Smith")
        hits = col.lexical.search("author:young", 5)
        assert hits, "the changed metadata is searchable"
        statuses = {
            (Path(o.source).name, o.status) for r in reports if r.ingest for o in r.ingest.outcomes
        }
        assert ("data.md", Outcome.INDEXED) in statuses
        assert ("claims.txt", Outcome.REMOVED) in statuses

        # The .bib deleted (its folder still there): its documents go, it is not followed.
        bib.unlink()
        report = sync_changes(col, [bib])
        assert sorted(Path(s).name for s in report.removed) == [
            "data.md",
            "intro.md",
            "library.bib#nofile2001",
        ]
        assert list(col.documents()) == []
        assert col.metadata(LIBRARIES_KEY) == {}
        assert watched_roots(col) == []


@pytest.fixture
def zotero(tmp_path: Path) -> Path:
    return build_zotero(tmp_path / "Zotero", DOCS_CLEAN / "acl2020_specter.pdf", _s2orc(tmp_path))


def _s2orc(tmp_path: Path) -> Path:
    linked = tmp_path / "linked" / "s2orc.pdf"
    linked.parent.mkdir(exist_ok=True)
    if not linked.exists():
        shutil.copy(DOCS_CLEAN / "acl2020_s2orc.pdf", linked)
    return linked


def test_a_replaced_zotero_database_is_followed(
    tmp_path: Path, zotero: Path, fake_settings: Settings
) -> None:
    zotero = zotero.resolve()
    with Collection.open("zot", create=True, settings=fake_settings) as col:
        ingest_sources(col, [zotero])
        assert sorted(_keys(col, zotero).values()) == ["AAAA1111", "BBBB2222", "CCCC3333"]
        # Zotero restored from a backup made elsewhere: Lo's paper gone, Cohan's title edited.
        backup = build_zotero(
            tmp_path / "backup", DOCS_CLEAN / "acl2020_specter.pdf", _s2orc(tmp_path)
        )
        db = sqlite3.connect(str(backup / "zotero.sqlite"))
        with db:
            db.execute("DELETE FROM itemAttachments WHERE parentItemID=2")
            db.execute("DELETE FROM items WHERE itemID IN (2, 11)")
            db.execute(
                "UPDATE itemDataValues SET value='SPECTER revised' WHERE value LIKE 'SPECTER:%'"
            )
        db.close()
        with _following(col):
            os.replace(backup / "zotero.sqlite", zotero / "zotero.sqlite")
            _wait_for(lambda: sorted(_keys(col, zotero).values()) == ["AAAA1111", "CCCC3333"])
            paper = zotero / "storage" / "PDF11111" / "paper.pdf"
            _wait_for(lambda: col.references_of(str(zotero))[str(paper)].title == "SPECTER revised")
        assert col.document(str(_s2orc(tmp_path))) is None

        # The Zotero folder moved away (a disk not mounted): nothing of it is removed.
        aside = zotero.with_name("Zotero-aside")
        zotero.rename(aside)
        try:
            report = sync_changes(col, None)
            assert report.unavailable and report.unavailable[0][0] == zotero
            assert sorted(_keys(col, zotero).values()) == ["AAAA1111", "CCCC3333"]
        finally:
            aside.rename(zotero)
        assert sync_changes(col, None).unavailable == ()
