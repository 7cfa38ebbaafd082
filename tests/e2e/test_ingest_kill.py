"""An ingest killed with SIGKILL mid-run leaves a collection that opens, searches and resumes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DOCS_CLEAN

FILES = (
    "deep_rules_02_intro.md",
    "deep_rules_03_when_to_use_dl.md",
    "deep_rules_09_overfitting.md",
    "bmc_trauma_2010_dvt_prophylaxis_review.pdf",
    "hindawi_rehab_res_pract_2010.pdf",
    "deep_rules_12_privacy.md",
)


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "verifai_desktop", *args]


def _json(*args: str) -> Any:
    proc = subprocess.run(
        _cmd(*args, "--json"), capture_output=True, text=True, timeout=900, env=dict(os.environ)
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
def test_sigkill_mid_ingest_then_reopen_search_and_resume(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in FILES:
        shutil.copy2(DOCS_CLEAN / name, docs / name)
    proc = subprocess.Popen(
        _cmd("ingest", str(docs), "--collection", "k"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert proc.stderr is not None
    # Progress lines "[i/N] name" start file i, so at "[5/6]" files 1-4 are committed.
    seen: list[str] = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("[5/"):
            break
    else:
        pytest.fail(f"ingest ended before file 5: {''.join(seen)[-2000:]}")
    time.sleep(0.3)  # land somewhere inside parsing/embedding file 5
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    status = _json("status", "--collection", "k")
    committed = {Path(d["source"]).name for d in status["documents"]}
    order = sorted(FILES)  # a folder is ingested in sorted path order
    assert set(order[:4]) <= committed <= set(FILES)
    assert status["indexes_current"] is True  # reopening reconciled the indexes
    hits = _json("search", "deep learning", "--collection", "k", "--mode", "lexical")["passages"]
    assert hits and {Path(p["path"]).name for p in hits} <= committed

    resumed = _json("ingest", str(docs), "--collection", "k")
    by_name = {Path(f["source"]).name: f["status"] for f in resumed["files"]}
    assert sorted(by_name) == sorted(FILES)
    assert {n for n, s in by_name.items() if s == "skipped"} == committed
    assert {n for n, s in by_name.items() if s == "indexed"} == set(FILES) - committed

    final = _json("status", "--collection", "k")
    sources = [d["source"] for d in final["documents"]]
    assert len(sources) == len(set(sources)) == len(FILES)
    assert final["chunks"] == sum(d["chunks"] for d in final["documents"])
    hits = _json(
        "search", "deep learning data", "--collection", "k", "--mode", "lexical", "-k", "100"
    )
    keys = [(p["path"], p["char_start"]) for p in hits["passages"]]
    assert len(keys) == len(set(keys))
    ids = [p["chunk_id"] for p in hits["passages"]]
    assert len(ids) == len(set(ids))
