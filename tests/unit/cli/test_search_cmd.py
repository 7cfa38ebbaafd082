"""`verifai search` shows reference-list chunks, marked, in text and JSON (fake embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifai_desktop.cli import main
from verifai_desktop.cli.search_cmd import REFERENCE_MARK
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
