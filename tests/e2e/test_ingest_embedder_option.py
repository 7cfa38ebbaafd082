"""`verifai ingest --embedder`: the model is chosen when a collection is created, then kept."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from tests.e2e.cli import run_verifai


def _verifai(*args: str) -> subprocess.CompletedProcess[str]:
    return run_verifai(*args, timeout_s=600)


def test_embedder_recorded_on_create_and_a_different_one_refused(
    tmp_path: Path, verifai_home: Path
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Statins lower LDL cholesterol in adults with high cardiovascular risk.\n")
    first = _verifai(
        "ingest", str(note), "-c", "emb", "--embedder", "sentence-transformers/all-MiniLM-L6-v2"
    )
    assert first.returncode == 0, first.stderr[-2000:]
    config = tomllib.loads((verifai_home / "collections" / "emb" / "collection.toml").read_text())
    assert config["embedder"] == "all-MiniLM-L6-v2"

    other = _verifai("ingest", str(note), "-c", "emb", "--embedder", str(tmp_path / "my-model"))
    assert other.returncode == 1
    assert "was built with the embedder 'all-MiniLM-L6-v2'" in other.stderr
