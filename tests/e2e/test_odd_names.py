"""A document whose folder and file name are Latin-1 bytes, not UTF-8, through every path of a
real `verifai ask` (bundled generator, verifier and embedder) and what follows it: the history,
feedback and a whole audit record, checked against the file it quotes (issue 30, rows 1-2).

The one end-to-end run for these names; the paths that crashed are tested one by one in
tests/unit (the prompt with the real tokenizer, the server backend's request, the history, every
``--json`` output).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from tests.e2e.cli import run_verifai
from verifai_desktop.names import name_from_json

pytestmark = pytest.mark.slow

QUESTION = "What is overfitting?"


def test_ask_history_feedback_and_audit_with_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    raw_folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(raw_folder)
    raw = os.path.join(raw_folder, b"r\xe9sum\xe9 \xff.md")
    shutil.copyfile(DOCS_CLEAN / "deep_rules_09_overfitting.md", raw)
    path, shown = os.fsdecode(raw), f"{tmp_path}/caf\\xe9/r\\xe9sum\\xe9 \\xff.md"

    done = run_verifai("ingest", os.fsdecode(raw_folder), "-c", "odd")
    assert done.returncode == 0, done.stderr
    # Output is read as strict UTF-8 (text mode): a raw 0xFF byte would fail here.
    asked = run_verifai("ask", QUESTION, "-c", "odd", "-k", "2", "--json")
    assert asked.returncode == 0, asked.stderr
    assert "warning" not in asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["passages"] and answer["sentences"]
    for passage in answer["passages"]:
        assert passage["path"] == shown and name_from_json(passage, "path") == path

    listed = run_verifai("history", "-c", "odd", "--json")
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)
    assert entry["answer"] == answer and entry["changed_documents"] == []
    judged = run_verifai("feedback", "add", "-c", "odd", "--id", "1", "--sentence", "1", "--flag")
    assert judged.returncode == 0, judged.stderr

    record = tmp_path / "record.json"
    exported = run_verifai("audit", "export", "-c", "odd", "--last", "-o", str(record))
    assert exported.returncode == 0, exported.stderr
    quotes = json.loads(record.read_bytes().decode("utf-8"))["quotes"]
    assert {name_from_json(q, "path") for q in quotes} == {path}
    # The check reads each quoted span again from the file, found by its exact bytes.
    checked = run_verifai("audit", "check", str(record))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("ok: ")
