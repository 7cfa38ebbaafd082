"""Re-ingesting a folder: unchanged files skipped, changed ones replaced, deleted ones removed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import DOCS_CLEAN
from tests.e2e.cli import run_verifai


def _verifai(*args: str) -> subprocess.CompletedProcess[str]:
    return run_verifai(*args)


def _json(*args: str) -> Any:
    proc = _verifai(*args, "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {Path(f["source"]).name: f["status"] for f in report["files"]}


def _top_files(query: str) -> list[str]:
    out = _json("search", query, "--collection", "inc", "--mode", "lexical")
    return [Path(p["path"]).name for p in out["passages"]]


def test_changed_file_replaced_and_deleted_file_removed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("deep_rules_02_intro.md", "scifact_covid_claims.txt", "pandoc_reader_basic.pptx"):
        shutil.copy2(DOCS_CLEAN / name, docs / name)
    note = docs / "note.txt"
    note.write_text("Zebrafish heart regeneration is studied in this note.\n", encoding="utf-8")

    first = _json("ingest", str(docs), "--collection", "inc")
    assert _statuses(first) == {
        "deep_rules_02_intro.md": "indexed",
        "note.txt": "indexed",
        "pandoc_reader_basic.pptx": "indexed",
        "scifact_covid_claims.txt": "indexed",
    }
    assert _top_files("zebrafish")[:1] == ["note.txt"]

    note.write_text("Axolotl limb regrowth is documented in this note.\n", encoding="utf-8")
    (docs / "pandoc_reader_basic.pptx").unlink()
    second = _json("ingest", str(docs), "--collection", "inc")
    assert _statuses(second) == {
        "deep_rules_02_intro.md": "skipped",
        "note.txt": "indexed",
        "pandoc_reader_basic.pptx": "removed",
        "scifact_covid_claims.txt": "skipped",
    }
    assert _top_files("zebrafish") == []
    assert _top_files("axolotl") == ["note.txt"]
    assert _top_files("Everworker venn diagram") == []

    status = _json("status", "--collection", "inc")
    assert sorted(Path(d["source"]).name for d in status["documents"]) == [
        "deep_rules_02_intro.md",
        "note.txt",
        "scifact_covid_claims.txt",
    ]
    assert status["chunks"] == sum(d["chunks"] for d in status["documents"])

    removed = _json("remove", str(note), "--collection", "inc")
    assert removed["removed"] == [str(note.resolve())]
    assert _top_files("axolotl") == []
    proc = _verifai("remove", str(note), "--collection", "inc")
    assert proc.returncode == 1 and "is not in collection 'inc'" in proc.stderr


def test_missing_path_is_a_user_error(tmp_path: Path) -> None:
    proc = _verifai("ingest", str(tmp_path / "nowhere.pdf"), "--collection", "inc")
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {tmp_path / 'nowhere.pdf'} does not exist")
    assert _verifai("status", "--collection", "inc").returncode == 1  # nothing was created
