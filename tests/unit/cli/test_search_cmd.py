"""`verifai search` shows reference-list chunks, marked, in text and JSON, and names files that
are not valid UTF-8 in JSON as every ``--json`` output does (fake embedder)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from verifai_desktop.cli import main
from verifai_desktop.cli.search_cmd import REFERENCE_MARK
from verifai_desktop.names import name_from_json
from verifai_desktop.settings import Settings, save_settings

# Body text and two entries of the reference list of bmc_trauma_2010_dvt_prophylaxis_review.pdf
NOTE = """# Heparin prophylaxis

The risks of heparin include bleeding and heparin induced thrombocytopenia.

## References

1. Warkentin TE, Levine MN, Hirsh J, Horsewood P, Roberts RS, Gent M, Kelton JG: Heparin-induced
   thrombocytopenia in patients treated with low-molecular-weight heparin or unfractionated
   heparin. N Engl J Med 1995, 332:1330-5.
2. Weitz JI: Low-molecular-weight heparins. N Engl J Med 1997, 337:688-98.
"""


def test_search_marks_reference_chunks(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(fake_settings)
    note = tmp_path / "heparin.md"
    note.write_text(NOTE, encoding="utf-8")
    assert main(["ingest", str(note), "-c", "h"]) == 0
    capsys.readouterr()

    args = ["search", "heparin thrombocytopenia", "-c", "h", "--mode", "lexical"]
    assert main([*args, "--json"]) == 0
    passages = json.loads(capsys.readouterr().out)["passages"]
    by_reference = {p["is_reference"]: p["location"]["heading"] for p in passages}
    assert by_reference == {
        True: "Heparin prophylaxis > References",
        False: "Heparin prophylaxis",
    }

    assert main(args) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "heparin.md" in line]
    assert len(rows) == len(passages)
    for row, passage in zip(rows, passages, strict=True):
        assert row.endswith(REFERENCE_MARK) is passage["is_reference"]


def test_every_json_output_names_a_file_that_is_not_utf8_escaped_with_its_bytes(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, row 2: ``ingest``, ``status``, ``search`` and ``remove`` with ``--json`` on a
    file ``caf\\xe9/r\\xe9sum\\xe9 \\xff.md`` (a Latin-1 folder and name) print strict UTF-8
    JSON: the name shown escaped, its exact bytes in ``*_bytes_b64``."""
    save_settings(fake_settings)
    raw = os.path.join(os.fsencode(tmp_path), b"caf\xe9", b"r\xe9sum\xe9 \xff.md")
    os.mkdir(os.path.dirname(raw))
    with open(raw, "wb") as fh:
        fh.write(b"The risks of heparin include bleeding and heparin induced thrombocytopenia.\n")
    path = os.fsdecode(raw)
    shown = f"{tmp_path}/caf\\xe9/r\\xe9sum\\xe9 \\xff.md"

    def output(*args: str) -> dict[str, Any]:
        assert main([*args, "-c", "odd", "--json"]) == 0
        data: dict[str, Any] = json.loads(capsys.readouterr().out.encode("utf-8"))
        return data

    [ingested] = output("ingest", os.path.dirname(path))["files"]
    [listed] = output("status")["documents"]
    [found] = output("search", "heparin thrombocytopenia")["passages"]
    for name in (ingested, listed):
        assert name["source"] == shown and name_from_json(name, "source") == path
    assert (found["path"], found["file"]) == (shown, "r\\xe9sum\\xe9 \\xff.md")
    assert name_from_json(found, "path") == path
    assert found["title"] == "r\\xe9sum\\xe9 \\xff"  # from the name: shown, not raw bytes
    removed = output("remove", path)
    assert removed["removed"] == [shown]
    assert [os.fsdecode(base64.b64decode(b)) for b in removed["removed_bytes_b64"]] == [path]
