"""`verifai ingest` and `verifai status` output (cli/ingest_cmd.py), with the fake embedder.

The commands run in-process through :func:`verifai_desktop.cli.main` on real files; the
settings file names the fake embedder (control flow only).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from verifai_desktop.cli import main
from verifai_desktop.settings import Settings, save_settings


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
    sources = [d["source"] for d in json.loads(capsys.readouterr().out)["documents"]]
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
