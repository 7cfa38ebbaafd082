"""Operations that take the window's collection (ui/operations.py): ops run on the worker with
the one open collection, results and change notices arrive on the UI thread."""

from __future__ import annotations

import threading
from pathlib import Path

from pytestqt.qtbot import QtBot

from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import list_collections
from verifai_desktop.store.writer import IngestReport, ingest_paths
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.operations import CollectionHost
from verifai_desktop.ui.tasks import TaskContext, TaskRunner


def test_op_runs_on_worker_with_the_one_collection(qtbot: QtBot) -> None:
    runner = TaskRunner()
    host = CollectionHost(runner, Settings)
    ui_thread = threading.get_ident()
    with qtbot.waitSignal(host.documents_changed, timeout=30_000) as created:
        host.collection_op("create", "papers", lambda col, ctx: None, create=True)
    assert created.args == ["papers"] and list_collections() == ["papers"]

    seen: list[tuple[int, Collection]] = []

    def op(col: Collection, ctx: TaskContext) -> Collection:
        seen.append((threading.get_ident(), col))
        return col

    arrived: list[tuple[Collection, int]] = []
    for _ in range(2):
        task = host.query("read", "papers", op)
        task.succeeded.connect(lambda col: arrived.append((col, threading.get_ident())))
    qtbot.waitUntil(lambda: len(arrived) == 2, timeout=30_000)
    assert [t for t, _ in seen] == [seen[0][0]] * 2 and seen[0][0] != ui_thread
    # Both ops got the same open collection; each result arrived on the UI thread.
    assert arrived == [(seen[0][1], ui_thread), (seen[0][1], ui_thread)]
    assert seen[0][1].name == "papers"
    assert runner.shutdown()
    host.close()


def test_change_notice_refreshes_documents_table(qtbot: QtBot, tmp_path: Path) -> None:
    runner = TaskRunner()
    panel = LibraryPanel(runner, Settings, offer_sample=False)
    qtbot.addWidget(panel)
    panel.create_collection("papers")
    qtbot.waitUntil(lambda: not runner.running and panel.current == "papers", timeout=30_000)
    assert panel.table_rows() == []
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    changed: list[str] = []
    panel.documents_changed.connect(changed.append)

    # A write submitted to the host, not through the panel: only the host's notice can refresh.
    def op(col: Collection, ctx: TaskContext) -> IngestReport:
        return ingest_paths(col, [empty])

    panel.host.collection_op("ingest", "papers", op)
    qtbot.waitUntil(lambda: bool(panel.table_rows()) and not runner.running, timeout=30_000)
    assert changed == ["papers"]
    assert [r[:3] for r in panel.table_rows()] == [("empty.txt", "failed", "0")]
    assert runner.shutdown()
    panel.host.close()
