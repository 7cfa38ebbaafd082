"""`verifai ingest` recognises the pictures of DOCX and PPTX files (issue 28): `--no-ocr`
records them with the reason and leaves their text out; without it the same unchanged files
are read by Tesseract, the pictures' words are found by `verifai search` at their section and
slide with the OCR flag, a decompression bomb is refused with its reason while its document's
text is indexed, and later runs do not recognise them again."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tests.conftest import needs_tesseract
from tests.e2e.cli import run_verifai
from tests.unit.ingest.test_ocr_images import (
    DOCX_IMAGE,
    bomb_png,
    docx_with_scan,
    pptx_with_scan,
    replace_member,
)
from verifai_desktop.ingest.ocr import OCR_OFF_REASON

QUERY = "deep venous thrombosis prophylaxis"
BOMB = (
    f"embedded image {DOCX_IMAGE} in section Background not recognised: its image is 60,000 x "
    "60,000 pixels, over the limit of 50,000,000 (setting ingest.ocr_max_pixels)"
)


def _ingest(docs: Path, *more: str) -> tuple[dict[str, tuple[str, str]], str]:
    """``{file name: (status, reason)}`` of ``verifai ingest --json`` and its progress."""
    proc = run_verifai("ingest", str(docs), "-c", "office", "--json", *more)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = json.loads(proc.stdout)["files"]
    return {Path(f["source"]).name: (f["status"], f["reason"]) for f in files}, proc.stderr


def _search() -> list[dict[str, Any]]:
    proc = run_verifai("search", QUERY, "-c", "office", "--mode", "lexical", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    passages: list[dict[str, Any]] = json.loads(proc.stdout)["passages"]
    return passages


@needs_tesseract
def test_pictures_are_recognised_searchable_flagged_and_not_read_twice(tmp_path: Path) -> None:
    docs = tmp_path / "office"
    docs.mkdir()
    docx_with_scan(docs / "report.docx")
    pptx_with_scan(docs / "deck.pptx")
    replace_member(docx_with_scan(docs / "bomb.docx"), DOCX_IMAGE, bomb_png())

    off, _ = _ingest(docs, "--no-ocr")
    in_report = f"embedded image {DOCX_IMAGE} in section Background not recognised"
    assert off == {
        "bomb.docx": ("indexed", f"{in_report}: {OCR_OFF_REASON}"),
        "deck.pptx": (
            "indexed",
            f"embedded image ppt/media/image1.png on slide 2 not recognised: {OCR_OFF_REASON}",
        ),
        "report.docx": ("indexed", f"{in_report}: {OCR_OFF_REASON}"),
    }
    assert not any("thrombosis" in p["text"] for p in _search())

    on, progress = _ingest(docs)  # unchanged, retried: OCR is on now
    assert on == {
        "bomb.docx": ("indexed", BOMB),
        "deck.pptx": ("indexed", ""),
        "report.docx": ("indexed", ""),
    }
    assert "recognising report.docx image 1 of 1" in progress
    assert "recognising deck.pptx image 1 of 1" in progress
    found = {p["file"]: p for p in _search() if "thrombosis" in p["text"]}
    assert set(found) == {"report.docx", "deck.pptx"}  # not the bomb's
    assert found["report.docx"]["location"]["label"] == "Background"
    assert found["deck.pptx"]["location"]["label"] == "slide 2 Scanned abstract"
    for passage in found.values():
        assert passage["ocr"]["engine"] == "tesseract" and passage["ocr"]["words"] == []
        assert 0.6 < passage["ocr"]["confidence"] <= 1.0
    shown = run_verifai("search", QUERY, "-c", "office", "--mode", "lexical").stdout
    assert "deck.pptx  slide 2 Scanned abstract  [recognised text (OCR, tesseract" in shown

    # Unchanged (same size and mtime), then touched (same sha256): skipped, never read again.
    for _ in range(2):
        again, progress = _ingest(docs)
        assert {status for status, _ in again.values()} == {"skipped"}
        assert again["bomb.docx"] == ("skipped", BOMB)
        assert "recognising" not in progress
        for path in docs.iterdir():
            os.utime(path, (time.time() + 10, time.time() + 10))
