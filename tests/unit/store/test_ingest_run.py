"""Index flushes during an ingest run: at most every couple of seconds, and rarer when a
flush is slow (a large vector index is rewritten whole on every save)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from verifai_desktop.store import ingest_run
from verifai_desktop.store.ingest_run import FLUSH_INTERVAL_S, FLUSH_SHARE, IngestRun


class Clock:
    """A clock the test moves by hand, standing in for ``time`` in the module."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def perf_counter(self) -> float:
        return self.now


class SlowFlushTarget:
    """Commits take ``commit_s`` seconds, flushes ``flush_s`` (of the fake clock)."""

    def __init__(self, clock: Clock, commit_s: float, flush_s: float) -> None:
        self.clock = clock
        self.commit_s = commit_s
        self.flush_s = flush_s
        self.flushed_at: list[float] = []

    def commit(self, items: object) -> None:
        self.clock.now += self.commit_s

    def flush(self) -> None:
        self.clock.now += self.flush_s
        self.flushed_at.append(self.clock.now)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(
        ingest_run,
        "time",
        SimpleNamespace(monotonic=fake.monotonic, perf_counter=fake.perf_counter),
    )
    return fake


def run_commits(target: SlowFlushTarget, n: int) -> IngestRun:
    run = IngestRun(target, None, None)  # type: ignore[arg-type]
    for _ in range(n):
        run.commit([])
    return run


def test_fast_flushes_happen_every_interval(clock: Clock) -> None:
    target = SlowFlushTarget(clock, commit_s=0.5, flush_s=0.01)
    run_commits(target, 40)  # 20 s of commits
    gaps = [b - a for a, b in zip(target.flushed_at, target.flushed_at[1:], strict=False)]
    assert len(target.flushed_at) >= 8
    assert all(FLUSH_INTERVAL_S <= g <= FLUSH_INTERVAL_S + 0.6 for g in gaps)


def test_slow_flushes_take_at_most_their_share(clock: Clock) -> None:
    target = SlowFlushTarget(clock, commit_s=0.5, flush_s=5.0)
    run = run_commits(target, 400)  # 200 s of commits
    run.finish()
    total = clock.now - 1000.0
    flushing = len(target.flushed_at) * 5.0
    # Without the share rule a flush would follow every 2 s of commits: 5 / 7 of the time.
    assert flushing / total <= FLUSH_SHARE + 0.05
    assert run.flush_wait == pytest.approx(5.0 * (1 / FLUSH_SHARE - 1))


def test_a_forced_flush_still_happens(clock: Clock) -> None:
    target = SlowFlushTarget(clock, commit_s=0.1, flush_s=5.0)
    run = run_commits(target, 3)
    assert target.flushed_at == []
    run.finish()
    assert len(target.flushed_at) == 1
