"""`verifai ingest`, `search`, `ask` and `check` embed with ONNX Runtime: PyTorch is never
imported.

The bundled embedder used to run on PyTorch (sentence-transformers), with an ONNX export for
queries only; now chunks and queries both go through the shipped ONNX model, and the default
install has no torch at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import DOCS_CLEAN

TORCH_STACK = ("torch", "transformers", "sentence_transformers")


def test_ingest_search_ask_and_check_import_no_torch(tmp_path: Path) -> None:
    doc = DOCS_CLEAN / "deep_rules_09_overfitting.md"
    code = (
        "import sys\n"
        "from verifai_desktop.cli import main\n"
        f"assert main(['ingest', {str(doc)!r}, '-c', 'tiny']) == 0\n"
        "assert main(['search', 'how to detect overfitting', '-c', 'tiny', '-k', '3']) == 0\n"
        "assert main(['ask', 'zyxwv qpmlk', '-c', 'tiny']) == 0\n"  # abstains: no generator
        # The claim check's dense neighbours (contradictions.py) embed the claim too.
        "assert main(['check', 'A validation set detects overfitting.', '-c', 'tiny',"
        " '--budget', '2']) == 0\n"
        "import verifai_desktop.generate.llama, verifai_desktop.verify.check\n"  # ask's full path
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {TORCH_STACK!r})\n"
        "print('torch-stack=' + ','.join(loaded))\n"
        "print('onnxruntime=' + str('onnxruntime' in sys.modules))\n"
    )
    env = {**os.environ, "VERIFAI_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "torch-stack=\n" in out.stdout
    assert "onnxruntime=True\n" in out.stdout  # the embedder ran, on ONNX Runtime
    assert "deep_rules_09_overfitting.md" in out.stdout  # search found the document
