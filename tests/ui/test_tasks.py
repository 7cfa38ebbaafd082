"""Control flow of ui/tasks.py with fake callables: cancel, errors, throttled tokens, one writer."""

from __future__ import annotations

import threading
import time

from pytestqt.qtbot import QtBot

from verifai_desktop.domain import Progress
from verifai_desktop.errors import Cancelled, ParseError
from verifai_desktop.ui.tasks import TaskContext, TaskRunner

FAKE_FILES = 10_000


def test_cancel_stops_a_fake_ingest_and_is_swallowed(qtbot: QtBot) -> None:
    runner = TaskRunner()
    processed: list[int] = []

    def fake_ingest(ctx: TaskContext) -> int:
        for i in range(FAKE_FILES):
            if ctx.cancel.is_set():
                raise Cancelled("ingest")
            processed.append(i)
            ctx.progress(Progress("files", i + 1, FAKE_FILES, "files", f"f{i}.pdf"))
            time.sleep(0.002)
        return FAKE_FILES

    task = runner.submit("ingest", fake_ingest, writes_index=True)
    failed: list[object] = []
    task.failed.connect(failed.append)
    with qtbot.waitSignal(task.progressed, timeout=5000) as first:
        pass
    assert isinstance(first.args[0], Progress) and first.args[0].unit == "files"
    with qtbot.waitSignal(task.cancelled, timeout=5000):
        task.cancel()
    assert task.outcome == "cancelled"
    assert failed == []
    assert task.result is None
    assert 0 < len(processed) < FAKE_FILES
    assert runner.running == ()


def test_errors_reach_the_ui_thread_as_failed(qtbot: QtBot) -> None:
    runner = TaskRunner()
    main_thread = threading.current_thread()
    seen_in: list[threading.Thread] = []

    def broken(ctx: TaskContext) -> None:
        raise ParseError("/x/broken.pdf", "truncated file")

    task = runner.submit("parse", broken)
    task.failed.connect(lambda exc: seen_in.append(threading.current_thread()))
    with qtbot.waitSignal(task.failed, timeout=5000) as blocker:
        pass
    err = blocker.args[0]
    assert isinstance(err, ParseError) and str(err) == "could not read broken.pdf: truncated file"
    assert task.outcome == "failed"
    assert seen_in == [main_thread]


def test_tokens_are_streamed_in_order_and_throttled(qtbot: QtBot) -> None:
    runner = TaskRunner()
    tokens = [f"t{i} " for i in range(300)]

    def generate(ctx: TaskContext) -> str:
        for t in tokens:
            ctx.on_token(t)
            time.sleep(0.001)
        return "done"

    task = runner.submit("ask", generate, throttle_ms=40)
    chunks: list[str] = []
    task.text_streamed.connect(chunks.append)
    with qtbot.waitSignal(task.finished, timeout=10000):
        pass
    assert "".join(chunks) == "".join(tokens)
    assert len(chunks) < len(tokens)  # coalesced, not one signal per token
    assert task.result == "done"


def test_index_writes_never_overlap(qtbot: QtBot) -> None:
    runner = TaskRunner()
    events: list[str] = []
    lock = threading.Lock()

    def write(name: str):  # type: ignore[no-untyped-def]
        def fn(ctx: TaskContext) -> None:
            with lock:
                events.append(f"start {name}")
            time.sleep(0.05)
            with lock:
                events.append(f"end {name}")

        return fn

    tasks = [runner.submit(f"w{i}", write(f"w{i}"), writes_index=True) for i in range(3)]
    qtbot.waitUntil(lambda: all(not t.is_running for t in tasks), timeout=5000)
    assert events == ["start w0", "end w0", "start w1", "end w1", "start w2", "end w2"]
