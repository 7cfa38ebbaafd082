"""Data at rest: everything VerifAI writes is user-only, and removed text leaves the catalog.

Real collections on real files made here; the hashing fake embedder only stands in for the
model (control flow).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from verifai_desktop.logs import setup_logging
from verifai_desktop.settings import Settings, collections_dir, data_root, save_settings
from verifai_desktop.store import catalog as catalog_mod
from verifai_desktop.store.collection import Collection


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    """Mode bits of ``root`` and everything under it, by path relative to ``root``."""
    out = {".": stat.S_IMODE(root.lstat().st_mode)}
    for p in root.rglob("*"):
        out[str(p.relative_to(root))] = stat.S_IMODE(p.lstat().st_mode)
    return out


def _not_private(root: Path) -> dict[str, str]:
    return {
        rel: oct(mode)
        for rel, mode in _modes(root).items()
        if mode != (0o700 if (root / rel).is_dir() else 0o600)
    }


def _docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "secret.txt").write_text("The launch code is PELICAN-7734. " * 20)
    (folder / "other.txt").write_text("Aspirin lowers the risk of stroke. " * 20)
    return folder


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_everything_written_is_user_only_whatever_the_umask(
    tmp_path: Path, fake_settings: Settings, loose_umask: None
) -> None:
    folder = _docs(tmp_path)
    save_settings(fake_settings)
    setup_logging()
    logging.getLogger("verifai_desktop.test").info("a question about PELICAN")
    with Collection.open("private", create=True, settings=fake_settings) as col:
        report = col.add_paths([folder])
        assert len(report.outcomes) == 2
        col.set_metadata("note", {"a": 1})
        live = _modes(col.path)  # while open: -wal and -shm exist
    for h in logging.getLogger().handlers:
        h.close()
    logging.getLogger().handlers.clear()
    root = data_root()
    written = _modes(root)
    assert {"settings.toml", "verifai.log", "collections/private/catalog.sqlite"} <= set(written)
    assert {"catalog.sqlite-wal", "catalog.sqlite-shm", "vectors.usearch", "write.lock"} <= set(
        live
    )
    assert any(p.startswith("collections/private/lexical/") for p in written)
    assert _not_private(root) == {}
    assert all(m in (0o700, 0o600) for m in live.values()), live


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_an_existing_world_readable_collection_is_tightened_when_opened(
    tmp_path: Path, fake_settings: Settings, loose_umask: None
) -> None:
    with Collection.open("old", create=True, settings=fake_settings) as col:
        col.add_paths([_docs(tmp_path)])
    root = data_root()
    for p in [root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    assert _not_private(root) != {}
    with Collection.open("old") as col:
        assert len(col.documents()) == 2
    assert _not_private(collections_dir()) == {}
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def _connect_like_a_build_without_secure_delete(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    db = _REAL_CONNECT(*args, **kwargs)
    db.execute("PRAGMA secure_delete = OFF")  # the SQLite default unless built otherwise
    return db


_REAL_CONNECT = sqlite3.connect


def test_removed_document_text_is_gone_from_the_catalog_file(
    tmp_path: Path, fake_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Debian builds SQLite with secure_delete on; other builds (and python.org's) do not.
    monkeypatch.setattr(catalog_mod.sqlite3, "connect", _connect_like_a_build_without_secure_delete)
    folder = _docs(tmp_path)
    with Collection.open("wipe", create=True, settings=fake_settings) as col:
        col.add_paths([folder])
        catalog = col.path / "catalog.sqlite"
        assert col.remove(folder / "secret.txt")
        db = _REAL_CONNECT(catalog)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    raw = catalog.read_bytes() + b"".join(
        p.read_bytes() for p in catalog.parent.glob("catalog.sqlite-*")
    )
    assert b"PELICAN-7734" not in raw
    assert b"Aspirin lowers" in raw


_FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from verifai_desktop.errors import ExportFailed
from verifai_desktop.private import export_private_texts

folder = Path(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    export_private_texts(
        [(folder / "rec.json", "small"), (folder / "rec.html", "x" * 100_000)],
        what="audit record",
    )
except ExportFailed as exc:
    print(exc)
"""


@pytest.mark.skipif(os.name == "nt", reason="POSIX file size limit")
def test_a_pair_that_fails_midway_leaves_both_files_as_they_were(tmp_path: Path) -> None:
    """Issue 30, row 10: the second file of an export fails half-written (the file size limit
    stands in for a full disk: a real write refused by the kernel part way); the first file,
    written in full, is not put in place either, the old one keeps its text, no temp file
    stays."""
    import subprocess
    import sys

    (tmp_path / "rec.json").write_text("old record", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.stdout == (
        f"could not write the audit record to {str(tmp_path / 'rec.html')!r}: the file is too "
        "large for this disk or account; choose another disk (no file was changed)\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["rec.json"]
    assert (tmp_path / "rec.json").read_text(encoding="utf-8") == "old record"
