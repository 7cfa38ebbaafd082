"""keep.py: the one policy for keeping an answer in its collection's history (control flow,
with a stand-in for the open collection and a real history file)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from tests.unit.test_codec import ANSWER
from verifai_desktop.errors import IndexCorrupt
from verifai_desktop.keep import Kept, keep_in_history
from verifai_desktop.settings import HistorySettings, Settings
from verifai_desktop.store.history import History
from verifai_desktop.store.records import DocumentRecord

if TYPE_CHECKING:
    from verifai_desktop.store.base import CollectionStore


class FakeCollection:
    """Stands in for an open collection (control flow only): what keeping an answer reads,
    the quoted documents (none catalogued) and the history, which may fail to open."""

    name = "papers"

    def __init__(self, folder: Path, failure: Exception | None = None) -> None:
        self.folder = folder
        self.failure = failure

    def document(self, source: str) -> DocumentRecord | None:
        return None

    def history(self) -> History:
        if self.failure is not None:
            raise self.failure
        return History(self.folder)


def _store(folder: Path, failure: Exception | None = None) -> CollectionStore:
    return cast("CollectionStore", FakeCollection(folder, failure))


def test_an_answer_is_kept_and_its_id_returned(tmp_path: Path) -> None:
    kept = keep_in_history(_store(tmp_path), ANSWER, Settings())
    with History(tmp_path) as history:
        (saved,) = history.answers()
    assert kept == Kept(answer_id=saved.answer_id, warning="")
    assert saved.answer() == ANSWER


def test_nothing_is_kept_while_the_history_is_off(tmp_path: Path) -> None:
    off = Settings(history=HistorySettings(keep=False))
    assert keep_in_history(_store(tmp_path), ANSWER, off) == Kept()
    assert not (tmp_path / "history.sqlite").exists()


@pytest.mark.parametrize(
    "failure",
    [
        IndexCorrupt(Path("/c/papers/history.sqlite"), "file is not a database"),
        OSError(28, "No space left on device"),
        sqlite3.OperationalError("disk I/O error"),
    ],
    ids=["damaged", "disk-full", "sqlite"],
)
def test_a_history_failure_is_a_warning_not_an_error(
    tmp_path: Path, failure: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    kept = keep_in_history(_store(tmp_path, failure), ANSWER, Settings())
    assert kept.answer_id is None
    assert kept.warning == (
        f"the answer was not kept in the history of collection 'papers': {failure}"
    )
    assert [r.getMessage() for r in caplog.records] == [
        f"could not keep the answer in the history: {failure}"
    ]


def test_other_errors_are_not_hidden(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        keep_in_history(_store(tmp_path, TypeError("a bug")), ANSWER, Settings())
