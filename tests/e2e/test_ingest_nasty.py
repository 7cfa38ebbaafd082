"""`verifai ingest` over docs/nasty: every file gets its expected status, nothing crashes or hangs.

Expected outcomes follow ../shared/data/docs/README.md: encrypted PDFs ask for a password,
scanned ones need OCR (the runs are made with ``--no-ocr``; their recognition has its own test,
tests/e2e/test_ingest_ocr.py), damaged/truncated/zero-byte files fail with a reason, a deck with
no slides is empty, everything repairable or merely odd is indexed. A second run with
``--pdf-password`` retries only the encrypted files; every other file is skipped as unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DOCS_NASTY

pytestmark = pytest.mark.slow

EXPECTED = {
    "bad_fonts.pdf": "indexed",
    "corrupted_zen_of_python.pdf": "indexed",
    "docx_paras_and_tables_python_docx.docx": "indexed",
    "docx_with_tables.docx": "indexed",
    "encrypted_aes128_password_foo.pdf": "encrypted",
    "encrypted_aes256_r6_password_usersecret.pdf": "encrypted",
    "encrypted_rc4_40_password_foo.pdf": "encrypted",
    "epub_broken_internal_link.epub": "indexed",
    "epub_truncated_zip_no_end_header.epub": "failed",
    "epub_zero_bytes.epub": "failed",
    "evil_recursive_xobjects.pdf": "indexed",
    "huge_page_3024x2160pt.pdf": "indexed",
    "huge_page_3146x1529pt_vector_only.pdf": "failed",  # zlib error in its content (issue 14)
    "many_pages_285.pdf": "indexed",
    "pptx_missing_rels_item.pptx": "indexed",
    "pptx_no_slides.pptx": "empty",
    "pptx_notes_python_pptx.pptx": "indexed",
    "pptx_with_speaker_notes_and_table.pptx": "indexed",
    "scanned_image_only_jbig2.pdf": "needs_ocr",
    "scanned_image_only_lexmark_2p.pdf": "needs_ocr",
    "truncated_first40pct_bmc_health_serv_res_2014.pdf": "failed",
    "txt_cp1251_russian.txt": "indexed",
    "txt_cp1252_dutch.txt": "indexed",
    "txt_latin1_portuguese.txt": "indexed",
    "txt_shift_jis_rashomon_gutenberg.txt": "indexed",
    "txt_utf16le_no_bom.txt": "indexed",
    "zero_bytes.pdf": "failed",
}


def _json(*args: str, code: int = 0) -> Any:
    """Run ``verifai ARGS --json``; assert its exit code (3: some file is not indexed)."""
    proc = subprocess.run(
        [sys.executable, "-m", "verifai_desktop", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == code, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(f["source"]).name: f for f in report["files"]}


def test_nasty_set_statuses_then_passwords() -> None:
    assert sorted(p.name for p in DOCS_NASTY.iterdir()) == sorted(EXPECTED)
    first = _by_name(_json("ingest", str(DOCS_NASTY), "--collection", "nasty", "--no-ocr", code=3))
    assert {name: f["status"] for name, f in first.items()} == EXPECTED
    for name, f in first.items():
        if f["status"] == "indexed":
            assert f["chunks"] > 0, name
        else:
            assert f["chunks"] == 0 and f["reason"], name
    assert "password" in first["encrypted_aes128_password_foo.pdf"]["reason"]
    assert "OCR" in first["scanned_image_only_lexmark_2p.pdf"]["reason"]

    # Only the encrypted files are retried; "foo" opens two of them, not the AES-256 one.
    second = _by_name(
        _json(
            "ingest",
            str(DOCS_NASTY),
            *("--collection", "nasty", "--no-ocr", "--pdf-password", "foo"),
            code=3,
        )
    )
    retried = {n: f["status"] for n, f in second.items() if f["status"] != "skipped"}
    assert retried == {
        "encrypted_aes128_password_foo.pdf": "indexed",
        "encrypted_rc4_40_password_foo.pdf": "indexed",
        "encrypted_aes256_r6_password_usersecret.pdf": "encrypted",
    }
    assert "wrong" in second["encrypted_aes256_r6_password_usersecret.pdf"]["reason"]
    assert all(second[n]["chunks"] > 0 for n in retried if retried[n] == "indexed")

    aes256 = DOCS_NASTY / "encrypted_aes256_r6_password_usersecret.pdf"
    third = _json("ingest", str(aes256), "--collection", "nasty", "--pdf-password", "usersecret")
    assert [(Path(f["source"]).name, f["status"]) for f in third["files"]] == [
        (aes256.name, "indexed")
    ]

    status = _json("status", "--collection", "nasty")
    stored = {Path(d["source"]).name: d["status"] for d in status["documents"]}
    assert stored == {
        **EXPECTED,
        "encrypted_aes128_password_foo.pdf": "indexed",
        "encrypted_rc4_40_password_foo.pdf": "indexed",
        "encrypted_aes256_r6_password_usersecret.pdf": "indexed",
    }
