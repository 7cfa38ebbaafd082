"""Without the ``torch`` extra, what needs PyTorch says which extra to install.

PyTorch is hidden from the process (``sys.modules[name] = None`` makes both ``import`` and
``importlib.util.find_spec`` report it missing), as in a default ``.[cpu]`` install.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from verifai_desktop.cli import main
from verifai_desktop.store.folders import list_collections

EXTRA = "install the 'torch' extra: pip install 'verifai-desktop[torch]'"


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("torch", "transformers", "sentence_transformers"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.usefixtures("no_torch")
def test_export_verifier_names_the_torch_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "export-verifier", str(tmp_path), str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == (
        "error: exporting a verifier to ONNX needs PyTorch, transformers and onnx, which is not "
        f"installed; {EXTRA}\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.usefixtures("no_torch")
def test_ingest_with_another_embedder_names_the_torch_extra_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "my-embedder"
    model.mkdir()
    (model / "config.json").write_text("{}")
    note = tmp_path / "note.txt"
    note.write_text("Statins lower LDL cholesterol.\n")
    assert main(["ingest", str(note), "-c", "other", "--embedder", str(model)]) == 1
    assert capsys.readouterr().err == (
        f"error: using the embedder {str(model)!r} (exported to ONNX on first use) needs "
        f"PyTorch and sentence-transformers, which is not installed; {EXTRA}\n"
    )
    assert list_collections() == []
