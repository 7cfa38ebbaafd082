"""No model library is imported unless its model is about to run (issue 13, speed).

Each command runs in a fresh interpreter (``sys.modules`` starts empty) on a real collection:
``verifai --help``, ``--version``, ``status`` and ``collections`` load no model library; a
``search`` loads ONNX Runtime for one model only, the collection's query encoder (the bundled
all-MiniLM-L6-v2), and neither the generator (llama.cpp) nor the verifier.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from verifai_desktop.modelstore import BUNDLED_EMBEDDER_DIR

MODEL_LIBRARIES = (
    "llama_cpp",
    "onnxruntime",
    "tokenizers",
    "torch",
    "transformers",
    "sentence_transformers",
)

# Runs one command, then prints the model libraries loaded and the ONNX models given to
# InferenceSession (patched before the command, so every session is seen).
PROBE = """
import json, sys
sessions = []
if PATCH_ORT:
    import onnxruntime
    class Recorded(onnxruntime.InferenceSession):
        def __init__(self, path, *args, **kwargs):
            sessions.append(str(path))
            super().__init__(path, *args, **kwargs)
    onnxruntime.InferenceSession = Recorded
from verifai_desktop.cli import main
try:
    code = main(ARGS)
except SystemExit as exc:
    code = exc.code
libraries = sorted({m.split(".")[0] for m in sys.modules} & set(LIBRARIES))
print("PROBE " + json.dumps({"code": code, "libraries": libraries, "sessions": sessions}))
"""


def _probe(args: list[str], home: Path, *, patch_ort: bool = False) -> dict[str, object]:
    code = (
        PROBE.replace("PATCH_ORT", repr(patch_ort))
        .replace("ARGS", repr(args))
        .replace("LIBRARIES", repr(MODEL_LIBRARIES))
    )
    env = {**os.environ, "VERIFAI_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("PROBE "))
    result: dict[str, object] = json.loads(line.removeprefix("PROBE "))
    return result


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A VERIFAI_HOME holding collection ``tiny`` (one clean document), ingested by
    ``verifai ingest`` in its own process."""
    root = tmp_path_factory.mktemp("imports") / "home"
    doc = DOCS_CLEAN / "deep_rules_09_overfitting.md"
    assert _probe(["ingest", str(doc), "-c", "tiny"], root)["code"] == 0
    return root


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["status", "-c", "tiny"], ["collections"]],
    ids=["help", "version", "status", "collections"],
)
def test_listing_commands_load_no_model_library(args: list[str], home: Path) -> None:
    result = _probe(args, home)
    assert result == {"code": 0, "libraries": [], "sessions": []}


def test_search_runs_the_onnx_query_encoder_and_nothing_else(home: Path) -> None:
    result = _probe(["search", "how to detect overfitting", "-c", "tiny"], home, patch_ort=True)
    assert result["code"] == 0
    assert result["libraries"] == ["onnxruntime", "tokenizers"]  # the query encoder's
    assert result["sessions"] == [str(BUNDLED_EMBEDDER_DIR / "model.onnx")]
