"""The main window's answer or claim check on its way out: copied, saved as a file, its audit
record exported.

:class:`Exporting`, a part of :class:`~verifai_desktop.ui.main_window.MainWindow` built on
:class:`~verifai_desktop.ui.window_base.WindowBase`, puts what is on show (a claim check when
one is, else the answer) on the clipboard (Markdown and HTML), saves it in the format its file
suffix names (:data:`~verifai_desktop.answer_files.EXPORT_FORMATS`; a check through
:func:`~verifai_desktop.check_view.write_check`), and writes the audit record of an entry
kept in the history (File → Export audit record) on the task runner, through the history
panel (:meth:`HistoryPanel.export_audit`). It copies the BibTeX of the entries an answer cites
(Edit → Copy as BibTeX). Answers and checks are cited as ``settings.citations`` says.
Failures are shown by :mod:`verifai_desktop.ui.errors`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from verifai_desktop.answer_files import EXPORT_FORMATS, format_for_path, write_answer
from verifai_desktop.check_view import check_to_html, check_to_markdown, write_check
from verifai_desktop.citations import answer_html, answer_markdown, cited_bibtex, cited_passages
from verifai_desktop.errors import VerifaiError
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.history_panel import with_history, write_audit_record
from verifai_desktop.ui.tasks import Task
from verifai_desktop.ui.window_base import WindowBase


class Exporting(WindowBase):
    """The window's part that copies and saves the shown answer and its audit record."""

    @Slot()
    def on_copy_clicked(self) -> None:
        """Put the claim check or answer on show on the clipboard as Markdown (text) and
        HTML."""
        mime = QMimeData()
        if self.check_result is not None:
            mime.setText(check_to_markdown(self.check_result, self.settings.citations))
            mime.setHtml(check_to_html(self.check_result, self.settings.citations))
            what = "Claim check"
        elif self.answer is not None:
            mime.setText(answer_markdown(self.answer, self.settings.citations))
            mime.setHtml(answer_html(self.answer, self.settings.citations))
            what = "Answer"
        else:
            return
        QGuiApplication.clipboard().setMimeData(mime)
        self.statusBar().showMessage(f"{what} copied (Markdown and HTML).", 5000)

    @Slot()
    def on_copy_bibtex(self) -> None:
        """Put the BibTeX of the entries the answer on show cites on the clipboard (the
        original entries of a .bib file; :func:`~verifai_desktop.citations.cited_bibtex`)."""
        if self.answer is None or self.check_result is not None:
            return
        text = cited_bibtex(cited_passages(self.answer))
        if not text:
            self.statusBar().showMessage(
                "No source cited by this answer comes from a .bib file or a Zotero library.",
                8000,
            )
            return
        QGuiApplication.clipboard().setText(text)
        count = text.count("\n@") + text.startswith("@")
        self.statusBar().showMessage(f"BibTeX of {count} cited entries copied.", 5000)

    def export_answer(self, path: Path) -> Path:
        """Write the claim check or answer on show to ``path`` in the format its suffix names
        (:func:`~verifai_desktop.check_view.write_check`,
        :func:`~verifai_desktop.answer_files.write_answer`).

        Raises:
            UnsupportedExportFormat: the suffix names no export format.
            ExportFailed: the file cannot be written; nothing was changed.
        """
        if self.check_result is not None:
            return write_check(self.check_result, path, citations=self.settings.citations)
        assert self.answer is not None
        return write_answer(self.answer, path, citations=self.settings.citations)

    @Slot()
    def on_export_clicked(self) -> None:
        """Ask where to save and export the claim check or answer on show."""
        if self.answer is None and self.check_result is None:
            return
        what = "claim-check" if self.check_result is not None else "answer"
        formats = list(EXPORT_FORMATS.values())
        path, chosen = QFileDialog.getSaveFileName(
            self,
            "Export claim check" if self.check_result is not None else "Export answer",
            str(Path.home() / f"{what}{formats[0].suffix}"),
            ";;".join(f.file_filter for f in formats),
        )
        if not path:
            return
        target = Path(path)
        if not target.suffix:
            fmt = next((f for f in formats if f.file_filter == chosen), formats[0])
            target = target.with_suffix(fmt.suffix)
        try:
            format_for_path(target)
            self.export_answer(target)
        except (OSError, VerifaiError) as exc:
            show_error(self, exc, context=f"Saving {target.name}")
            return
        self.statusBar().showMessage(f"Saved {target}", 8000)

    # ----- audit record --------------------------------------------------------------------

    def export_audit(self, path: Path) -> tuple[Path, Path]:
        """Write the audit record of the answer or claim check on show to ``path`` (JSON) and
        beside it (HTML), on the calling thread; File → Export audit record runs it on the
        task runner (:meth:`save_audit`).

        Returns:
            The JSON and HTML files written.

        Raises:
            HistoryNotFound: the entry is no longer in its history.
            ExportFailed: the files cannot be written; neither was changed.
        """
        ref = self.shown_ref()
        assert ref is not None
        name, answer_id = ref
        return with_history(
            name, lambda history: write_audit_record(history, name, answer_id, path)
        )

    def save_audit(self, path: Path) -> Task[tuple[Path, Path]]:
        """Write the audit record of the answer or claim check on show to ``path`` (JSON) and
        beside it (HTML) on the task runner; the status bar names the files, a failure is
        shown as an error."""
        ref = self.shown_ref()
        assert ref is not None
        name, answer_id = ref
        task = self.history.export_audit(name, answer_id, path)
        task.succeeded.connect(
            lambda paths: self.statusBar().showMessage(
                f"Audit record saved: {paths[0]} (readable view: {paths[1].name})", 15000
            )
        )
        task.failed.connect(
            lambda exc: show_error(self, exc, context=f"Saving the audit record {path.name}")
        )
        return task

    @Slot()
    def on_audit_clicked(self) -> None:
        """Ask where to save the audit record of the answer or claim check on show and write
        it (JSON and HTML)."""
        ref = self.shown_ref()
        if ref is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Export audit record",
            str(Path.home() / f"audit-{ref[1]}.json"),
            "Audit record (*.json)",
        )
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() != ".json":
            target = target.with_name(target.name + ".json")
        self.save_audit(target)
