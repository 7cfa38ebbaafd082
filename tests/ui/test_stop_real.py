"""Stop in the real window with the real bundled models (issue 42, item 11): Stop is heard
inside the prompt batch being read (llama.cpp's abort callback) and between verifier batches,
not only at the end of a 512-token batch or of a sentence's whole check, which took 3-10 s.

The models run as shipped; the test only holds one step of theirs (a ``Llama.eval`` call, an
ONNX Runtime run of the verifier) at its start until Stop is pressed, then counts what was
still computed after it: no prompt token was read, no further verifier batch was run. The
seconds from Stop to the end of the task are measured by ``benchmarks/stop_latency.py``.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_cpp import Llama
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from verifai_desktop.generate.llama import LlamaGenerator
from verifai_desktop.settings import RetrievalSettings, Settings, VerifySettings, save_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.verify.nli import OnnxVerifier

pytestmark = pytest.mark.slow

FILES = ("deep_rules_09_overfitting.md", "deep_rules_03_when_to_use_dl.md")
QUESTION = "What is overfitting and how can you detect it?"
TIMEOUT_MS = 600_000
HOLD_S = 300


class _Held:
    """Holds the first call made while :attr:`armed` at its start until :attr:`release`."""

    def __init__(self) -> None:
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()
        self.after_release = 0  # calls started after the held one

    def hold(self) -> bool:
        """Called at the start of each call; True for the held one."""
        if self.release.is_set():
            self.after_release += 1
            return False
        if self.armed and not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(HOLD_S)
            return True
        return False


def _window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in FILES:
        shutil.copy(DOCS_CLEAN / name, folder / name)
    # Three passages keep the prompt short; no conflict search, so the answer's own checks
    # are the verifier's last work.
    settings = Settings(
        retrieval=RetrievalSettings(k=3), verify=VerifySettings(conflict_search=False)
    )
    save_settings(settings)
    with Collection.open("papers", create=True, settings=settings) as col:
        report = col.add_paths([folder])
        assert {o.status.value for o in report.outcomes} == {"indexed"}
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.library.current == "papers", timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: not window.runner.running, timeout=TIMEOUT_MS)
    return window


def test_stop_is_heard_inside_a_prompt_batch_and_between_verifier_batches(
    qtbot: QtBot, tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = _window(qtbot, tmp_path)

    # 1. Stop while a batch of the prompt is being read.
    reading = _Held()
    real_eval = Llama.eval
    read_after_stop: list[int] = []  # prompt tokens the context gained in the held call

    def held_eval(self: Llama, tokens: Sequence[int]) -> None:
        if not reading.hold() or len(tokens) < 2:
            real_eval(self, tokens)
            return
        before = self.n_tokens
        try:
            real_eval(self, tokens)
        finally:
            read_after_stop.append(self.n_tokens - before)

    monkeypatch.setattr(Llama, "eval", held_eval)
    reading.armed = True
    task = window.ask(QUESTION)
    assert task is not None
    qtbot.waitUntil(reading.entered.is_set, timeout=TIMEOUT_MS)
    assert window.stop_button.isEnabled()
    window.stop_button.click()
    reading.release.set()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert task.outcome == "cancelled"
    # The batch held at its start was read after Stop: llama.cpp dropped it at once.
    assert read_after_stop == [0]
    assert reading.after_release == 0
    generator = window._ask_session().generator
    assert isinstance(generator, LlamaGenerator)

    # 2. Stop while the verifier checks the answer, between its batches.
    monkeypatch.setattr(Llama, "eval", real_eval)
    session = window._ask_session()
    verifier = session.verifier
    assert isinstance(verifier, OnnxVerifier)
    verifier.load()
    # Small ONNX batches: a sentence's pairs take several, so that what runs after Stop shows.
    monkeypatch.setattr(verifier, "batch_size", 4)
    onnx: Any = verifier._session
    checking = _Held()
    real_run = onnx.run

    def held_run(*args: Any, **kwargs: Any) -> Any:
        checking.hold()
        return real_run(*args, **kwargs)

    monkeypatch.setattr(onnx, "run", held_run)
    written = threading.Event()
    checking.armed = True
    task = window.ask(QUESTION)
    assert task is not None
    task.text_streamed.connect(lambda _piece: written.set())
    qtbot.waitUntil(checking.entered.is_set, timeout=TIMEOUT_MS)
    assert written.is_set()  # the answer was written; its first verifier batch is held
    window.stop_button.click()
    checking.release.set()
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    assert task.outcome == "cancelled"
    assert checking.after_release == 0, f"{checking.after_release} verifier batches after Stop"
    assert window.ask_button.isEnabled() and not window.stop_button.isEnabled()
