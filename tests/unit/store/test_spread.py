"""Files started ahead in order (:func:`lookahead`, :func:`window`) and the Ray ingest's error
without Ray.

The ingest itself, on a real Ray cluster and PostgreSQL: tests/e2e/test_pg_ray_ingest.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from verifai_desktop.cli import main
from verifai_desktop.errors import MissingExtra
from verifai_desktop.store.ingest_run import lookahead
from verifai_desktop.store.naming import list_names
from verifai_desktop.store.spread import RayCluster, window


def test_lookahead_yields_in_order_starting_at_most_ahead() -> None:
    started: list[int] = []
    consumed: list[int] = []

    def start(item: int) -> str:
        started.append(item)
        return f"job {item}"

    for item, job in lookahead(range(10), start, 3):
        assert job == f"job {item}"
        # this item and at most two after it are started; none is started twice
        assert started == list(range(min(item + 3, 10)))
        consumed.append(item)
    assert consumed == list(range(10))


def test_lookahead_of_fewer_items_than_ahead_and_of_none() -> None:
    assert list(lookahead("ab", str.upper, 5)) == [("a", "A"), ("b", "B")]
    assert list(lookahead([], str.upper, 1)) == []


def test_lookahead_one_ahead_starts_each_item_when_it_is_consumed() -> None:
    started: list[int] = []
    for item, _ in lookahead(range(4), started.append, 1):
        assert started[-1] == item


def test_lookahead_refuses_a_window_below_one() -> None:
    with pytest.raises(ValueError, match="ahead must be 1 or more"):
        next(lookahead([1], str, 0))


def test_window_is_two_files_per_cpu() -> None:
    assert window(2.0) == 4
    assert window(16) == 32
    assert window(0.5) == 2  # a fraction of a CPU still keeps a file ahead


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as when not installed
    with pytest.raises(MissingExtra, match=r"verifai-desktop\[cluster\]"):
        RayCluster()


def test_ingest_ray_without_ray_fails_before_creating_the_collection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    (tmp_path / "note.txt").write_text("Aspirin lowers the risk of stroke.\n", encoding="utf-8")
    assert main(["ingest", str(tmp_path), "--collection", "spread", "--ray"]) == 1
    err = capsys.readouterr().err
    assert "ingest --ray needs Ray" in err and "pip install 'verifai-desktop[cluster]'" in err
    assert list_names() == []
