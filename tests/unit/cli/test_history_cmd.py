"""`verifai feedback export` and `verifai audit export` on real files and real paths: a path
that cannot be written is one clear ``error:`` line and exit status 1, never a traceback, and
nothing is left half-written; what is written is user-only (issue 30, rows 10 and 13).

A real collection (the hashing fake embedder only stands in for the model) with a real
history holding one answer and one judgement.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.permissions import run_where_bits_apply
from tests.unit.test_codec import ANSWER, ODD_ANSWER, ODD_PATH, ODD_SHOWN
from verifai_desktop.cli import main
from verifai_desktop.names import name_from_json
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import collection_history
from verifai_desktop.store.history import Feedback

FOLDER = "it is a folder; give a file name inside it"
NO_NAME = "no file name given; give the path of a file to write"
NO_FOLDER = "its folder does not exist; create the folder or choose another"
DEVICE = "it is a device or a pipe, not a file; give the path of a file to write"
DENIED = "permission denied; choose a folder you may write to"

EXPORTS = {
    "feedback export": ["feedback", "export", "-c", "kept", "--jsonl"],
    "audit record": ["audit", "export", "-c", "kept", "--last", "-o"],
}


@pytest.fixture
def kept(fake_settings: Settings) -> None:
    """Collection ``kept`` with one answer in its history and one judgement of it."""
    with Collection.open("kept", create=True, settings=fake_settings):
        pass
    with collection_history("kept") as history:
        answer_id = history.add(ANSWER, Settings(), {})
        history.set_feedback(Feedback(answer_id, 0, 1, "SUPPORT", "right"))


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("what", list(EXPORTS))
@pytest.mark.usefixtures("kept")
def test_an_export_to_a_path_that_cannot_be_written_is_a_clear_error(
    what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Row 10: a folder, ``''``, a missing folder, ``/dev/full``, an unwritable folder."""
    folder = tmp_path / "out"
    folder.mkdir()
    cases = [
        (str(folder), FOLDER),
        ("", NO_NAME),
        (str(tmp_path / "missing" / "x.json"), NO_FOLDER),
    ]
    if Path("/dev/full").exists():
        cases.append(("/dev/full", DEVICE))
    if Path("/sys").is_dir():
        cases.append(("/sys/verifai-export.json", DENIED))
    for target, reason in cases:
        assert main([*EXPORTS[what], target]) == 1, target
        out, err = capsys.readouterr()
        assert out == ""
        assert err == (
            f"error: could not write the {what} to {target!r}: {reason} (no file was changed)\n"
        )
    assert _files(folder) == [] and not (tmp_path / "missing").exists()
    assert not Path("/sys/verifai-export.json").exists()
    if Path("/dev/full").exists():
        assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)  # still the device


_EXPORT_SCRIPT = """
import sys
from verifai_desktop.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("what", list(EXPORTS))
def test_permission_denied_by_the_mode_bits_is_a_clear_error(
    kept: None, what: str, tmp_path: Path
) -> None:
    """Row 10, a folder made read-only with chmod; the export runs where the bits apply, as
    root too (issue 41 row 17: it skipped as root, so CI never ran it)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    target = str(folder / "out.json")
    try:
        proc = run_where_bits_apply(_EXPORT_SCRIPT, *EXPORTS[what], target)
    finally:
        folder.chmod(0o700)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr[-2000:]
    assert proc.stderr == (
        f"error: could not write the {what} to {target!r}: {DENIED} (no file was changed)\n"
    )
    assert _files(folder) == []


@pytest.mark.usefixtures("kept")
def test_an_audit_export_whose_html_cannot_be_written_leaves_no_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Row 10: ``rec.json`` was written, then the export crashed on ``rec.html``."""
    (tmp_path / "rec.html").mkdir()
    assert main([*EXPORTS["audit record"], str(tmp_path / "rec.json")]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"error: could not write the audit record to {str(tmp_path / 'rec.html')!r}: {FOLDER} "
        "(no file was changed)\n"
    )
    assert _files(tmp_path) == ["rec.html", "verifai_home"]


@pytest.mark.usefixtures("kept", "loose_umask")
def test_exports_are_user_only(tmp_path: Path) -> None:
    """Row 13: they hold document text; even a 0644 file they replace ends up 0600."""
    old = tmp_path / "fb.jsonl"
    old.write_text("old\n", encoding="utf-8")
    old.chmod(0o644)
    assert main([*EXPORTS["feedback export"], str(old)]) == 0
    assert main([*EXPORTS["audit record"], str(tmp_path / "rec.json")]) == 0
    written = ["fb.jsonl", "rec.html", "rec.json"]
    assert _files(tmp_path) == [*written, "verifai_home"]
    assert {n: stat.S_IMODE((tmp_path / n).stat().st_mode) for n in written} == dict.fromkeys(
        written, 0o600
    )
    assert '"premise"' in old.read_text(encoding="utf-8")


def test_history_feedback_and_audit_name_a_file_that_is_not_utf8(
    fake_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, rows 1 and 2: an answer quoting ``caf\\xe9/r\\xe9sum\\xe9 \\xff.txt`` (gone since)
    is listed, judged, exported and checked; every output is strict UTF-8 and names the file
    escaped, with its exact bytes beside."""
    with Collection.open("odd", create=True, settings=fake_settings):
        pass
    with collection_history("odd") as history:
        answer_id = history.add(ODD_ANSWER, Settings(), {str(ODD_PATH): "a" * 64})

    assert main(["history", "-c", "odd", "--json"]) == 0
    out = capsys.readouterr().out
    [entry] = json.loads(out.encode("utf-8"))
    assert entry["changed_documents"] == [ODD_SHOWN]
    assert os.fsdecode(base64.b64decode(entry["changed_documents_bytes_b64"][0])) == str(ODD_PATH)
    assert name_from_json(entry["answer"]["passages"][0], "path") == str(ODD_PATH)

    judge = ["feedback", "add", "-c", "odd", "--id", str(answer_id), "--sentence", "1"]
    assert main([*judge, "--passage", "1", "--right"]) == 0
    assert main(["feedback", "export", "-c", "odd", "--jsonl", str(tmp_path / "fb.jsonl")]) == 0
    assert len((tmp_path / "fb.jsonl").read_bytes().decode("utf-8").splitlines()) == 1

    assert main(["audit", "export", "-c", "odd", "--last", "-o", str(tmp_path / "rec.json")]) == 0
    record = json.loads((tmp_path / "rec.json").read_bytes().decode("utf-8"))
    (tmp_path / "rec.html").read_bytes().decode("utf-8")
    quote = record["quotes"][0]
    assert quote["path"] == ODD_SHOWN and name_from_json(quote, "path") == str(ODD_PATH)
    assert [name_from_json(d, "path") for d in record["documents"]] == [str(ODD_PATH)]
    capsys.readouterr()

    assert main(["audit", "check", str(tmp_path / "rec.json"), "--json"]) == 1
    report = json.loads(capsys.readouterr().out.encode("utf-8"))
    missing = [p for p in report["problems"] if p["kind"] == "missing"]
    assert [(p["path"], name_from_json(p, "path")) for p in missing] == [
        (ODD_SHOWN, str(ODD_PATH)),
        ("/docs/dvt.md", "/docs/dvt.md"),
    ]
    assert "path_bytes_b64" not in missing[1]
    assert not [p for p in report["problems"] if p["kind"] in ("edited", "signature_invalid")]
