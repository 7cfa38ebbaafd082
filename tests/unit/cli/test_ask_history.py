"""`verifai ask` keeps its answer in the history; when the history cannot be written the answer
is still printed, a warning follows it on stderr and the exit status is 0 (control flow with
stand-ins for the session and the collection; the real command is in tests/e2e)."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from tests.unit.test_codec import ANSWER
from tests.unit.test_keep import FakeCollection
from verifai_desktop.cli import ask_cmd, main
from verifai_desktop.domain import Answer
from verifai_desktop.errors import IndexCorrupt
from verifai_desktop.settings import Settings
from verifai_desktop.store.history import History

DAMAGE = IndexCorrupt(Path("/c/papers/history.sqlite"), "file is not a database")
ASK = ["ask", "What is overfitting?", "-c", "papers", "--json"]


class _Opener:
    """Stands in for ``Collection`` in ``verifai ask``: opens a :class:`FakeCollection`."""

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
    monkeypatch.setattr(ask_cmd, "Collection", opener)
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
