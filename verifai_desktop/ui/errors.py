"""The one place the desktop app shows errors: a title, what happened, and what to do.

Every user-facing failure is a :class:`~verifai_desktop.errors.VerifaiError` whose message
already names the file, model or setting and the remedy; this module adds a title and, for
anything unexpected, points at the log file. Dialogs open window-modal but non-blocking
(``QMessageBox.open``), so worker results keep arriving while one is shown.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from verifai_desktop import errors
from verifai_desktop.settings import data_root

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ErrorReport:
    """What the user is told.

    Attributes:
        title: dialog title.
        message: what happened (the error's own message).
        remedy: what to do next.
    """

    title: str
    message: str
    remedy: str

    def text(self) -> str:
        """Message and remedy as one paragraph pair."""
        return f"{self.message}\n\n{self.remedy}" if self.remedy else self.message


_TITLES: tuple[tuple[type[BaseException], str, str], ...] = (
    (
        errors.EncryptedDocument,
        "Password needed",
        "Enter the password when asked, or remove the file.",
    ),
    (errors.NeedsOcr, "Scanned document", "Run OCR on the file (e.g. ocrmypdf) and add it again."),
    (
        errors.UnsupportedFormat,
        "Unsupported file",
        "Add PDF, DOCX, PPTX, EPUB, Markdown or text files.",
    ),
    (
        errors.ParseError,
        "Could not read a file",
        "The other files were still indexed; check the file.",
    ),
    (
        errors.CollectionNotFound,
        "Collection not found",
        "Pick or create a collection in the library panel.",
    ),
    (
        errors.ModelNotFound,
        "Model missing",
        "Open Models (Edit → Models…) to download it or choose another installed model.",
    ),
    (errors.ModelLoadError, "Model could not load", "Open Settings and choose another model file."),
    (
        errors.GenerationError,
        "Answer generation failed",
        "Try again, or pick another generator in Settings.",
    ),
    (
        errors.SettingsError,
        "Invalid setting",
        "Fix the value in Settings (or delete settings.toml).",
    ),
    (errors.OfflineError, "Offline", "Copy the model files onto this machine instead."),
    (
        errors.ChecksumMismatch,
        "Download rejected",
        "Nothing was changed. Try the download again; if it fails the same way, report it.",
    ),
    (
        errors.MissingExtra,
        "Optional part not installed",
        "Install it with the pip command above, then restart VerifAI Desktop.",
    ),
    (errors.CannotDelete, "Cannot delete the model", "Only downloaded models can be deleted."),
)


STORE_FAILURES: dict[str, tuple[str, str]] = {
    "unreachable": (
        "Server unreachable",
        "Check the server and port, that the server is running and that no firewall blocks it.",
    ),
    "tls": (
        "TLS failed",
        "Check the TLS mode and the root certificate file: with verify-full the server's "
        "certificate must be signed by that root and issued to the server's name.",
    ),
    "authentication": (
        "Authentication failed",
        "Check the user and the password, or ask the server's administrator for access.",
    ),
    "extension": (
        "pgvector missing",
        "Ask the administrator to run CREATE EXTENSION vector in this database.",
    ),
    "schema": (
        "Collection schema version",
        "Update VerifAI Desktop, or ask the collection's owner to open it once to upgrade it.",
    ),
    "permission": ("Permission denied", "Ask the collection's owner to give your group access."),
    "url": ("Invalid server address", "Check the server, port, database and user."),
}
"""Title and remedy of a :class:`~verifai_desktop.errors.StoreUnavailable` by its kind (a team
collection on a PostgreSQL server that cannot be used)."""


REPAIR_OFFERED = (
    "Repair rebuilds it from its source files: they are read and indexed again, which can take "
    "a while. Or delete the collection and add its files again."
)
REPAIR_IN_PANEL = (
    "Select the collection in the library panel and press Repair collection to rebuild it from "
    "its source files, or delete the collection and add its files again."
)
REPAIR_IMPOSSIBLE = (
    "Delete the collection (your files are not touched) and add its files again, from where "
    "they are now."
)


def describe_error(exc: BaseException, *, repair_offered: bool = False) -> ErrorReport:
    """Build the title, message and remedy shown for ``exc``.

    Args:
        exc: the failure.
        repair_offered: the box shows a Repair button (an :class:`~verifai_desktop.errors.
            IndexCorrupt` whose collection is known); the remedy then points at it.
    """
    # The core's messages on damage end with advice worded for both the app and the command
    # line; the app says what happened and gives its own way to fix it.
    if isinstance(exc, errors.IndexCorrupt):
        return ErrorReport(
            "Damaged collection",
            f"{exc.path} is damaged ({exc.reason}).",
            REPAIR_OFFERED if repair_offered else REPAIR_IN_PANEL,
        )
    if isinstance(exc, errors.RepairImpossible):
        return ErrorReport(
            "Cannot repair the collection",
            f"Collection {exc.name!r} cannot be rebuilt: {exc.reason}.",
            REPAIR_IMPOSSIBLE,
        )
    if isinstance(exc, errors.StoreUnavailable):
        title, remedy = STORE_FAILURES.get(exc.kind, ("Team collection unavailable", ""))
        return ErrorReport(title, str(exc), remedy)
    for cls, title, remedy in _TITLES:
        if isinstance(exc, cls):
            return ErrorReport(title, str(exc), remedy)
    if isinstance(exc, errors.VerifaiError):
        return ErrorReport("Error", str(exc), "")
    log_path = data_root() / "verifai.log"
    return ErrorReport(
        "Unexpected error",
        f"{type(exc).__name__}: {exc}",
        f"This is a bug. Details are in {log_path}; please include them in a report.",
    )


def show_error(
    parent: QWidget | None,
    exc: BaseException,
    *,
    context: str = "",
    repair: Callable[[str], object] | None = None,
    remedy: str = "",
) -> QMessageBox:
    """Show ``exc`` in a window-modal, non-blocking message box and return it.

    Args:
        parent: the window the box belongs to.
        exc: the failure.
        context: what the app was doing ("Ingesting 3 files"), shown first.
        repair: starts the repair of a collection (its folder name). Given, a damaged
            collection (:class:`~verifai_desktop.errors.IndexCorrupt` naming its collection)
            gets Repair and Cancel buttons; Repair calls it.
        remedy: what to do, where the caller knows better than the error's kind (a failed
            download: the folder and the files to copy); default: :func:`describe_error`'s.
    """
    name = exc.collection if isinstance(exc, errors.IndexCorrupt) else None
    offer = repair is not None and bool(name)
    report = describe_error(exc, repair_offered=offer)
    if not isinstance(exc, errors.VerifaiError):
        log.error("unexpected error (%s)", context, exc_info=exc)
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(report.title)
    box.setText(f"{context}: {report.message}" if context else report.message)
    box.setInformativeText(remedy or report.remedy)
    box.setObjectName("errorBox")
    if offer and repair is not None and name:
        button = box.addButton("Repair", QMessageBox.ButtonRole.AcceptRole)
        button.setObjectName("repairButton")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(button)
        box.setEscapeButton(cancel)
        target: str = name
        button.clicked.connect(lambda: repair(target))
    box.open()
    return box


def install_excepthook() -> None:
    """Route uncaught exceptions in slots to :func:`show_error` instead of aborting silently."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.error("uncaught exception", exc_info=(exc_type, exc, tb))
        app = QApplication.instance()
        if isinstance(app, QApplication):
            show_error(app.activeWindow(), exc)

    sys.excepthook = hook
