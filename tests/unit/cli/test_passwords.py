"""`verifai ingest` takes the PDF password from stdin, the environment or a prompt, not argv.

A real AES-256 encrypted PDF made here; in-process runs with the fake embedder (control flow).
The terminal is faked (``isatty``, ``getpass``) only to drive the prompt path.
"""

from __future__ import annotations

import getpass
import io
from pathlib import Path

import pymupdf
import pytest

from verifai_desktop.cli import main
from verifai_desktop.cli.ingest_cmd import EXIT_NOT_ALL_INDEXED
from verifai_desktop.cli.passwords import PASSWORD_ENV
from verifai_desktop.settings import Settings, save_settings
from verifai_desktop.store.collection import Collection

PASSWORD = "s3cret-pw"


@pytest.fixture
def locked_pdf(tmp_path: Path, fake_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    save_settings(fake_settings)
    path = tmp_path / "locked.pdf"
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "The vault opens at dawn on Tuesdays.")
    doc.save(
        path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=PASSWORD, owner_pw="owner-" + PASSWORD
    )
    doc.close()
    return path


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _status(name: str) -> str:
    with Collection.open(name) as col:
        return col.documents()[0].status.value


def test_no_password_off_a_terminal_leaves_it_encrypted_with_a_safe_hint(
    locked_pdf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(locked_pdf), "-c", "p"]) == EXIT_NOT_ALL_INDEXED
    captured = capsys.readouterr()
    assert "(set VERIFAI_PDF_PASSWORD or use --pdf-password-stdin)" in captured.out
    assert "1 of 1 files not indexed (see the report); exit code 3" in captured.err
    assert _status("p") == "encrypted"
    # an unchanged, still-encrypted file keeps the run's code non-zero
    assert main(["ingest", str(locked_pdf), "-c", "p"]) == EXIT_NOT_ALL_INDEXED


def test_password_from_the_environment(
    locked_pdf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    assert main(["ingest", str(locked_pdf), "-c", "p"]) == 0
    assert capsys.readouterr().err.count("warning") == 0
    assert _status("p") == "indexed"


def test_password_from_one_line_of_stdin(
    locked_pdf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\nnot this line\n"))
    assert main(["ingest", str(locked_pdf), "-c", "p", "--pdf-password-stdin"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert _status("p") == "indexed"


def test_empty_stdin_is_an_error(
    locked_pdf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["ingest", str(locked_pdf), "-c", "p", "--pdf-password-stdin"]) == 1
    assert "error: no password on standard input" in capsys.readouterr().err


def test_the_argument_still_works_with_a_warning(
    locked_pdf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(locked_pdf), "-c", "p", "--pdf-password", PASSWORD]) == 0
    err = capsys.readouterr().err
    assert "warning: --pdf-password is visible to other local users" in err
    assert _status("p") == "indexed"


def test_both_ways_at_once_is_a_usage_error(locked_pdf: Path) -> None:
    argv = ["ingest", str(locked_pdf), "--pdf-password", "x", "--pdf-password-stdin"]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2


def test_a_terminal_is_prompted_when_encrypted_pdfs_are_found(
    locked_pdf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts: list[str] = []

    def fake_getpass(prompt: str = "") -> str:
        prompts.append(prompt)
        return PASSWORD

    monkeypatch.setattr("sys.stdin", _Terminal(""))
    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    assert main(["ingest", str(locked_pdf), "-c", "p"]) == 0
    assert prompts == ["1 encrypted PDF: password (Enter to skip): "]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("encrypted ") and out[0].endswith("--pdf-password-stdin)")
    assert out[2].startswith("indexed") and out[2].endswith("locked.pdf")
    assert _status("p") == "indexed"


def test_skipping_the_prompt_prints_the_report_once(
    locked_pdf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", _Terminal(""))
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": "")
    assert main(["ingest", str(locked_pdf), "-c", "p"]) == EXIT_NOT_ALL_INDEXED
    out = capsys.readouterr().out
    assert out.count("locked.pdf") == 1
    assert _status("p") == "encrypted"
