"""`verifai ingest` and `verifai status` output (cli/ingest_cmd.py), with the fake embedder.

The commands run in-process through :func:`verifai_desktop.cli.main` on real files; the
settings file names the fake embedder (control flow only).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import docx
import pymupdf
import pytest
from PIL import Image

from tests.conftest import REPO_ROOT
from verifai_desktop.cli import main
from verifai_desktop.names import name_from_json
from verifai_desktop.settings import Settings, save_settings
from verifai_desktop.store.collection import Collection

_mu: Any = pymupdf


@pytest.fixture
def odd_folder(tmp_path: Path, fake_settings: Settings) -> Path:
    """A folder with a file whose name is not UTF-8 and one whose name holds a newline and ESC."""
    save_settings(fake_settings)
    docs = tmp_path / "docs"
    docs.mkdir()
    with open(os.path.join(os.fsencode(docs), b"bad\xff\xfe.txt"), "wb") as fh:
        fh.write(b"Undecodable names are still documents.\n")
    (docs / "two\nlines\x1b[2J.txt").write_text("Names may hold escapes.\n", encoding="utf-8")
    return docs


def test_ingest_and_status_print_odd_names_escaped_on_one_line(
    odd_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(odd_folder), "-c", "w"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        f"{'indexed':<22}     1 chunks  bad\\xff\\xfe.txt",
        f"{'indexed':<22}     1 chunks  two\\nlines\\x1b[2J.txt",
    ]
    assert out[2].startswith("2 files: 2 indexed; 2 chunks indexed in ")

    assert main(["status", "-c", "w"]) == 0
    out = capsys.readouterr().out.splitlines()
    # The catalog orders text sources before the raw-bytes one.
    assert out == [
        f"indexed        1 chunks  {odd_folder}/two\\nlines\\x1b[2J.txt",
        f"indexed        1 chunks  {odd_folder}/bad\\xff\\xfe.txt",
        "2 documents, 2 chunks, embedder fake-hash-embedder",
    ]

    assert main(["status", "-c", "w", "--json"]) == 0
    text = capsys.readouterr().out
    text.encode("utf-8")  # strict UTF-8: no raw byte, no lone surrogate
    documents = json.loads(text)["documents"]
    assert documents[1]["source"] == f"{odd_folder}/bad\\xff\\xfe.txt"
    sources = [name_from_json(d, "source") for d in documents]
    assert [os.fsencode(s) for s in sources] == [
        os.path.join(os.fsencode(odd_folder), b"two\nlines\x1b[2J.txt"),
        os.path.join(os.fsencode(odd_folder), b"bad\xff\xfe.txt"),
    ]


def test_ingest_with_an_unknown_embedder_names_the_pull_command_and_creates_nothing(
    odd_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unknown = "sentence-transformers/no-such-model-for-verifai-tests"
    assert main(["ingest", str(odd_folder), "-c", "n", "--embedder", unknown]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: model {unknown!r} is not available on this machine; ")
    assert "`verifai models pull NAME`" in err
    assert main(["collections"]) == 0
    assert capsys.readouterr().out == ""


def test_a_closed_output_pipe_ends_the_command_quietly(
    tmp_path: Path, fake_settings: Settings, verifai_home: Path
) -> None:
    """`verifai search ... | head` once ended with a BrokenPipeError traceback."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(30):
        (docs / f"note{i:02d}.txt").write_text(f"Note {i} is about masks.\n", encoding="utf-8")
    with Collection.open("w", create=True, settings=fake_settings) as col:
        assert col.add_paths([docs]).counts == {"indexed": 30}
    code = "import sys; from verifai_desktop.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["search", "masks", "-c", "w", "--mode", "lexical", "-k", "30"]
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            cwd=REPO_ROOT,
            env={**os.environ, "VERIFAI_HOME": str(verifai_home)},
            stdout=subprocess.PIPE,
            stderr=err,
        )
        assert proc.stdout is not None
        proc.stdout.close()  # the reader is gone before the first line is written
        assert proc.wait(timeout=300) == 1
    assert err_path.read_text() == ""


def test_exit_code_counts_files_and_folders_not_indexed() -> None:
    from verifai_desktop.cli.ingest_cmd import EXIT_NOT_ALL_INDEXED, ingest_exit_code
    from verifai_desktop.domain import DocStatus
    from verifai_desktop.store.writer import FileOutcome, IngestReport, Outcome

    def report(*outcomes: FileOutcome) -> IngestReport:
        return IngestReport(outcomes=outcomes, elapsed_ms=0.0)

    ok = FileOutcome("/d/a.txt", Outcome.INDEXED, "", 3, stored_status=DocStatus.INDEXED)
    empty = FileOutcome("/d/e.pptx", Outcome.EMPTY, "no text", stored_status=DocStatus.EMPTY)
    gone = FileOutcome("/d/old.txt", Outcome.REMOVED)
    unchanged_bad = FileOutcome("/d/b.pdf", Outcome.SKIPPED, stored_status=DocStatus.NEEDS_OCR)
    folder = FileOutcome("/d/locked", Outcome.FAILED, "permission denied")  # not catalogued
    assert ingest_exit_code(report(ok, empty, gone)) == 0
    assert ingest_exit_code(report(ok, unchanged_bad)) == EXIT_NOT_ALL_INDEXED
    assert ingest_exit_code(report(ok, folder)) == EXIT_NOT_ALL_INDEXED


def _mixed_pdf(path: Path) -> Path:
    """8 pages of text, then 92 pages that only show a picture (scans: pages 9-100)."""
    png = io.BytesIO()
    Image.new("L", (400, 400), "white").save(png, "PNG")
    pdf = _mu.open()
    for number in range(1, 101):
        page = pdf.new_page()
        if number <= 8:
            page.insert_text((72, 72), f"Page {number} of the ward audit, typed.")
        else:
            page.insert_image(_mu.Rect(72, 72, 472, 472), stream=png.getvalue())
    pdf.save(str(path))
    return path


def _docx_of_pictures(path: Path, count: int) -> Path:
    """A paragraph of text, then ``count`` different 300 x 300 pictures."""
    document = docx.Document()
    document.add_paragraph("Photographs of the ward, one per bed.")
    for i in range(count):
        picture = Image.new("L", (300, 300), "white")
        picture.putpixel((i % 300, i // 300), 0)  # each one different: stored once each
        png = io.BytesIO()
        picture.save(png, "PNG")
        png.seek(0)
        document.add_picture(png)
    document.save(str(path))
    return path


def test_an_outcome_line_summarises_many_pages_and_pictures(
    tmp_path: Path, fake_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41, row 14: 92 page numbers and 1,200 picture names made one outcome line each
    (the report had 2,000 pictures; python-docx takes quadratic time to add them)."""
    save_settings(fake_settings)
    docs = tmp_path / "docs"
    docs.mkdir()
    _mixed_pdf(docs / "audit.pdf")
    _docx_of_pictures(docs / "photos.docx", 1200)
    assert main(["ingest", str(docs), "-c", "w", "--no-ocr"]) == 0
    off = "OCR is off (setting ingest.ocr_engine, or --no-ocr)"
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("  - ", 1)[1] for line in lines[:2]] == [
        f"scanned pages 9-100 not recognised: {off}",
        "1,200 embedded images (word/media/image1.png, word/media/image2.png, "
        f"word/media/image3.png and 1,197 more) not recognised: {off}",
    ]
