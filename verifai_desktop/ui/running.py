"""Which question or claim check runs, for which collection, and what the question box says
about it.

One question or claim check runs at a time (one generator and one verifier in memory, on a
two-core laptop); it belongs to the screen it was started on (:mod:`~verifai_desktop.ui.
shown_state`) and keeps running while the user looks at another collection. The question box
of another screen shows none of its progress, its Stop or its status: Ask is off there, and a
line under the box (:attr:`busy_note`) names the collection the job runs in and where to stop
it; the status bar names that collection before the job's stages. The same line says which
collection an index write is busy with, while questions wait for it (issue 42).

:class:`Running`, a part of :class:`~verifai_desktop.ui.main_window.MainWindow` built on
:class:`~verifai_desktop.ui.window_base.WindowBase` (below
:class:`~verifai_desktop.ui.asking.Asking`), holds that state; Asking starts the jobs.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Slot

from verifai_desktop.ui.ask_stages import busy_elsewhere_note, busy_writing_note
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.shown_state import ScreenKey, ShownStates
from verifai_desktop.ui.tasks import T, Task
from verifai_desktop.ui.window_base import MODES

MODE_NAMES = {mode: text.replace("&", "") for mode, text, _tip in MODES}
"""The question box's modes by the names of their tabs ("Ask a question")."""


class Running(ShownStates):
    """The window's part that knows the running question or check and gates the question box."""

    @property
    def working(self) -> bool:
        """A question or a claim check is running."""
        return any(t is not None and t.is_running for t in (self.ask_task, self.check_task))

    @property
    def run_collection(self) -> str:
        """The collection the running question or check runs in ('' when none runs)."""
        return self.run_key[0] if self.run_key is not None and self.working else ""

    def _update_ask_button(self) -> None:
        """Ask (and Check) are enabled with a collection, no question or check running and no
        index write going on; Stop while the running one belongs to the collection on show.
        The busy note says which collection holds Ask back, doing what."""
        running = self.working
        busy = self.library.busy
        current = self.library.current
        self.ask_button.setEnabled(bool(current) and not busy and not running)
        self.ask_button.setToolTip(
            "Wait for the documents to finish indexing"
            if busy
            else "Create or pick a collection first"
            if not current
            else ""
        )
        own = running and self.run_collection == current
        self.stop_button.setEnabled(own)
        shown = self.library.display_name(self.run_collection) if running else ""
        what = "claim check" if self.check_task is not None and self.check_task.is_running else ""
        self.stop_button.setToolTip(
            f"Stop the {what or 'question'} running in “{shown}”" if own else ""
        )
        note = ""
        if running and self.run_key != self.shown_key:
            mode = MODE_NAMES[self.run_key[1]] if own and self.run_key is not None else ""
            note = busy_elsewhere_note(bool(what), shown, mode)
        elif busy and not running:
            note = busy_writing_note(self.library.busy_text)
        self.busy_note.setText(note)
        self.busy_note.setVisible(bool(note))

    def say_run_status(self) -> None:
        """Say the running question's or check's last status again, named by its collection
        when another is on show (after switching screens: it was said for the screen left)."""
        if self.working and self.run_status:
            self._run_message(self.run_status)

    def _collection_to_run(self) -> str:
        """The current collection when a question or check may start now, else ``""`` (the
        status bar says so when there is no collection; nothing is said while one runs)."""
        name = self.library.current
        if not name:
            self.statusBar().showMessage(
                "Create or pick a collection first, then add documents.", 8000
            )
            return ""
        return "" if self.working else name

    def _run_message(self, text: str, timeout_ms: int = 0, key: ScreenKey | None = None) -> None:
        """Show ``text``, about the running question or check (or the one of screen ``key``),
        in the status bar; prefixed with its collection while another is on show."""
        if key is None:
            key = self.run_key
            self.run_status = text
        if key is not None and key[0] != self.library.current:
            text = f"“{self.library.display_name(key[0])}”: {text}"
        self.statusBar().showMessage(text, timeout_ms)

    def _follow(self, task: Task[T], context: str, finished: Callable[[], None]) -> None:
        """What a started question and a check share: Ask off and Stop on until ``finished``;
        model loading in the status bar; a failure shown (with Repair for a damaged
        collection), a stop said, naming the collection when another is on show."""
        self._update_ask_button()
        key = self.run_key
        task.status_changed.connect(self.on_model_status)
        task.failed.connect(
            lambda exc: show_error(self, exc, context=context, repair=self.library.repair)
        )
        task.cancelled.connect(lambda: self._run_message("Stopped.", 5000, key))
        task.finished.connect(finished)

    def _start_run(self, key: ScreenKey, note: str = "") -> None:
        """A question or check starts for screen ``key`` (on show), showing ``note``."""
        self.run_key = key
        self.run_streamed = ""
        self.run_note = note
        self.run_passages = ()
        self.run_caption = ""
        self.run_keeps_previous = False
        self.run_status = ""

    @Slot()
    def on_stop_clicked(self) -> None:
        """Stop the running question or claim check (Stop is on only on its collection)."""
        for task in (self.ask_task, self.check_task):
            if task is not None and task.is_running:
                task.cancel()

    @Slot(str)
    def on_model_status(self, message: str) -> None:
        """Show model loading in the permanent status label."""
        self.model_status.setText(f"Models: {message}")
