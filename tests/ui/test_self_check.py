"""The Library panel's colour check (issue 26): the last self-check of a collection from its
metadata, and a check run from the panel on a real small collection (the bundled sample's
Markdown files) with a fake verifier, off the UI thread, with progress, Cancel, and the result
kept in the collection's metadata (or shown but not kept when the collection is busy)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from verifai_desktop.domain import Progress
from verifai_desktop.errors import CollectionBusy
from verifai_desktop.evaluate.selfcheck import METADATA_KEY
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.resources import sample_files
from verifai_desktop.ui.self_check import (
    CANCELLED_TEXT,
    CHECK_BUTTON_TEXT,
    MEANING_TEXT,
    NOT_CHECKED_TEXT,
    NOT_KEPT_TEXT,
    SMOKE_TEST_TEXT,
    TYPICAL_TIME,
    compact_text,
    self_check_text,
    start_text,
)
from verifai_desktop.ui.tasks import TaskRunner
from verifai_desktop.ui.watched_roots import sync_time

TIMEOUT_MS = 120_000
STORED = {
    "collection": "papers",
    "created_at": "2026-03-02T09:15:00+00:00",
    "preset": "strict",
    "passages": 12,
    "seconds": 41.0,
    "kinds": {
        "unchanged": {"n": 30, "green": 24, "caught": 6, "shown": {}},
        "number_swap": {"n": 20, "green": 4, "caught": 16, "shown": {}},
        "number_change": {"n": 30, "green": 9, "caught": 21, "shown": {}},
        "negation_insert": {"n": 30, "green": 1, "caught": 29, "shown": {}},
    },
    "examples": [],
}


class SentenceInPassage:
    """A fake NLI verifier: SUPPORT (0.9) when the hypothesis is written in the premise word
    for word, else CONTRADICT (0.9); records the threads it ran on. ``hold`` makes the first
    call wait until ``release`` is set (to cancel a running check)."""

    def __init__(self, *, hold: bool = False) -> None:
        self.threads: set[int] = set()
        self.hold = hold
        self.started = threading.Event()
        self.release = threading.Event()

    def load(self) -> None:
        """Nothing to load."""

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        self.threads.add(threading.get_ident())
        self.started.set()
        if self.hold:
            self.release.wait(30)
        out = np.empty((len(pairs), 3), dtype=np.float32)
        for i, (premise, hypothesis) in enumerate(pairs):
            out[i] = (0.9, 0.05, 0.05) if hypothesis in premise else (0.05, 0.9, 0.05)
        return out


@pytest.fixture
def papers() -> str:
    """A collection "papers" of the sample's three Markdown files (bundled embedder)."""
    files = [f for f in sample_files() if f.suffix == ".md"]
    with Collection.open("papers", create=True, settings=Settings()) as col:
        report = col.add_paths(files)
        assert [o.status.value for o in report.outcomes] == ["indexed"] * 3
    return "papers"


def _panel(
    qtbot: QtBot, collection: str, verifier: SentenceInPassage | None = None
) -> LibraryPanel:
    panel = LibraryPanel(TaskRunner(), Settings, offer_sample=False)
    qtbot.addWidget(panel)
    if verifier is not None:
        panel.self_check.session_factory = lambda s: AskSession(s, verifier=verifier)
    panel.self_check.n_per_kind = 3
    panel.refresh_collections(select=collection)
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=TIMEOUT_MS)
    return panel


def _stored(name: str) -> dict[str, object]:
    with Collection.open(name, settings=Settings()) as col:
        return col.metadata(METADATA_KEY)


def test_the_last_check_is_read_from_the_collection(qtbot: QtBot, papers: str) -> None:
    with Collection.open(papers, settings=Settings()) as col:
        col.set_metadata(METADATA_KEY, STORED)
    Collection.open("notes", create=True, settings=Settings()).close()
    panel = _panel(qtbot, "notes")
    check = panel.self_check
    assert check.isVisibleTo(panel)
    assert check.summary.text() == NOT_CHECKED_TEXT
    assert check.check_button.text() == CHECK_BUTTON_TEXT and check.check_button.isEnabled()
    assert check.cancel_button.isHidden()

    # Each collection shows its own last check.
    panel.refresh_collections(select=papers)
    qtbot.waitUntil(lambda: check.summary.text() != NOT_CHECKED_TEXT, timeout=TIMEOUT_MS)
    # Short in the narrow column; the whole report on hover and in the details.
    when = sync_time("2026-03-02T09:15:00+00:00")
    assert (
        check.summary.text()
        == compact_text(STORED)
        == (
            f"Colours checked ({when}, preset strict): changed sentences caught in 66 of 80, "
            "unchanged ones green in 24 of 30."
        )
    )
    assert check.summary.toolTip().startswith(self_check_text(STORED))
    assert self_check_text(STORED) == (
        f"Colour check ({sync_time('2026-03-02T09:15:00+00:00')}, preset strict): "
        "On these documents, a figure swapped for another of the passage was caught in 16 of "
        "20 cases; a changed figure was caught in 21 of 30 cases; a negation inserted was "
        "caught in 29 of 30 cases; 24 of 30 unchanged sentences were green. "
        "A smoke test of the colours on these documents, not a benchmark."
    )
    assert self_check_text({}) == NOT_CHECKED_TEXT
    panel.refresh_collections(select="notes")
    assert check.summary.text() == NOT_CHECKED_TEXT
    check.show_collection("")
    assert check.isHidden()
    qtbot.waitUntil(lambda: not panel.runner.running, timeout=TIMEOUT_MS)


def test_progress_says_pairs_checked(qtbot: QtBot, papers: str) -> None:
    verifier = SentenceInPassage(hold=True)
    panel = _panel(qtbot, papers, verifier)
    check = panel.self_check
    check.run()
    qtbot.waitUntil(verifier.started.is_set, timeout=TIMEOUT_MS)
    check.on_progress(Progress("self-check", 32, 190, "pairs", "papers"))
    assert check.progress_label.text() == "“papers”: checking 32 of 190 pairs…"
    verifier.release.set()
    qtbot.waitUntil(lambda: not check.running, timeout=TIMEOUT_MS)
    assert check.progress_label.text() == ""


def test_a_check_runs_off_the_ui_thread_and_is_kept(qtbot: QtBot, papers: str) -> None:
    verifier = SentenceInPassage()
    panel = _panel(qtbot, papers, verifier)
    check = panel.self_check
    results: list[tuple[str, dict[str, object]]] = []
    check.checked.connect(lambda name, data: results.append((name, data)))
    # Before it starts, the check says what it does, how long it takes, that it stays here.
    asked: list[str] = []
    check.confirm_start = lambda text: False  # type: ignore[method-assign]
    check.check_button.click()
    assert not check.running  # declined: nothing starts

    def agree(text: str) -> bool:
        asked.append(text)
        return True

    check.confirm_start = agree  # type: ignore[method-assign]
    assert check.meaning.isHidden()  # no figures yet, nothing to explain
    check.check_button.click()
    assert asked == [start_text(papers, check.n_per_kind)]
    assert f"up to {7 * check.n_per_kind} sentences from the passages of “{papers}”" in asked[0]
    assert f"It takes a few minutes ({TYPICAL_TIME})." in asked[0]
    assert "on this machine: nothing is sent anywhere" in asked[0]
    assert not check.check_button.isEnabled() and check.cancel_button.isVisibleTo(panel)
    qtbot.waitUntil(lambda: not check.running, timeout=TIMEOUT_MS)

    assert verifier.threads and threading.get_ident() not in verifier.threads
    ((name, data),) = results
    assert name == papers and data["collection"] == papers and data["preset"] == "balanced"
    kinds = data["kinds"]
    assert isinstance(kinds, dict)
    # Every changed sentence is caught (the fake never supports one), every unchanged one green.
    assert kinds["unchanged"]["n"] == kinds["unchanged"]["green"] == 3
    for kind in ("number_swap", "number_change", "negation_insert"):
        assert (kinds[kind]["n"], kinds[kind]["caught"]) == (3, 3)
    assert _stored(papers) == data
    assert check.summary.text() == compact_text(data)
    assert "a changed figure was caught in 3 of 3 cases" in check.summary.toolTip()
    assert self_check_text(data).endswith(SMOKE_TEST_TEXT)
    assert check.note.isHidden() and check.check_button.isEnabled()
    assert check.cancel_button.isHidden()
    # After it, what the figures mean and what they do not cover, opened by itself, with
    # the way to the colours' help; the panel keeps a link to both.
    box = check.details_box
    assert box is not None and box.isVisible()
    assert box.text() == f"{self_check_text(data)}\n\n{MEANING_TEXT}"
    assert "paraphrased errors" in MEANING_TEXT and "are not covered" in MEANING_TEXT
    (helper,) = [b for b in box.buttons() if box.buttonRole(b) is QMessageBox.ButtonRole.HelpRole]
    with qtbot.waitSignal(check.help_requested, timeout=1000):
        helper.click()
    box.close()
    assert check.meaning.isVisibleTo(panel) and "help:colours" in check.meaning.text()
    with qtbot.waitSignal(check.help_requested, timeout=1000):
        check.meaning.linkActivated.emit("help:colours")
    check.meaning.linkActivated.emit("details")
    assert check.details_box is not None and check.details_box.isVisible()
    check.details_box.close()
    # The next check says how long the last one took.
    assert "The last check of these documents took" in start_text(papers, 3, 250.0)


def test_a_busy_collection_shows_the_result_without_keeping_it(
    qtbot: QtBot, papers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def busy(self: Collection, key: str, data: object) -> None:
        raise CollectionBusy(self.name)

    monkeypatch.setattr(Collection, "set_metadata", busy)
    panel = _panel(qtbot, papers, SentenceInPassage())
    check = panel.self_check
    check.run()
    qtbot.waitUntil(lambda: not check.running, timeout=TIMEOUT_MS)
    assert check.note.text() == NOT_KEPT_TEXT and check.note.isVisibleTo(panel)
    assert "unchanged sentences were green" in check.summary.toolTip()
    assert check.data["preset"] == "balanced"
    assert _stored(papers) == {}


def test_cancel_stops_a_running_check(qtbot: QtBot, papers: str) -> None:
    verifier = SentenceInPassage(hold=True)
    panel = _panel(qtbot, papers, verifier)
    check = panel.self_check
    check.run()
    qtbot.waitUntil(verifier.started.is_set, timeout=TIMEOUT_MS)
    check.cancel_button.click()
    assert check.progress_label.text() == "“papers”: cancelling…"
    verifier.release.set()
    qtbot.waitUntil(lambda: not check.running, timeout=TIMEOUT_MS)
    assert check.note.text() == CANCELLED_TEXT
    assert check.summary.text() == NOT_CHECKED_TEXT
    assert _stored(papers) == {}
