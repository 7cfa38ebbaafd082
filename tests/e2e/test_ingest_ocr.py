"""`verifai ingest` recognises scanned pages (issue 28): `--no-ocr` records them as needing OCR
with the reason; without it the same unchanged files are read by Tesseract, their words are
found by `verifai search` with the OCR flag, and later runs do not recognise them again."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pymupdf

from tests.conftest import DOCS_NASTY, needs_tesseract
from tests.e2e.cli import run_verifai
from tests.unit.ingest.test_ocr import mixed_pdf, scanned_top_of_paper
from verifai_desktop.codec import answer_from_dict
from verifai_desktop.ingest.ocr import OCR_OFF_REASON, OcrOptions, time_limit_reason
from verifai_desktop.ingest.parse import ParserPool
from verifai_desktop.presentation import answer_to_html, answer_to_markdown
from verifai_desktop.settings import Settings

_mu: Any = pymupdf


def _json(*args: str, code: int = 0) -> Any:
    proc = run_verifai(*args, "--json")
    assert proc.returncode == code, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _files(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {Path(f["source"]).name: (f["status"], f["reason"]) for f in report["files"]}


@needs_tesseract
def test_scans_are_recognised_searchable_flagged_and_not_read_twice(tmp_path: Path) -> None:
    docs = tmp_path / "scans"
    docs.mkdir()
    shutil.copy2(DOCS_NASTY / "scanned_image_only_jbig2.pdf", docs / "cartoon.pdf")
    scanned_top_of_paper(docs / "paper_scan.pdf")
    mixed_pdf(docs / "mixed.pdf")

    off = _files(_json("ingest", str(docs), "-c", "scans", "--no-ocr", code=3))
    assert off == {
        "cartoon.pdf": ("needs_ocr", f"scanned page 1 not recognised: {OCR_OFF_REASON}"),
        "mixed.pdf": ("indexed", f"scanned page 2 not recognised: {OCR_OFF_REASON}"),
        "paper_scan.pdf": ("needs_ocr", f"scanned page 1 not recognised: {OCR_OFF_REASON}"),
    }

    on = _json("ingest", str(docs), "-c", "scans")  # unchanged, retried: OCR is on now
    assert _files(on) == {name: ("indexed", "") for name in off}

    found = _json("search", "venous thrombosis prophylaxis", "-c", "scans", "--mode", "lexical")
    top = found["passages"][0]
    assert Path(top["path"]).name == "paper_scan.pdf"
    assert "thrombosis" in top["text"]
    assert top["ocr"]["engine"] == "tesseract" and 0.6 < top["ocr"]["confidence"] <= 1.0
    start, end = top["ocr"]["words"][0][:2]
    assert top["text"][start:end] == top["text"].split()[0]
    shown = run_verifai("search", "Doesn't", "-c", "scans", "--mode", "lexical").stdout
    assert "cartoon.pdf  p. 1  [recognised text (OCR, tesseract" in shown
    assert "mixed.pdf  p. 2  [recognised text (OCR, tesseract" in shown

    # Unchanged (same size and mtime), then touched (same sha256): skipped, never recognised
    # again (the progress lines name each page recognised).
    assert "recognising paper_scan.pdf p. 1 (1 of 1 scanned)" in _ingest_stderr(docs)
    for _ in range(2):
        proc = run_verifai("ingest", str(docs), "-c", "scans", "--json")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert {s for s, _ in _files(json.loads(proc.stdout)).values()} == {"skipped"}
        assert "recognising" not in proc.stderr
        for path in docs.iterdir():
            os.utime(path, (time.time() + 10, time.time() + 10))


def _ingest_stderr(docs: Path) -> str:
    """The progress of recognising ``docs`` again in a new collection."""
    proc = run_verifai("ingest", str(docs), "-c", "scans_progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stderr


@needs_tesseract
def test_an_answer_citing_a_scanned_page_shows_its_ocr_flag(tmp_path: Path) -> None:
    """The bundled generator answers from the recognised text of a scanned page alone; the
    cited passage carries its OCR provenance into the JSON, the terminal and the export."""
    docs = tmp_path / "scan_only"
    docs.mkdir()
    scanned_top_of_paper(docs / "paper_scan.pdf")
    assert run_verifai("ingest", str(docs), "-c", "scan_ask").returncode == 0
    question = "What are the complications of venous thrombosis prophylaxis in trauma patients?"
    data = _json("ask", question, "-c", "scan_ask", "-k", "1")
    (passage,) = data["passages"]
    assert passage["file"] == "paper_scan.pdf" and passage["ocr"]["engine"] == "tesseract"
    assert any(1 in s["citations"] for s in data["sentences"]), data["answer"]
    answer = answer_from_dict(data)
    assert "    recognised text (OCR, tesseract, mean confidence" in answer_to_markdown(answer)
    assert "recognised text (OCR, tesseract" in answer_to_html(answer)


@needs_tesseract
def test_ocr_cut_short_by_the_time_limit_is_partial_and_a_larger_limit_reads_the_rest(
    tmp_path: Path,
) -> None:
    """Issue 41 row 10: three scanned pages under a limit that leaves time for one; the file
    is recorded as indexed in part, with the limit it had, and a run with a larger --timeout
    reads the other pages (it said "skipped (indexed)" before and never read them)."""
    docs = tmp_path / "scans"
    docs.mkdir()
    one = scanned_top_of_paper(tmp_path / "one.pdf")
    three = _mu.open()
    for _ in range(3):
        three.insert_pdf(_mu.open(one))
    three.save(docs / "three_scans.pdf")
    with ParserPool(ocr=OcrOptions.from_settings(Settings().ingest)) as pool:
        t0 = time.perf_counter()
        pool.parse(one)  # one page as the ingest reads it (300 dpi), in the worker
        page_s = time.perf_counter() - t0
    # Page 1 ends well within the limit; under 1.5 times its time is then left: the other
    # two are left out (ingest.ocr.PAGE_TIME_MARGIN). The page timed here includes the
    # worker's first OCR; when the ingest's own pages run faster, page 2 fits as well.
    limit = round(1.6 * page_s, 1)
    cut = _json("ingest", str(docs), "-c", "cut", "--timeout", str(limit))
    assert _files(cut) in [
        {"three_scans.pdf": ("indexed", f"{left} not recognised: {time_limit_reason(limit)}")}
        for left in ("scanned pages 2, 3", "scanned page 3")
    ]
    assert "indexed in part: ingest it again with a larger --timeout" in time_limit_reason(limit)
    same = _json("ingest", str(docs), "-c", "cut", "--timeout", str(limit))
    assert [f["status"] for f in same["files"]] == ["skipped"]  # the same limit: not again
    larger = _json("ingest", str(docs), "-c", "cut", "--timeout", "600")
    assert _files(larger) == {"three_scans.pdf": ("indexed", "")}
    found = _json("search", "thrombosis", "-c", "cut", "--mode", "lexical", "-k", "10")
    assert {p["location"]["number"] for p in found["passages"]} == {1, 2, 3}
