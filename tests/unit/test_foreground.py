"""Answers first: background work waits while an answer is being written (issue 40, item 5).

Threads and events only (control flow); the app-level effect is measured by
``benchmarks/latency_busy.py``.
"""

from __future__ import annotations

import os
import threading

import psutil
import pytest

from verifai_desktop.errors import Cancelled
from verifai_desktop.foreground import FOREGROUND, Foreground, lower_priority


def test_background_work_resumes_only_when_every_answer_is_written() -> None:
    gate = Foreground()
    resumed = threading.Event()
    order: list[str] = []

    def background() -> None:
        gate.wait_turn()
        order.append("background")
        resumed.set()

    with gate.answering():
        with gate.answering():  # two answers (two windows)
            worker = threading.Thread(target=background)
            worker.start()
            assert not resumed.wait(0.3)
        assert gate.busy and not resumed.wait(0.3)
        order.append("answer")
    assert resumed.wait(5)
    worker.join()
    assert order == ["answer", "background"] and not gate.busy
    assert gate.wait_turn() == 0.0  # nothing in progress: no wait


def test_a_waiting_job_can_still_be_cancelled() -> None:
    gate = Foreground()
    cancel = threading.Event()
    caught: list[BaseException] = []

    def background() -> None:
        try:
            gate.wait_turn(cancel, "ingest")
        except Cancelled as exc:
            caught.append(exc)

    with gate.answering():
        worker = threading.Thread(target=background)
        worker.start()
        cancel.set()
        worker.join(5)
        assert not worker.is_alive()
    assert len(caught) == 1 and "ingest" in str(caught[0])


def test_an_ingest_run_waits_between_files_while_an_answer_is_written(tmp_path) -> None:
    from verifai_desktop.store.ingest_run import IngestRun

    run = IngestRun.__new__(IngestRun)  # only check_cancel's control flow is exercised
    run.cancel = None
    passed = threading.Event()

    def between_files() -> None:
        run.check_cancel("ingest")
        passed.set()

    with FOREGROUND.answering():
        worker = threading.Thread(target=between_files)
        worker.start()
        assert not passed.wait(0.5)
    assert passed.wait(5)
    worker.join()


@pytest.mark.skipif(os.name != "posix", reason="nice values are POSIX")
def test_lower_priority_nices_a_child_process() -> None:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lower_priority(child.pid)
        assert psutil.Process(child.pid).nice() >= 10
    finally:
        child.kill()
        child.wait()


def test_a_held_process_is_suspended_while_an_answer_is_written() -> None:
    """A real child process: stopped for the answer, running after, and the seconds it was
    stopped counted for its deadlines (:mod:`verifai_desktop.ingest.clock`)."""
    import subprocess
    import sys
    import time
    from multiprocessing import Value

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        gate = Foreground()
        paused = Value("d", 0.0)
        gate.hold(child.pid, paused)
        process = psutil.Process(child.pid)

        def stopped() -> bool:  # a signal is delivered a moment after it is sent
            for _ in range(40):
                if process.status() == psutil.STATUS_STOPPED:
                    return True
                time.sleep(0.025)
            return False

        assert not stopped()
        with gate.answering():
            assert stopped()
            time.sleep(0.3)
        assert not stopped()
        assert paused.value >= 0.3
        with gate.answering():
            gate.release(child.pid)  # stopping a held worker resumes it first
            assert not stopped()
    finally:
        child.kill()
        child.wait()


def test_the_parser_clock_leaves_out_the_suspended_seconds() -> None:
    from multiprocessing import Value

    from verifai_desktop.ingest import clock

    paused = Value("d", 0.0)
    clock.count_pauses_in(paused)
    try:
        before = clock.now()
        paused.value = 100.0
        assert clock.now() < before - 99.0
    finally:
        clock.count_pauses_in(None)
