"""The Library panel's colour check: the last self-check of a collection and a button to run one.

A self-check (:mod:`verifai_desktop.evaluate.selfcheck`, also ``verifai eval self-check``)
makes pairs from the collection's own passages, each sentence as written and changed (a figure
swapped or changed, two items swapped, a negation inserted or removed, an aim read as a
finding), verifies them as an answer sentence is verified, and counts how often a changed
sentence is not shown green. It is a smoke test of the colours on these documents, not a
benchmark; the panel says so.

A run takes three steps, none on the UI thread: the passages are read on the collection host
(queued behind any write), the pairs are verified on the task runner's reader pool (minutes;
progress and Cancel), and the result is kept in the collection's metadata
(:data:`~verifai_desktop.evaluate.selfcheck.METADATA_KEY`) by a write op. The result is shown
as soon as it is known; when another program is writing the collection it is shown but not
kept, and the panel says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.domain import Progress
from verifai_desktop.errors import CollectionBusy
from verifai_desktop.evaluate.selfcheck import (
    DEFAULT_PER_KIND,
    METADATA_KEY,
    SelfCheck,
    collection_passages,
    run_self_check,
    summary_line,
)
from verifai_desktop.settings import Settings
from verifai_desktop.ui.elided_label import ElidedLabel, keep_column_width
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.operations import CollectionHost, OpenCollection
from verifai_desktop.ui.resources import icon
from verifai_desktop.ui.tasks import Task, TaskContext
from verifai_desktop.ui.watched_roots import sync_time
from verifai_desktop.verify.perturb import PerturbKind

if TYPE_CHECKING:
    from verifai_desktop.pipeline import AskSession

log = logging.getLogger(__name__)

SMOKE_TEST_TEXT = "A smoke test of the colours on these documents, not a benchmark."
NOT_CHECKED_TEXT = "The colours have not been checked on these documents yet."
CHECK_BUTTON_TEXT = "Check the colours…"
CHECK_TIP = (
    "Take sentences of these documents, change some (a figure swapped or changed, two items "
    "swapped, a negation inserted or removed, an aim read as a finding) and verify each as an "
    "answer sentence is verified: how often is a changed sentence still shown green? Takes a "
    "few minutes. " + SMOKE_TEST_TEXT
)
NOT_KEPT_TEXT = (
    "This result is shown but not kept with the collection: another program is writing it "
    "(an ingest?). Check again once it has finished to keep it."
)
NO_PASSAGES_TEXT = "Nothing to check: the collection has no indexed passages yet."
START_TITLE = "Check the colours"
TYPICAL_TIME = "3-5 minutes on a two-core laptop processor"
"""How long a check of :data:`DEFAULT_PER_KIND` pairs per kind takes: 4-5 minutes under Xvfb on
this project's two-core machines (issue 42), two to four with nothing else running."""
MEANING_TEXT = (
    "“Caught” means the changed sentence was not shown green (it was red or unsure). These "
    "are mechanical changes to sentences copied from your documents: errors an answer makes "
    "in its own words (paraphrased errors) are not covered, and are caught less often: on a "
    "test set of paraphrased claims, 16% of the wrong ones were still shown green (README, "
    "“Colours on paraphrase”)."
)
"""What a check's figures mean and what they leave out, shown under its result; the 16% is
the paraphrase dev set's "wrong claims not shown green" 0.84 (README, issue 39)."""
HELP_HREF = "help:colours"
DETAILS_TITLE = "The colour check"
HELP_BUTTON_TEXT = "What do the colours mean?"
DETAILS_LINK = (
    f'<a href="details">What these figures mean</a> · <a href="{HELP_HREF}">the colours</a>'
)


def start_text(collection: str, per_kind: int, last_seconds: float | None = None) -> str:
    """What the confirmation before a check says: what it checks, how long it takes, that it
    reads this collection's passages on this machine only.

    Args:
        collection: the collection's name as shown.
        per_kind: pairs of each kind (:data:`~verifai_desktop.evaluate.selfcheck.
            DEFAULT_PER_KIND`); seven kinds.
        last_seconds: how long the last check of this collection took (seconds), if known.
    """
    pairs = per_kind * len(PerturbKind)
    took = (
        f" The last check of these documents took {round(last_seconds / 60) or 1} min."
        if last_seconds
        else ""
    )
    return (
        f"The colour check takes up to {pairs} sentences from the passages of “{collection}”, "
        "changes most of them (a figure swapped or changed, two items swapped, a negation "
        "inserted or removed, an aim read as a finding) and verifies each one as an answer "
        "sentence is verified. It counts how often a changed sentence is still shown green, "
        "and how often an unchanged one is.\n\n"
        f"It takes a few minutes ({TYPICAL_TIME}).{took} Cancel stops it.\n\n"
        "It reads only this collection's passages, on this machine: nothing is sent anywhere, "
        "and nothing in the collection changes but the result, kept with it."
    )


CANCELLED_TEXT = "The colour check was cancelled."

Passages = list[tuple[str, str]]
"""``(chunk id, chunk text)`` of a collection, from ``collection_passages``."""
SessionFactory = Callable[[Settings], "AskSession"]
"""Makes the session whose verifier and thresholds a check uses."""


def new_session(settings: Settings) -> AskSession:
    """A fresh :class:`~verifai_desktop.pipeline.AskSession` of ``settings`` (the default
    :attr:`SelfCheckPanel.session_factory`); its verifier loads on first use."""
    # Deferred: the pipeline pulls in the model libraries, which the window must not import
    # before they are needed.
    from verifai_desktop.pipeline import AskSession

    return AskSession(settings)


def self_check_text(data: dict[str, Any]) -> str:
    """What the panel says of a stored self-check (:meth:`SelfCheck.as_dict`).

    Returns:
        "Colour check (14:03, preset balanced): On these documents, ... A smoke test of the
        colours on these documents, not a benchmark." (the time as :func:`sync_time` gives
        it); :data:`NOT_CHECKED_TEXT` when ``data`` holds no result.
    """
    line = summary_line(data)
    if not line:
        return NOT_CHECKED_TEXT
    when = sync_time(str(data.get("created_at", "")))
    preset = f"preset {data['preset']}" if data.get("preset") else ""
    about = ", ".join(x for x in (when, preset) if x)
    return f"Colour check{f' ({about})' if about else ''}: {line} {SMOKE_TEST_TEXT}"


def compact_text(data: dict[str, Any]) -> str:
    """The panel's one or two lines on a stored self-check: all changed sentences caught, and
    the unchanged ones kept green (the whole report is :func:`self_check_text`).

    Returns:
        "Colours checked (14:03, preset balanced): changed sentences caught in 170 of 180,
        unchanged ones green in 24 of 30."; :data:`NOT_CHECKED_TEXT` without a result.
    """
    kinds = data.get("kinds", {})
    if not summary_line(data):
        return NOT_CHECKED_TEXT
    changed = [k for name, k in kinds.items() if name != PerturbKind.UNCHANGED.value]
    caught, n = sum(int(k["caught"]) for k in changed), sum(int(k["n"]) for k in changed)
    same = kinds.get(PerturbKind.UNCHANGED.value)
    when = sync_time(str(data.get("created_at", "")))
    preset = f"preset {data['preset']}" if data.get("preset") else ""
    about = ", ".join(x for x in (when, preset) if x)
    text = f"Colours checked{f' ({about})' if about else ''}: "
    text += f"changed sentences caught in {caught} of {n}"
    if same:
        text += f", unchanged ones green in {same['green']} of {same['n']}"
    return text + "."


def _read_passages(col: OpenCollection, ctx: TaskContext) -> tuple[str, Passages]:
    return col.display_name, collection_passages(col)


def _read_stored(col: OpenCollection, ctx: TaskContext) -> dict[str, Any]:
    return dict(col.metadata(METADATA_KEY))


class SelfCheckPanel(QFrame):
    """The current collection's last colour check, a button to run one, its progress and Cancel.

    One check runs at a time. Its progress and Cancel show only while its own collection is
    on show; another collection shows its own last check, and why it cannot be checked now
    (issue 42).

    Attributes:
        collection: the collection shown (folder name; '' when none).
        running_collection: the collection being checked ('' when none).
        display_name: gives a collection's display name (the library panel's).
        data: its last self-check as stored (:meth:`SelfCheck.as_dict`; empty when none).
        task: the running step of a check (reading, verifying or keeping), or None.
        session_factory: makes the session whose verifier and thresholds a check uses (the
            default loads the verifier of the settings; tests pass a fake verifier).
        n_per_kind: pairs of each kind a check makes.
        display_name: a collection's name as shown, from its folder name.

    Signals:
        checked(str, object): a check of the named collection ended with this result
            (:meth:`SelfCheck.as_dict`), before it is kept.
        help_requested(): the link to the colours' help page was clicked.
    """

    checked = Signal(str, object)
    help_requested = Signal()

    def __init__(
        self,
        host: CollectionHost,
        settings: Callable[[], Settings],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("selfCheck")
        self.host = host
        self._settings = settings
        self.collection = ""
        self.data: dict[str, Any] = {}
        self.task: Task[Any] | None = None
        self.running_collection = ""
        self._cancellable = False  # Cancel can stop the running step
        self._progress_text = ""  # the running check's progress line
        self.display_name: Callable[[str], str] = lambda name: name
        self.session_factory: SessionFactory = new_session
        self.n_per_kind = DEFAULT_PER_KIND

        self.summary = QLabel(NOT_CHECKED_TEXT)
        self.summary.setObjectName("selfCheckSummary")
        self.summary.setWordWrap(True)
        self.summary.setToolTip(CHECK_TIP)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = QLabel("")
        self.note.setObjectName("selfCheckNote")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color:#8a4b00")
        self.note.setVisible(False)
        # What the figures mean and do not cover, once there are figures.
        self.meaning = QLabel(DETAILS_LINK)
        self.meaning.setObjectName("selfCheckMeaning")
        self.meaning.setWordWrap(True)
        self.meaning.setStyleSheet("color:#556")
        self.meaning.setTextFormat(Qt.TextFormat.RichText)
        self.meaning.linkActivated.connect(self.on_link_activated)
        self.meaning.setToolTip(MEANING_TEXT)
        self.details_box: QMessageBox | None = None
        self.meaning.setVisible(False)
        self.check_button = QPushButton(CHECK_BUTTON_TEXT)
        self.check_button.setToolTip(CHECK_TIP)
        self.progress_label = ElidedLabel()  # a long status never widens the column
        self.cancel_button = QPushButton(icon("cancel"), "Cancel check")
        self.cancel_button.setToolTip("Stop the colour check; nothing is kept")
        row = QHBoxLayout()
        row.addWidget(self.check_button)
        row.addWidget(self.progress_label, 1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.meaning)
        layout.addWidget(self.note)
        layout.addLayout(row)
        keep_column_width(self.summary, self.meaning, self.note)
        self.check_button.clicked.connect(self.on_check_clicked)
        self.cancel_button.clicked.connect(self.on_cancel_clicked)
        self._show_running(False)
        self.setVisible(False)

    @property
    def running(self) -> bool:
        """True while a check is reading, verifying or being kept."""
        return self.task is not None

    # ----- showing -------------------------------------------------------------------------

    @Slot(str)
    def show_collection(self, name: str) -> Task[dict[str, Any]] | None:
        """Show collection ``name``'s last self-check (read from its metadata on the host);
        hidden when ``name`` is ''."""
        self.collection = name
        self._show_data({})
        self._set_note("")
        self._show_running(self.running)
        self.setVisible(bool(name))
        if not name:
            return None
        # Not queued behind another collection's ingest or question (issue 42).
        task = self.host.read("read colour check", name, _read_stored)
        task.succeeded.connect(lambda data: self._on_stored(name, data))
        task.failed.connect(lambda exc: log.warning("cannot read the colour check: %s", exc))
        return task

    def _on_stored(self, name: str, data: dict[str, Any]) -> None:
        if name == self.collection:
            self._show_data(data)

    def _show_data(self, data: dict[str, Any]) -> None:
        # One or two lines in the narrow column; the whole report in the tooltip and in the
        # details ("What these figures mean"), which open by themselves after a run.
        self.data = data
        self.summary.setText(compact_text(data))
        checked = bool(summary_line(data))
        self.summary.setToolTip(
            f"{self_check_text(data)}\n\n{MEANING_TEXT}" if checked else CHECK_TIP
        )
        self.meaning.setVisible(checked)

    def details_text(self) -> str:
        """The last check's whole report, then what its figures mean and do not cover."""
        return f"{self_check_text(self.data)}\n\n{MEANING_TEXT}"

    def show_details(self) -> QMessageBox:
        """Open (not blocking) the last check's report with what its figures mean, and a
        button to the colours' help page."""
        if self.details_box is not None:
            self.details_box.close()
        box = QMessageBox(
            QMessageBox.Icon.Information, DETAILS_TITLE, self.details_text(), parent=self
        )
        box.setObjectName("selfCheckDetails")
        helper = box.addButton(HELP_BUTTON_TEXT, QMessageBox.ButtonRole.HelpRole)
        box.addButton(QMessageBox.StandardButton.Close)
        helper.clicked.connect(self.help_requested)
        box.open()
        self.details_box = box
        return box

    @Slot(str)
    def on_link_activated(self, href: str) -> None:
        """The details link opens the report; the help link the colours' help page."""
        if href == HELP_HREF:
            self.help_requested.emit()
        else:
            self.show_details()

    def _set_note(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def _show_running(self, running: bool, text: str | None = None) -> None:
        """Show whether a check runs, and ``text`` as its progress (None: the last one); its
        progress and Cancel only while its collection is on show, where they take the
        button's place (the row never asks the column for more width than the button)."""
        if text is not None:
            self._progress_text = text if running else ""
        here = running and self.running_collection == self.collection
        elsewhere = running and not here
        self.check_button.setEnabled(not running)
        self.check_button.setVisible(not here)
        self.check_button.setToolTip(
            f"The colours of “{self.display_name(self.running_collection)}” are being "
            "checked; check these documents when it ends."
            if elsewhere
            else CHECK_TIP
        )
        self.cancel_button.setEnabled(here and self.task is not None and self._cancellable)
        self.cancel_button.setVisible(here)
        shown = self.display_name(self.collection)
        self.cancel_button.setToolTip(f"Stop the colour check of “{shown}”; nothing is kept")
        self.progress_label.setText(f"“{shown}”: {self._progress_text}" if here else "")

    # ----- running -------------------------------------------------------------------------

    def run(self) -> Task[tuple[str, Passages]] | None:
        """Check the colours of the current collection in the background.

        Returns:
            The first step's task (reading the passages), or None when there is no collection
            or a check is already running.
        """
        name = self.collection
        if not name or self.running:
            return None
        settings = self._settings()
        self._set_note("")
        task = self.host.query("colour check passages", name, _read_passages)
        self.task = task
        self.running_collection = name
        self._cancellable = True
        self._show_running(True, "reading the passages…")
        task.succeeded.connect(lambda found: self._verify(name, settings, task, *found))
        task.failed.connect(lambda exc: self._on_failed(exc))
        return task

    def _verify(
        self,
        name: str,
        settings: Settings,
        read: Task[tuple[str, Passages]],
        display: str,
        passages: Passages,
    ) -> None:
        # Reading cannot be interrupted; a Cancel during it stops the check here.
        if read.context.cancel.is_set():
            self._end(CANCELLED_TEXT)
            return
        if not passages:
            self._end(NO_PASSAGES_TEXT)
            return
        factory, n_per_kind = self.session_factory, self.n_per_kind

        def work(ctx: TaskContext) -> SelfCheck:
            ctx.status("loading the verifier…")
            session = factory(settings)
            verifier = session.verifier
            verifier.load()
            return run_self_check(
                verifier,
                passages,
                session.thresholds(),
                collection=display,
                n_per_kind=n_per_kind,
                progress=ctx.progress,
                cancel=ctx.cancel,
            )

        task = self.host.runner.submit("colour check", work)
        self.task = task
        task.status_changed.connect(lambda text: self._show_running(True, text))
        task.progressed.connect(self.on_progress)
        task.succeeded.connect(lambda report: self._keep(name, report.as_dict()))
        task.failed.connect(lambda exc: self._on_failed(exc))
        task.cancelled.connect(lambda: self._end(CANCELLED_TEXT))

    def _keep(self, name: str, data: dict[str, Any]) -> None:
        if name == self.collection:
            self._show_data(data)
        self.checked.emit(name, data)
        self._cancellable = False  # a write of one small file: let it finish
        self._show_running(True, "keeping the result with the collection…")

        def op(col: OpenCollection, ctx: TaskContext) -> None:
            col.set_metadata(METADATA_KEY, data)

        task = self.host.collection_op("keep colour check", name, op)
        self.task = task
        task.succeeded.connect(lambda _r: self._end(""))
        if name == self.collection:
            self.show_details()  # the user waited minutes for it: what it found, and means
        task.failed.connect(lambda exc: self._on_not_kept(name, exc))

    def _on_not_kept(self, name: str, exc: BaseException) -> None:
        if isinstance(exc, CollectionBusy):
            self._end(NOT_KEPT_TEXT if name == self.collection else "")
        else:
            self._on_failed(exc)

    def _on_failed(self, exc: BaseException) -> None:
        self._end("")
        show_error(self.window(), exc, context="Checking the colours")

    def _end(self, note: str) -> None:
        checked = self.running_collection
        self.task = None
        self.running_collection = ""
        self._show_running(False, "")
        if checked == self.collection:
            self._set_note(note)

    @Slot(object)
    def on_progress(self, p: Progress) -> None:
        """Say how far the verification has come: "“papers”: checking 32 of 190 pairs…"
        (while its collection is on show)."""
        if p.total and self.running:
            self._show_running(True, f"checking {p.done} of {p.total} pairs…")

    def confirm_start(self, text: str) -> bool:
        """Ask whether to start a check, saying what it does (a dialog; tests replace it)."""
        answer = QMessageBox.question(
            self,
            START_TITLE,
            text,
            QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Ok,
        )
        return answer == QMessageBox.StandardButton.Ok

    @Slot()
    def on_check_clicked(self) -> None:
        """Say what a check does and how long it takes; start it when the user agrees."""
        if not self.collection or self.running:
            return
        seconds = self.data.get("seconds")
        text = start_text(
            self.display_name(self.collection),
            self.n_per_kind,
            float(seconds) if isinstance(seconds, int | float) else None,
        )
        if self.confirm_start(text):
            self.run()

    @Slot()
    def on_cancel_clicked(self) -> None:
        """Stop the running check (nothing is kept)."""
        if self.task is not None:
            self.task.cancel()
            self._cancellable = False
            self._show_running(True, "cancelling…")
