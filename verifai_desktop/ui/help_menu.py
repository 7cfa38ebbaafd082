"""The Help menu: what the colours mean, keyboard shortcuts, where VerifAI keeps its data, the
bundled models' licences and About, each in a small window of its own.

What it says is read when it is opened, never written down twice: the shortcuts from the
window's own actions (:func:`shortcut_rows`), the folders from
:mod:`verifai_desktop.settings` (which honours ``$VERIFAI_HOME``), the licences from the model
catalog and the model cards (:func:`~verifai_desktop.modelstore.licences.bundled_licences`).
"""

from __future__ import annotations

import html
import importlib.metadata
import os
import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMainWindow,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop import __version__
from verifai_desktop.audit import key_path
from verifai_desktop.errors import SettingsError
from verifai_desktop.logs import log_path
from verifai_desktop.modelstore.licences import bundled_licences
from verifai_desktop.settings import (
    HOME_ENV,
    collections_dir,
    data_root,
    models_dir,
    settings_path,
)
from verifai_desktop.ui import colour_help

SENTENCE_KEYS: tuple[tuple[str, str], ...] = (
    ("Enter (question box)", "Ask the question, or check the claim"),
    ("Tab, Shift+Tab", "Step through the answer's sentences; each shows its evidence card"),
    ("↑ ↓ ← →", "Previous or next sentence"),
    ("Enter (on a sentence)", "Open the passage the sentence cites, at its evidence"),
    ("Shift+F10, Menu key", "The sentence's menu: check it across your documents, mark verdicts"),
    ("Esc", "Leave the sentence"),
)
"""Keys of the question box and the answer view, which no menu action names."""

APP_DISTRIBUTION = "verifai-desktop"


def _plain(text: str) -> str:
    """An action's text as read: without its ``&`` accelerator marks and trailing ``…``."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what they do) of every action of ``window`` that has a shortcut, in the
    platform's own key names, then the answer view's keys (:data:`SENTENCE_KEYS`)."""
    rows: dict[str, str] = {}
    for action in window.findChildren(QAction):
        keys = [
            k.toString(QKeySequence.SequenceFormat.NativeText)
            for k in action.shortcuts()
            if not k.isEmpty()
        ]
        if keys and action.text():
            rows.setdefault(", ".join(keys), _plain(action.text()))
    return sorted(rows.items(), key=lambda r: r[1].lower()) + list(SENTENCE_KEYS)


def _table(rows: list[tuple[str, str]]) -> str:
    e = html.escape
    body = "".join(
        f"<tr><td style='padding:2px 12px 2px 0'><b>{e(a)}</b></td><td>{e(b)}</td></tr>"
        for a, b in rows
    )
    return f"<table cellspacing='0'>{body}</table>"


def shortcuts_html(window: QWidget) -> str:
    """The keyboard shortcuts page (:func:`shortcut_rows`)."""
    return "<h3>Keyboard shortcuts</h3>" + _table(shortcut_rows(window))


def data_places() -> list[tuple[str, str]]:
    """(what, where) of everything VerifAI keeps on this machine, as paths of this install."""
    return [
        ("Everything below", str(data_root())),
        ("Settings", str(settings_path())),
        (
            "Collections: one folder each, with its document list, search indexes and the "
            "history of answers and claim checks (history.sqlite)",
            str(collections_dir()),
        ),
        ("Models downloaded or assembled", str(models_dir())),
        ("Log", str(log_path())),
        ("Key that signs audit records", str(key_path())),
    ]


def data_html() -> str:
    """The "where your data is kept" page (:func:`data_places`)."""
    e = html.escape
    moved = os.environ.get(HOME_ENV)
    note = (
        f"<p>The folder was chosen with ${HOME_ENV} ({e(moved)}).</p>"
        if moved
        else f"<p>Set ${HOME_ENV} to keep everything in another folder.</p>"
    )
    return (
        "<h3>Where your data is kept</h3><p>Your documents stay where they are; VerifAI "
        "keeps its indexes, settings and history here, on this machine only:</p>"
        + _table(data_places())
        + note
    )


def licences_html() -> str:
    """The bundled models' licences page, from the catalog and their model cards."""
    e = html.escape
    try:
        models = bundled_licences()
    except SettingsError as exc:
        return f"<h3>Licences of the bundled models</h3><p>{e(str(exc))}</p>"
    parts = ["<h3>Licences of the bundled models</h3>"]
    for m in models:
        state = "" if m.installed else " (not installed)"
        parts.append(f"<p><b>{e(m.name)}</b> — {e(m.role)}{state}<br>Licence: {e(m.licence)}")
        parts += [f"<br>{e(note)}" for note in m.notes]
        if m.licence_file is not None:
            parts.append(f"<br>Licence text: {e(str(m.licence_file))}")
        parts.append("</p>")
    return "".join(parts)


def about_html() -> str:
    """The About page: the version, the app's licence, and what it runs on."""
    e = html.escape
    try:
        licence = importlib.metadata.metadata(APP_DISTRIBUTION)["License"] or ""
    except (importlib.metadata.PackageNotFoundError, KeyError):  # not installed, or no field
        licence = ""
    licence_line = f"<br>Licence: {e(licence)}" if licence else ""
    return (
        f"<h3>VerifAI Desktop {e(__version__)}</h3>"
        "<p>Answers from your own documents, every sentence checked against the passages it "
        f"cites, offline.{licence_line}</p>"
        f"<p>Python {e(platform.python_version())} · Qt for Python {e(pyside_version)}</p>"
    )


class HelpDialog(QDialog):
    """A page of help text with a Close button."""

    def __init__(self, title: str, page: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("helpDialog")
        self.setWindowTitle(title)
        self.text = QTextBrowser()
        self.text.setObjectName("helpText")
        self.text.setOpenExternalLinks(False)
        self.text.setHtml(page)
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(620, 440)


class HelpMenu(QObject):
    """The window's Help menu; each entry opens its page (:attr:`dialog` is the last one)."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.main_window = window
        self.dialog: HelpDialog | None = None
        self.colours_action = QAction(colour_help.TITLE, window)
        self.colours_action.setObjectName("coloursHelpAction")
        self.shortcuts_action = QAction("Keyboard shortcuts", window)
        self.shortcuts_action.setShortcut(QKeySequence.StandardKey.HelpContents)
        self.data_action = QAction("Where your data is kept", window)
        self.licences_action = QAction("Licences of the bundled models", window)
        self.about_action = QAction("About VerifAI Desktop", window)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.menu = window.menuBar().addMenu("&Help")
        for action in (
            self.colours_action,
            self.shortcuts_action,
            self.data_action,
            self.licences_action,
            self.about_action,
        ):
            self.menu.addAction(action)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.colours_action.triggered.connect(self.show_colours)
        self.shortcuts_action.triggered.connect(self.on_shortcuts_triggered)
        self.data_action.triggered.connect(
            lambda: self.show_page("Where your data is kept", data_html())
        )
        self.licences_action.triggered.connect(
            lambda: self.show_page("Licences of the bundled models", licences_html())
        )
        self.about_action.triggered.connect(
            lambda: self.show_page("About VerifAI Desktop", about_html())
        )

    @Slot()
    def show_colours(self) -> HelpDialog:
        """Show what the colours and marks mean, how often each was right, and what to do
        when one is wrong (:mod:`~verifai_desktop.ui.colour_help`)."""
        dialog = self.show_page(colour_help.TITLE, colour_help.colours_html())
        dialog.resize(720, 640)
        return dialog

    @Slot()
    def on_shortcuts_triggered(self) -> None:
        """Show the keyboard shortcuts, read from the window's actions."""
        self.show_page("Keyboard shortcuts", shortcuts_html(self.main_window))

    def show_page(self, title: str, page: str) -> HelpDialog:
        """Open ``page`` in its own window (not blocking the main one)."""
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        self.dialog = HelpDialog(title, page, self.main_window)
        self.dialog.open()
        return self.dialog
