"""Every clean and nasty document through ParserPool (the worker process the ingest run uses)."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN, DOCS_NASTY, needs_tesseract
from tests.unit.ingest._pool_hooks import hang_hash, hang_or_crash, slow_parse
from verifai_desktop.domain import LocationKind
from verifai_desktop.errors import (
    Cancelled,
    EncryptedDocument,
    NeedsOcr,
    ParseError,
    UnsupportedFormat,
)
from verifai_desktop.foreground import FOREGROUND
from verifai_desktop.hashing import sha256_file
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.ingest.parse import ParserPool

CLEAN_FILES = sorted(DOCS_CLEAN.iterdir())


@pytest.fixture(scope="module")
def pool() -> Iterator[ParserPool]:
    with ParserPool(timeout_s=120.0) as p:
        yield p


def test_clean_set_has_26_files() -> None:
    assert len(CLEAN_FILES) == 26


@pytest.mark.parametrize("path", CLEAN_FILES, ids=lambda p: p.name)
def test_every_clean_file_parses_to_text(pool: ParserPool, path: Path) -> None:
    doc = pool.parse(path)
    assert doc.path == path
    assert doc.format.value == path.suffix.lstrip(".")
    assert len(doc.text.strip()) > 100 or path.name == "pandoc_table_captions_with_field.docx"
    assert "\x00" not in doc.text
    assert doc.sections
    prev_end = 0
    for section in doc.sections:
        assert prev_end <= section.char_start < section.char_end <= len(doc.text)
        assert doc.text[section.char_start : section.char_end].strip()
        prev_end = section.char_end


# (file name, error class or None, phrases that must be in the text)
NASTY: list[tuple[str, type[ParseError] | None, tuple[str, ...]]] = [
    ("encrypted_aes128_password_foo.pdf", EncryptedDocument, ()),
    ("encrypted_rc4_40_password_foo.pdf", EncryptedDocument, ()),
    ("encrypted_aes256_r6_password_usersecret.pdf", EncryptedDocument, ()),
    ("corrupted_zen_of_python.pdf", None, ("Beautiful is better than ugly.",)),
    ("truncated_first40pct_bmc_health_serv_res_2014.pdf", ParseError, ()),
    ("zero_bytes.pdf", ParseError, ()),
    ("epub_zero_bytes.epub", ParseError, ()),
    ("evil_recursive_xobjects.pdf", None, ("Hello world",)),
    ("bad_fonts.pdf", None, ("TORONTO,CANADA",)),
    ("scanned_image_only_lexmark_2p.pdf", NeedsOcr, ()),
    ("scanned_image_only_jbig2.pdf", NeedsOcr, ()),
    ("huge_page_3024x2160pt.pdf", None, ("**L1-13",)),
    ("huge_page_3146x1529pt_vector_only.pdf", ParseError, ()),  # zlib error, not a scan
    ("many_pages_285.pdf", None, ("MuPDF Explored", "MuPDF has a very consistent layout")),
    ("docx_with_tables.docx", None, ("Lebron James | Basketball | Very High | Leaving Cleveland",)),
    ("docx_paras_and_tables_python_docx.docx", None, ("Text before Table Between Text after",)),
    ("pptx_with_speaker_notes_and_table.pptx", None, ("Notes: chicken and dumplings",)),
    ("pptx_notes_python_pptx.pptx", None, ("Notes: Notes",)),
    ("pptx_no_slides.pptx", None, ()),
    ("pptx_missing_rels_item.pptx", None, ("Presentation Title Text", "Subtitle Text")),
    ("epub_broken_internal_link.epub", None, ("Lorem ipsum dolor sit amet",)),
    ("epub_truncated_zip_no_end_header.epub", ParseError, ()),
    ("txt_cp1252_dutch.txt", None, ("Stipan Arkadiewitsch", "al\u2026")),
    ("txt_latin1_portuguese.txt", None, ("tão bem determinada", "canção", "Radiações")),
    ("txt_cp1251_russian.txt", None, ("\u0412 гимназии он не был", "Мюнхене")),
    ("txt_shift_jis_rashomon_gutenberg.txt", None, ("羅生門", "芥川龍之介", "下人")),
    ("txt_utf16le_no_bom.txt", None, ("DateTime,Bid,Ask\n07/19/2015 21:00:15.469,1.083,1.08332",)),
]


def test_nasty_table_covers_every_file() -> None:
    assert sorted(name for name, _, _ in NASTY) == sorted(p.name for p in DOCS_NASTY.iterdir())


@pytest.mark.parametrize(("name", "error", "phrases"), NASTY, ids=[n for n, _, _ in NASTY])
def test_nasty_file_outcome(
    pool: ParserPool, name: str, error: type[ParseError] | None, phrases: tuple[str, ...]
) -> None:
    path = DOCS_NASTY / name
    if error is not None:
        with pytest.raises(ParseError) as info:
            pool.parse(path)
        assert type(info.value) is error  # exactly: a truncated PDF is not "encrypted"
        assert info.value.path == path
        assert path.name in str(info.value)
        return
    doc = pool.parse(path)
    assert "\x00" not in doc.text
    for phrase in phrases:
        assert phrase in doc.text


def test_empty_and_truncated_reasons(pool: ParserPool) -> None:
    for name in ("zero_bytes.pdf", "epub_zero_bytes.epub"):
        with pytest.raises(ParseError) as info:
            pool.parse(DOCS_NASTY / name)
        assert info.value.reason == "empty file (0 bytes)"
    with pytest.raises(ParseError) as info:
        pool.parse(DOCS_NASTY / "truncated_first40pct_bmc_health_serv_res_2014.pdf")
    assert "truncated" in info.value.reason
    with pytest.raises(ParseError) as info:
        pool.parse(DOCS_NASTY / "epub_truncated_zip_no_end_header.epub")
    assert "zip" in info.value.reason.lower()


@pytest.mark.parametrize(
    ("name", "password", "text"),
    [
        ("encrypted_aes128_password_foo.pdf", "foo", "Secret!"),
        ("encrypted_rc4_40_password_foo.pdf", "foo", "Secret!"),
        ("encrypted_aes256_r6_password_usersecret.pdf", "usersecret", "Hello World"),
        ("encrypted_aes256_r6_password_usersecret.pdf", "ownersecret", "Hello World"),
    ],
)
def test_encrypted_pdf_with_password(pool: ParserPool, name: str, password: str, text: str) -> None:
    doc = pool.parse(DOCS_NASTY / name, password=password)
    assert doc.text == text
    assert doc.sections[0].location.kind is LocationKind.PAGE
    assert doc.sections[0].location.number == 1


def test_encrypted_pdf_wrong_password(pool: ParserPool) -> None:
    path = DOCS_NASTY / "encrypted_aes128_password_foo.pdf"
    with pytest.raises(EncryptedDocument) as info:
        pool.parse(path, password="bar")
    assert info.value.wrong_password is True
    with pytest.raises(EncryptedDocument) as info:
        pool.parse(path)
    assert info.value.wrong_password is False


def test_no_slides_is_an_empty_document(pool: ParserPool) -> None:
    doc = pool.parse(DOCS_NASTY / "pptx_no_slides.pptx")
    assert doc.text == ""
    assert doc.sections == ()


def test_unsupported_format_crosses_the_process(pool: ParserPool, tmp_path: Path) -> None:
    png = tmp_path / "picture.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with pytest.raises(UnsupportedFormat) as info:
        pool.parse(png)
    assert "image/png" in info.value.reason


def test_timeout_kills_the_worker_and_the_pool_recovers(tmp_path: Path) -> None:
    hang = tmp_path / "hang.txt"
    hang.write_text("never read\n")
    crash = tmp_path / "crash.txt"
    crash.write_text("never read\n")
    small = tmp_path / "fine.txt"
    shutil.copy(DOCS_CLEAN / "scifact_covid_claims.txt", small)
    with ParserPool(timeout_s=3.0, parse_fn=hang_or_crash) as pool:
        assert "COVID-19" in pool.parse(small).text
        with pytest.raises(ParseError) as info:
            pool.parse(hang)
        assert info.value.reason == "timed out after 3 s"
        assert pool.restarts == 1
        assert "COVID-19" in pool.parse(small).text  # a fresh worker
        with pytest.raises(ParseError) as info:
            pool.parse(crash)
        assert info.value.reason.startswith("the parser process crashed")
        assert pool.restarts == 2
        assert "COVID-19" in pool.parse(small).text


def test_fork_is_refused() -> None:
    with pytest.raises(ValueError, match="fork"):
        ParserPool(start_method="fork")


def test_hashing_reads_only_regular_files_and_never_blocks(tmp_path: Path) -> None:
    """A FIFO once hung the ingest: opening it for reading waits for a writer forever."""
    fifo = tmp_path / "x.txt"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.txt"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    text = tmp_path / "fine.txt"
    text.write_bytes(b"some bytes\n")
    with ParserPool(timeout_s=30.0) as pool:
        assert pool.sha256(text) == hashlib.sha256(b"some bytes\n").hexdigest()
        with pytest.raises(ParseError) as info:
            pool.sha256(fifo)
        assert (
            info.value.reason
            == "not a regular file (a named pipe (FIFO)); only regular files are read"
        )
        with pytest.raises(ParseError) as info:
            pool.sha256(Path("/dev/zero"))
        assert (
            info.value.reason
            == "not a regular file (a character device); only regular files are read"
        )
        with pytest.raises(ParseError) as info:
            pool.sha256(tmp_path / "gone.txt")
        assert info.value.reason == "file not found"
        assert pool.restarts == 0
    sock.close()
    with pytest.raises(ParseError) as info:  # a socket cannot even be opened
        sha256_file(sock_path)
    assert info.value.reason.startswith("cannot read it: ")


def test_a_hash_that_stalls_is_stopped_by_the_time_limit(tmp_path: Path) -> None:
    hang = tmp_path / "hang.txt"
    hang.write_text("a file on a mount that stopped answering\n")
    with ParserPool(timeout_s=2.0, hash_fn=hang_hash) as pool:
        with pytest.raises(ParseError) as info:
            pool.sha256(hang)
        assert (info.value.path, info.value.reason, pool.restarts) == (
            hang,
            "timed out after 2 s",
            1,
        )
        fine = tmp_path / "fine.txt"
        fine.write_bytes(b"ok")
        assert pool.sha256(fine) == hashlib.sha256(b"ok").hexdigest()  # a fresh worker


@needs_tesseract
def test_ocr_runs_in_the_worker_and_reports_each_page(tmp_path: Path) -> None:
    """Issue 28: the page being recognised is reported from the worker; the recognised
    document (with its word boxes) comes back whole."""
    pages: list[tuple[int, int, int, str]] = []
    with ParserPool(timeout_s=120.0, ocr=OcrOptions("tesseract", dpi=200)) as pool:
        doc = pool.parse(
            DOCS_NASTY / "scanned_image_only_jbig2.pdf",
            on_page=lambda *p: pages.append(p),
        )
    assert pages == [(0, 1, 1, "pages")]
    assert doc.text.split()[:2] == ["It", "Doesn't"]
    ocr = doc.sections[0].ocr
    assert ocr is not None and ocr.engine == "tesseract" and len(ocr.words) >= 2


def test_cancel_stops_the_worker_in_the_middle_of_a_file(tmp_path: Path) -> None:
    """Cancel does not wait for a page (or the time limit) to finish."""
    hang = tmp_path / "hang.txt"
    hang.write_text("a page that takes forever to recognise\n")
    fine = tmp_path / "fine.txt"
    fine.write_text("The worker is back.\n")
    cancel = threading.Event()
    with ParserPool(timeout_s=60.0, parse_fn=hang_or_crash) as pool:
        pool.parse(fine)  # the worker is up: its start is not timed below
        timer = threading.Timer(0.5, cancel.set)
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(Cancelled):
            pool.parse(hang, cancel=cancel)
        assert time.monotonic() - t0 < 3.0
        assert pool.restarts == 1
        assert pool.parse(fine).text == "The worker is back."


def test_a_file_time_limit_stands_still_while_an_answer_holds_the_parser() -> None:
    """The worker is suspended while an answer is written (issue 40, item 5), and those
    seconds do not count against the file's time limit: 1.2 s of parsing under a 4 s limit,
    with the worker held for 5 s in the middle, is no time-out."""
    text = next(p for p in CLEAN_FILES if p.suffix == ".txt")
    with ParserPool(timeout_s=4.0, parse_fn=slow_parse) as pool:
        pool.parse(text)  # worker started and warm
        held = threading.Event()

        def answer() -> None:
            time.sleep(0.3)
            with FOREGROUND.answering():
                held.set()
                time.sleep(5.0)

        thread = threading.Thread(target=answer)
        thread.start()
        t0 = time.monotonic()
        doc = pool.parse(text)
        wall = time.monotonic() - t0
        thread.join()
        assert held.is_set() and doc.text
        assert wall > 4.0  # the parse outlasted its limit in wall time, yet was not cut off
