"""`verifai ask` keeps its answer in the history; when the history cannot be written the answer
is still printed, a warning follows it on stderr and the exit status is 0 (control flow with
stand-ins for the session and the collection; the real command is in tests/e2e)."""

from __future__ import annotations

import json
import random
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from tests.unit.test_codec import ANSWER, ODD_ANSWER, ODD_PATH, ODD_SHOWN
from tests.unit.test_keep import FakeCollection
from verifai_desktop.cli import ask_cmd, common, main
from verifai_desktop.domain import Answer
from verifai_desktop.errors import IndexCorrupt
from verifai_desktop.names import name_from_json
from verifai_desktop.settings import Settings
from verifai_desktop.store.history import History

DAMAGE = IndexCorrupt(Path("/c/papers/history.sqlite"), "file is not a database")
ASK = ["ask", "What is overfitting?", "-c", "papers", "--json"]


class _Opener:
    """Stands in for ``Collection`` where ``verifai ask`` opens it (``cli.common``): opens a
    :class:`FakeCollection`."""

    def __init__(self, folder: Path, failure: Exception | None = None) -> None:
        self.folder = folder
        self.failure = failure

    def open(self, name: str, **_kwargs: object) -> AbstractContextManager[FakeCollection]:
        return nullcontext(FakeCollection(self.folder, self.failure))


class _Session:
    """Stands in for AskSession: answers at once."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def ask(self, collection: object, question: str, **_kwargs: object) -> Answer:
        return ANSWER

    def settings_in_effect(self) -> Settings:
        return self.settings


def _ask(monkeypatch: pytest.MonkeyPatch, opener: _Opener) -> int:
    monkeypatch.setattr(common, "Collection", opener)
    monkeypatch.setattr(ask_cmd, "AskSession", _Session)
    return main(ASK)


def test_the_answer_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ask(monkeypatch, _Opener(tmp_path)) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["question"] == ANSWER.question
    assert "warning" not in err
    with History(tmp_path) as history:
        assert [saved.answer() for saved in history.answers()] == [ANSWER]


def test_a_history_failure_is_a_warning_after_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ask(monkeypatch, _Opener(tmp_path, DAMAGE)) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["question"] == ANSWER.question
    assert err.splitlines()[-1] == (
        f"warning: the answer was not kept in the history of collection 'papers': {DAMAGE}"
    )


class _OddSession(_Session):
    """Answers with a passage from a file whose folder and name are Latin-1 bytes."""

    def ask(self, collection: object, question: str, **_kwargs: object) -> Answer:
        return ODD_ANSWER


def test_an_answer_citing_a_name_that_is_not_utf8_is_printed_and_kept_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, rows 1 and 2: the history INSERT once crashed (``surrogates not allowed``)
    and lost the answer; now the answer is printed as strict UTF-8 JSON, kept, and the file's
    exact bytes come back from both."""
    monkeypatch.setattr(common, "Collection", _Opener(tmp_path))
    monkeypatch.setattr(ask_cmd, "AskSession", _OddSession)
    assert main(ASK) == 0
    out, err = capsys.readouterr()
    out.encode("utf-8")
    assert "warning" not in err
    cited = json.loads(out)["passages"][0]
    assert cited["path"] == ODD_SHOWN
    assert name_from_json(cited, "path") == str(ODD_PATH)
    with History(tmp_path) as history:
        (saved,) = history.answers()
    assert saved.answer() == ODD_ANSWER
    assert saved.answer_json == out
    assert list(saved.documents) == [str(ODD_PATH), "/docs/dvt.md"]

    assert main(ASK[:-1]) == 0  # the report names the file escaped
    assert f"[1] {ODD_SHOWN.rsplit('/', 1)[1]}, p. 4  (score 0.850)" in capsys.readouterr().out


def test_the_answer_is_printed_before_the_history_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not even an unexpected failure while keeping the answer can lose it: it is out first."""
    with pytest.raises(RuntimeError, match="a bug in keeping"):
        _ask(monkeypatch, _Opener(tmp_path, RuntimeError("a bug in keeping")))
    assert json.loads(capsys.readouterr().out)["question"] == ANSWER.question


def test_a_damaged_history_is_named_with_its_repair_after_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, row 7: real damage (random bytes for a history file)."""
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "history.sqlite").write_bytes(random.Random(5).randbytes(8192))
    assert _ask(monkeypatch, _Opener(folder)) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["question"] == ANSWER.question
    warning = err.splitlines()[-1]
    assert warning.startswith("warning: the answer was not kept in the history of collection ")
    assert warning.endswith(
        "(the damaged file is kept beside it) (`verifai repair --history --collection papers`)"
    )
