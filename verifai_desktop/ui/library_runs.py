"""The long writes the library panel starts on a collection: ingesting files and folders,
repairing (rebuilding) a collection from its source files, syncing it with its folders, and
the round of password questions for the encrypted PDFs a run found.

Every run goes through the panel's single-writer path (:class:`Write`); an ingest or a repair
shows its progress in a :class:`~verifai_desktop.ui.ingest_progress.ProgressFrame` (Cancel
stops it) and leaves its summary in a :class:`~verifai_desktop.ui.ingest_progress.SummaryFrame`.
What a run means for the current collection (refreshing its documents, asking passwords, the
folders' sync note) is left to :class:`~verifai_desktop.ui.library_panel.LibraryPanel`, which
hears of it by the signals of :class:`CollectionRuns`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal

from verifai_desktop.domain import Progress
from verifai_desktop.errors import VerifaiError
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.library import ingest_sources
from verifai_desktop.store.repair import RepairReport, repair_collection
from verifai_desktop.store.watch import SyncReport, sync_changes
from verifai_desktop.store.writer import IngestReport, Outcome
from verifai_desktop.ui.documents_table import collection_rows
from verifai_desktop.ui.ingest_progress import (
    ProgressFrame,
    SummaryFrame,
    ingest_summary,
    repair_summary,
)
from verifai_desktop.ui.operations import CollectionHost, OpenCollection
from verifai_desktop.ui.questions import PasswordQuestion
from verifai_desktop.ui.tasks import T, Task, TaskContext

ROWS_EVERY_S = 0.5
"""Least time between two readings of the documents during an ingest (seconds): a folder of
small files must not be slowed by reading the catalog after each."""


class Write(Protocol):
    """The panel's single-writer path: count ``task`` (a write just submitted to the host) as
    busy until it finishes; show its failure in a dialog unless ``report_errors`` is False."""

    def __call__(self, task: Task[T], *, context: str, report_errors: bool = True) -> Task[T]:
        """Count and watch ``task``; return it."""
        ...


class CollectionRuns(QObject):
    """Ingest, repair and sync runs, and the password round.

    Signals:
        ingest_finished(object): an ingest run ended with this ``IngestReport``.
        rows_read(str, object): while an ingest into the named collection runs, its
            documents after another file was committed (a list of ``DocumentRow``).
        encrypted_found(str, object, object): a run into the named collection found
            encrypted PDFs (a list of ``Path``), trying these passwords (``{Path: str}``).
        password_requested(PasswordQuestion): an encrypted PDF needs its password.
        passwords_given(object): every question of a round is answered or cancelled; these
            files (``{Path: str}``, never empty) are to be ingested again with them.
    """

    ingest_finished = Signal(object)
    rows_read = Signal(str, object)
    encrypted_found = Signal(str, object, object)
    password_requested = Signal(object)
    passwords_given = Signal(object)

    def __init__(
        self,
        host: CollectionHost,
        settings: Callable[[], Settings],
        write: Write,
        display_name: Callable[[str], str],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._host = host
        self._settings = settings
        self._write = write
        self._display_name = display_name
        self.passwords: dict[str, str] = {}  # source -> PDF password given in this session
        self.ingest_task: Task[IngestReport] | None = None
        self.repair_task: Task[RepairReport] | None = None
        self.sync_task: Task[SyncReport] | None = None
        self.syncs = 0  # syncs with the folders queued or running (they run unasked)
        self._repairing: set[str] = set()  # collections whose repair is queued or running
        self.progress = ProgressFrame()
        self.summary = SummaryFrame()

    def _given_passwords(self) -> dict[Path, str]:
        return {Path(source): pw for source, pw in self.passwords.items()}

    def _track(
        self, name: str, task: Task[IngestReport] | Task[RepairReport], label: str, stop_tip: str
    ) -> None:
        """Show ``task``'s files and chunks in the progress area (after a delay, while
        collection ``name``, which it runs on, is on show) until it ends; ``stop_tip`` says
        what Cancel stops."""
        self.summary.forget(name)  # the new run's summary replaces it when done
        self.progress.track(task, label, collection=name, stop_tip=stop_tip)
        task.progressed.connect(self.progress.show_progress)

    # ----- ingest --------------------------------------------------------------------------

    def ingest(
        self, name: str, paths: list[Path], passwords: dict[Path, str]
    ) -> Task[IngestReport]:
        """Ingest ``paths`` into collection ``name`` (created when missing), with ``passwords``
        for encrypted PDFs; they are kept for the session when the run succeeds. A ``.bib`` or
        CSL-JSON file or a Zotero data folder among them is read as a reference library: its
        entries' files are ingested with their metadata, an entry without a readable file is
        listed as refused (:func:`~verifai_desktop.store.library.ingest_sources`)."""
        ingest_settings = self._settings().ingest

        def op(col: OpenCollection, ctx: TaskContext) -> IngestReport:
            return ingest_sources(
                col,
                paths,
                passwords=passwords,
                progress=self._reporting_rows(name, col, ctx),
                cancel=ctx.cancel,
                follow_external_links=ingest_settings.follow_external_links,
                max_chunks_per_file=ingest_settings.max_chunks_per_file,
                ocr=OcrOptions.from_settings(ingest_settings),
            )

        task = self._write(
            self._host.collection_op("ingest", name, op, create=True),
            context=f"Adding files to “{self._display_name(name)}”",
        )
        self.ingest_task = task
        shown = self._display_name(name)
        self._track(
            name,
            task,
            f"Adding {len(paths)} item(s) to “{shown}”…",
            f"Stop adding files to “{shown}”; files finished before stay indexed",
        )
        task.succeeded.connect(lambda report: self._on_ingest_done(name, report, passwords))
        task.cancelled.connect(lambda: self._on_ingest_cancelled(name))
        return task

    def _reporting_rows(
        self, name: str, col: OpenCollection, ctx: TaskContext
    ) -> Callable[[Progress], None]:
        """``ctx.progress``, and, once a file is committed (the next one starts), the
        collection's rows read by :attr:`rows_read`, at most every :data:`ROWS_EVERY_S`: the
        documents table fills as files finish. Runs on the writer thread, which alone
        touches ``col``; the signal is queued to the UI thread."""
        last = {"done": 0, "at": 0.0}

        def progress(p: Progress) -> None:
            ctx.progress(p)
            now = time.monotonic()
            if (
                p.unit == "files"
                and p.done > last["done"]
                and (now - last["at"] >= ROWS_EVERY_S or p.done == p.total)
            ):
                last["done"], last["at"] = p.done, now
                self.rows_read.emit(name, collection_rows(col))

        return progress

    def _on_ingest_cancelled(self, name: str) -> None:
        self.progress.set_detail("Cancelled; files finished before stay indexed.")
        self.summary.show_summary(
            f"Adding files to “{self._display_name(name)}” was cancelled; files finished before "
            "stay indexed.",
            collection=name,
        )

    def _on_ingest_done(self, name: str, report: IngestReport, given: dict[Path, str]) -> None:
        # The host's documents_changed notice (connected first) has refreshed the table.
        for path, password in given.items():
            self.passwords[str(Path(path).expanduser().resolve())] = password
        self.ingest_finished.emit(report)
        self.summary.show_summary(ingest_summary(self._display_name(name), report), collection=name)
        self._report_encrypted(name, report, given)

    def _report_encrypted(self, name: str, report: IngestReport, given: dict[Path, str]) -> None:
        encrypted = [Path(o.source) for o in report.outcomes if o.status is Outcome.ENCRYPTED]
        if encrypted:
            self.encrypted_found.emit(name, encrypted, given)

    def request_passwords(
        self, paths: Sequence[Path], tried: dict[Path, str] | None = None
    ) -> list[PasswordQuestion]:
        """Ask each encrypted PDF's password by :attr:`password_requested`.

        When every question is answered or cancelled, the files given a password are handed
        back by :attr:`passwords_given` (a wrong one comes back encrypted and is asked again,
        ``wrong=True``).

        Returns:
            The questions, in the order of ``paths``.
        """
        tried_keys = {Path(p).resolve() for p in (tried or {})}
        questions = [
            PasswordQuestion(Path(p), wrong=Path(p).resolve() in tried_keys, parent=self)
            for p in paths
        ]
        for q in questions:
            q.completed.connect(lambda: self._on_password_answered(questions))
        for q in questions:
            self.password_requested.emit(q)
        return questions

    def _on_password_answered(self, questions: Sequence[PasswordQuestion]) -> None:
        if not all(q.is_done for q in questions) or any(q.parent() is None for q in questions):
            return
        passwords = {q.path: q.answer_text for q in questions if q.answer_text}
        for q in questions:
            q.setParent(None)  # answered: the round is over, never ingest twice
            q.deleteLater()
        if passwords:
            self.passwords_given.emit(passwords)

    # ----- repair --------------------------------------------------------------------------

    def repair(self, name: str) -> Task[RepairReport] | None:
        """Rebuild collection ``name`` (folder name) from its source files in the background,
        with progress and Cancel.

        The rebuilt collection replaces the old one only when complete; a failed or cancelled
        repair leaves it as it was. PDF passwords given in this session are used again, and
        encrypted PDFs still without one are reported (:attr:`encrypted_found`).

        Returns:
            The task, or None when ``name`` is empty or its repair is already queued.
        """
        if not name or name in self._repairing:
            return None
        self._repairing.add(name)
        settings = self._settings()
        passwords = self._given_passwords()
        shown = self._display_name(name)

        def work(ctx: TaskContext) -> RepairReport:
            return repair_collection(
                name,
                settings=settings,
                passwords=passwords,
                progress=ctx.progress,
                cancel=ctx.cancel,
            )

        # A folder op: the host closes its open collection first (the repair swaps the folder).
        task = self._write(
            self._host.folder_op("repair collection", work), context=f"Repairing “{shown}”"
        )
        self.repair_task = task
        self._track(
            name,
            task,
            f"Rebuilding “{shown}” from its source files…",
            f"Stop rebuilding “{shown}”; the collection is left as it was",
        )
        task.succeeded.connect(lambda report: self._on_repair_done(name, report))
        task.cancelled.connect(
            lambda: self.summary.show_summary(
                f"Repairing “{self._display_name(name)}” was cancelled; the collection was left "
                "as it was.",
                collection=name,
            )
        )
        task.finished.connect(lambda: self._repairing.discard(name))
        return task

    def _on_repair_done(self, name: str, report: RepairReport) -> None:
        self.summary.show_summary(
            repair_summary(self._display_name(name), report),
            collection=name,
            details="\n".join(report.missing),
        )
        self._report_encrypted(name, report.ingest, {})

    # ----- sync ----------------------------------------------------------------------------

    def sync(self, name: str, changed: Iterable[Path] | None) -> Task[SyncReport]:
        """Bring collection ``name`` in step with its folders: added and changed files among
        ``changed`` are indexed, deleted ones removed; ``None`` rescans every folder. A
        failure is not shown in a dialog (syncs run unasked)."""
        paths = None if changed is None else sorted({Path(p) for p in changed})
        ingest_settings = self._settings().ingest
        passwords = self._given_passwords()

        def op(col: OpenCollection, ctx: TaskContext) -> SyncReport:
            if not isinstance(col, Collection):  # it follows no folder (watched_roots)
                raise VerifaiError("a team collection follows no folders of this desktop")
            return sync_changes(
                col,
                paths,
                progress=ctx.progress,
                cancel=ctx.cancel,
                passwords=passwords,
                follow_external_links=ingest_settings.follow_external_links,
                max_chunks_per_file=ingest_settings.max_chunks_per_file,
                ocr=OcrOptions.from_settings(ingest_settings),
                # A rescan on opening trusts size and mtime: hashing would read every file
                # each time a collection opens. The files of a batch were seen to change.
                check_content=paths is not None,
            )

        task = self._write(
            self._host.collection_op("sync folders", name, op),
            context=f"Syncing “{self._display_name(name)}” with its folders",
            report_errors=False,
        )
        self.sync_task = task
        self.syncs += 1
        task.finished.connect(self._on_sync_finished)
        return task

    def _on_sync_finished(self) -> None:
        self.syncs -= 1
