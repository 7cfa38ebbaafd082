"""The Models dialog: bundled, downloaded and recommended models per role; download, set
active, delete; and the device each model runs on.

Everything slow runs on the window's :class:`~verifai_desktop.ui.tasks.TaskRunner`: listing the
models (stats files), detecting the hardware (imports ONNX Runtime and llama.cpp), downloading
(:func:`verifai_desktop.modelstore.pull`, resumed from what an earlier download left in the
staging folder) and deleting. One download runs at a time; Cancel stops it at the next
megabyte and keeps what arrived, so Download (then "Resume download") continues from there.
The catalog's DeBERTa verifier is downloaded, exported to ONNX and made active in one action;
without the ``torch`` extra its row says so and Download is off. The optional 1.5B generator,
when its offline packages are not installed, is downloaded from the Hub like the others (the
same file, :func:`verifai_desktop.modelstore.from_hub`).

Statuses and tooltips are in the user's words (:mod:`~verifai_desktop.ui.model_texts`): no
package names nor install commands; a failed download says where to copy the model's files
instead (:func:`~verifai_desktop.ui.model_texts.offline_remedy`).
"""

from __future__ import annotations

import dataclasses
import logging

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop import hardware, modelstore
from verifai_desktop.domain import Progress
from verifai_desktop.errors import OfflineError, VerifaiError
from verifai_desktop.hardware import Hardware
from verifai_desktop.modelstore import ModelStatus, Role, format_bytes
from verifai_desktop.settings import Settings
from verifai_desktop.ui.errors import show_error
from verifai_desktop.ui.model_texts import (
    GPU_NOTE,
    LORA_NOTE,
    NEEDS_TIP,
    ROLE_ORDER,
    ROLE_TITLES,
    SHA_TEXT,
    STAGE_TEXT,
    offline_remedy,
    status_text,
    status_tip,
)
from verifai_desktop.ui.tasks import Task, TaskContext, TaskRunner
from verifai_desktop.verify.export import export_verifier

log = logging.getLogger(__name__)

COLUMNS = ("Model", "Status", "Size", "Licence", "sha256", "Device")
(COL_NAME, COL_STATUS, COL_SIZE, COL_LICENCE, COL_SHA, COL_DEVICE) = range(len(COLUMNS))
PROGRESS_STEPS = 1000  # QProgressBar holds an int: bytes are shown in thousandths


class ModelsDialog(QDialog):
    """Lists the catalog per role and downloads, activates and deletes models.

    Signals:
        settings_changed(Settings): a model was made active, or an active one deleted; the
            settings were saved.
        hardware_detected(Hardware): where the models run, detected on a worker.
        models_listed(): the tree was (re)filled.

    Args:
        runner: the window's task runner (downloads stop with it).
        settings: the settings in effect.
        parent: the main window.
    """

    settings_changed = Signal(object)
    hardware_detected = Signal(object)
    models_listed = Signal()

    def __init__(
        self, runner: TaskRunner, settings: Settings, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.setObjectName("modelsDialog")
        self.resize(980, 560)
        self.runner = runner
        self.settings = settings
        self.rows: dict[str, ModelStatus] = {}
        self.hardware: Hardware | None = None
        self.download_task: Task[Settings | None] | None = None
        self.downloading = ""  # name of the model being downloaded
        self.delete_box: QMessageBox | None = None

        self.tree = QTreeWidget()
        self.tree.setObjectName("modelsTree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(COL_NAME, QHeaderView.ResizeMode.ResizeToContents)
        # The status is read whole (it says what to do); the last column takes what is left.
        header.setSectionResizeMode(COL_STATUS, QHeaderView.ResizeMode.ResizeToContents)
        self.role_items: dict[Role, QTreeWidgetItem] = {}
        for role in ROLE_ORDER:
            item = QTreeWidgetItem([ROLE_TITLES[role]])
            bold = QFont(item.font(COL_NAME))
            bold.setBold(True)
            item.setFont(COL_NAME, bold)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(item)
            item.setFirstColumnSpanned(True)
            self.role_items[role] = item
        self.description = QLabel("")
        self.description.setObjectName("modelDescription")
        self.description.setWordWrap(True)
        self.description.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("downloadButton")
        self.cancel_button = QPushButton("Cancel download")
        self.cancel_button.setObjectName("cancelDownloadButton")
        self.activate_button = QPushButton("Set active")
        self.activate_button.setObjectName("activateButton")
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("deleteButton")
        actions = QHBoxLayout()
        for b in (
            self.download_button,
            self.cancel_button,
            self.activate_button,
            self.delete_button,
        ):
            actions.addWidget(b)
        actions.addStretch(1)

        self.progress_label = QLabel("")
        self.progress_label.setObjectName("downloadStatus")
        self.progress_label.setWordWrap(True)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("downloadProgress")
        self.progress_bar.setRange(0, PROGRESS_STEPS)
        self.progress_bar.setValue(0)
        self.progress_bar.setVisible(False)

        self.hardware_label = QLabel("Detecting devices…")
        self.hardware_label.setObjectName("hardwareInfo")
        self.hardware_label.setWordWrap(True)
        self.hardware_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        hardware_box = QGroupBox("Hardware")
        hl = QVBoxLayout(hardware_box)
        hl.addWidget(self.hardware_label)
        gpu_note = QLabel(GPU_NOTE)
        gpu_note.setStyleSheet("color:#556")
        hl.addWidget(gpu_note)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.description)
        layout.addLayout(actions)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.progress_bar)
        layout.addWidget(hardware_box)
        layout.addWidget(buttons)
        self._connect_signals()
        self._update_buttons()
        self.refresh()
        self.detect_hardware()

    def _connect_signals(self) -> None:
        self.tree.itemSelectionChanged.connect(self.on_selection_changed)
        self.download_button.clicked.connect(self.on_download_clicked)
        self.cancel_button.clicked.connect(self.on_cancel_clicked)
        self.activate_button.clicked.connect(self.on_activate_clicked)
        self.delete_button.clicked.connect(self.on_delete_clicked)

    # ----- listing -------------------------------------------------------------------------

    def refresh(self) -> Task[tuple[ModelStatus, ...]]:
        """List the catalog with its local state on a worker; the tree follows."""
        settings = self.settings

        def work(ctx: TaskContext) -> tuple[ModelStatus, ...]:
            return modelstore.list_models(settings)

        task = self.runner.submit("list models", work)
        task.succeeded.connect(self.on_models_listed)
        task.failed.connect(lambda exc: show_error(self, exc, context="Listing the models"))
        return task

    def detect_hardware(self) -> Task[Hardware]:
        """Find where each model runs, on a worker (imports ONNX Runtime and llama.cpp)."""
        models = self.settings.models

        def work(ctx: TaskContext) -> Hardware:
            return hardware.detect(models)

        task = self.runner.submit("detect hardware", work)
        task.succeeded.connect(self.on_hardware_detected)
        task.failed.connect(lambda exc: show_error(self, exc, context="Detecting the hardware"))
        return task

    @Slot(object)
    def on_models_listed(self, rows: tuple[ModelStatus, ...]) -> None:
        """Fill the tree, keeping the selection."""
        selected = self.selected_name()
        self.rows = {row.entry.name: row for row in rows}
        for role_item in self.role_items.values():
            role_item.takeChildren()
        for row in rows:
            e = row.entry
            item = QTreeWidgetItem()
            item.setData(COL_NAME, Qt.ItemDataRole.UserRole, e.name)
            self.role_items[e.role].addChild(item)
            self._fill(item, row)
        self.tree.expandAll()
        if selected:
            self.select(selected)
        self._update_buttons()
        self.models_listed.emit()

    def _fill(self, item: QTreeWidgetItem, row: ModelStatus) -> None:
        e = row.entry
        item.setText(COL_NAME, e.name)
        item.setText(COL_STATUS, status_text(row))
        item.setText(COL_SIZE, format_bytes(row.size_bytes) if row.size_bytes else "")
        item.setText(COL_LICENCE, e.licence)
        item.setText(COL_SHA, SHA_TEXT[row.sha256] if row.present else "")
        item.setToolTip(COL_SHA, e.sha256 or "the Hub's checksums of each file")
        item.setText(COL_DEVICE, self._device(e.role))
        font = QFont(item.font(COL_NAME))
        font.setBold(row.in_use)
        for col in range(len(COLUMNS)):
            item.setFont(col, font)
        item.setToolTip(COL_NAME, e.description)
        item.setToolTip(COL_STATUS, status_tip(row))

    def _device(self, role: Role) -> str:
        if self.hardware is None:
            return ""
        look = "generator" if role == "lora" else role
        return next((d.device for d in self.hardware.devices if d.role == look), "")

    @Slot(object)
    def on_hardware_detected(self, hw: Hardware) -> None:
        """Show the runtimes and the device of each model."""
        self.hardware = hw
        self.hardware_label.setText("\n".join(hw.lines()))
        for name in self.rows:
            item = self.item(name)
            if item is not None:
                item.setText(COL_DEVICE, self._device(self.rows[name].entry.role))
        self.hardware_detected.emit(hw)

    # ----- selection -----------------------------------------------------------------------

    def item(self, name: str) -> QTreeWidgetItem | None:
        """The tree row of model ``name``."""
        for role_item in self.role_items.values():
            for i in range(role_item.childCount()):
                child = role_item.child(i)
                if child is not None and child.data(COL_NAME, Qt.ItemDataRole.UserRole) == name:
                    return child
        return None

    def select(self, name: str) -> None:
        """Select the row of model ``name``."""
        item = self.item(name)
        if item is not None:
            self.tree.setCurrentItem(item)

    def selected_name(self) -> str:
        """The selected model's catalog name, or ``""``."""
        items = self.tree.selectedItems()
        if not items:
            return ""
        return str(items[0].data(COL_NAME, Qt.ItemDataRole.UserRole) or "")

    def selected(self) -> ModelStatus | None:
        """The selected model's state, or None."""
        return self.rows.get(self.selected_name())

    @Slot()
    def on_selection_changed(self) -> None:
        """Describe the selected model and enable what can be done with it."""
        row = self.selected()
        if row is None:
            self.description.setText("")
        else:
            e = row.entry
            needs = NEEDS_TIP if row.needs else ""
            parts = [e.description, needs, LORA_NOTE if e.role == "lora" else ""]
            self.description.setText("\n".join(p for p in parts if p))
        self._update_buttons()

    def _update_buttons(self) -> None:
        row = self.selected()
        busy = self.download_task is not None and self.download_task.is_running
        self.cancel_button.setEnabled(busy)
        if row is None:
            for b in (self.download_button, self.activate_button, self.delete_button):
                b.setEnabled(False)
            self.download_button.setText("Download")
            return
        e = row.entry
        can_download = row.from_hub and not row.downloaded and not row.needs
        self.download_button.setEnabled(can_download and not busy)
        text = "Resume download" if row.partial_bytes else "Download"
        if e.export:
            text += ", convert and use"
        self.download_button.setText(text)
        self.download_button.setToolTip(NEEDS_TIP if row.needs else "")
        can_activate = (
            row.present and not row.in_use and row.sha256 != "mismatch" and e.role != "lora"
        )
        self.activate_button.setEnabled(can_activate)
        self.activate_button.setToolTip(LORA_NOTE if e.role == "lora" else "")
        deletable = row.downloaded or row.partial_bytes > 0
        self.delete_button.setEnabled(deletable and not (busy and self.downloading == e.name))

    # ----- download ------------------------------------------------------------------------

    @Slot()
    def on_download_clicked(self) -> None:
        """Download the selected model."""
        row = self.selected()
        if row is not None:
            self.download(row.entry.name)

    def download(self, name: str) -> Task[Settings | None] | None:
        """Download (or resume) model ``name`` on a worker; a model to export to ONNX is
        exported and made active in the same task.

        Returns:
            The task, or None when another download is running.
        """
        if self.download_task is not None and self.download_task.is_running:
            return None
        row = self.rows[name]
        activate = bool(row.entry.export)
        settings = self.settings

        def work(ctx: TaskContext) -> Settings | None:
            modelstore.pull(
                name, exporter=export_verifier, progress=ctx.progress, cancel=ctx.cancel
            )
            if not activate:
                return None
            _, new = modelstore.use(name, role=row.entry.role, settings=settings)
            return new

        task = self.runner.submit(f"download {name}", work)
        self.download_task = task
        self.downloading = name
        self.progress_bar.setRange(0, PROGRESS_STEPS)
        self.progress_bar.setValue(0)
        self.progress_bar.setVisible(True)
        resuming = " (resuming)" if row.partial_bytes else ""
        self.progress_label.setText(f"Downloading {name}{resuming}…")
        task.progressed.connect(self.on_download_progress)
        task.succeeded.connect(lambda new: self.on_download_succeeded(name, new))
        task.failed.connect(lambda exc: self.on_download_failed(name, exc))
        task.cancelled.connect(lambda: self.on_download_cancelled(name))
        task.finished.connect(self.on_download_finished)
        self._update_buttons()
        return task

    @Slot(object)
    def on_download_progress(self, p: Progress) -> None:
        """Show the stage and the bytes (or steps) done of the running download."""
        what = STAGE_TEXT.get(p.stage, p.stage)
        name = self.downloading
        if p.total:
            self.progress_bar.setRange(0, PROGRESS_STEPS)
            self.progress_bar.setValue(min(PROGRESS_STEPS, p.done * PROGRESS_STEPS // p.total))
        else:
            self.progress_bar.setRange(0, 0)  # busy indicator: size unknown
        if p.unit == "bytes":
            amount = format_bytes(p.done) + (f" of {format_bytes(p.total)}" if p.total else "")
        else:
            amount = f"step {p.done} of {p.total}" if p.total else ""
        detail = f" ({p.message})" if p.message and p.unit == "bytes" else ""
        text = f"{what} {name}{detail}: {amount}" if p.stage != "export" else f"{what}: {amount}"
        if self.download_task is not None and self.download_task.context.cancel.is_set():
            text = "Cancelling… " + text
        self.progress_label.setText(text)

    @Slot()
    def on_cancel_clicked(self) -> None:
        """Stop the running download at its next megabyte; what arrived is kept."""
        if self.download_task is not None and self.download_task.is_running:
            self.download_task.cancel()
            self.progress_label.setText(
                f"Cancelling the download of {self.downloading} (what arrived is kept)…"
            )
            self.cancel_button.setEnabled(False)

    def on_download_succeeded(self, name: str, new: Settings | None) -> None:
        """The model is in place (and, for an exported verifier, active; a downloaded 1.5B is
        in use at once where the settings name no generator, which the window is told)."""
        self.progress_bar.setRange(0, PROGRESS_STEPS)
        self.progress_bar.setValue(PROGRESS_STEPS)
        role = self.rows[name].entry.role
        if new is not None:
            self._settings_saved(new)
            self.progress_label.setText(f"{name} is downloaded, checked and in use.")
        elif modelstore.in_use(self.settings, role) == name:
            # The settings name no generator: the downloaded 1.5B is now the best installed.
            self._settings_saved(self.settings)
            self.progress_label.setText(f"{name} is downloaded, checked and in use.")
        else:
            self.progress_label.setText(f"{name} is downloaded and checked; Set active to use it.")

    def on_download_failed(self, name: str, exc: object) -> None:
        """Show why the download stopped; what arrived stays for the next try."""
        self.progress_label.setText(f"The download of {name} stopped.")
        if isinstance(exc, BaseException):
            remedy = offline_remedy(self.rows[name].entry) if isinstance(exc, OfflineError) else ""
            show_error(self, exc, context=f"Downloading {name}", remedy=remedy)

    def on_download_cancelled(self, name: str) -> None:
        """Say how much was kept for the next download."""
        self.progress_label.setText(
            f"Download of {name} cancelled; what arrived is kept and Resume download continues it."
        )

    @Slot()
    def on_download_finished(self) -> None:
        """Re-list the models (present, partial bytes, checksum state)."""
        self.downloading = ""
        self._update_buttons()
        self.refresh()

    # ----- activate and delete -------------------------------------------------------------

    @Slot()
    def on_activate_clicked(self) -> None:
        """Make the selected model the one used for its role."""
        row = self.selected()
        if row is None:
            return
        try:
            _, new = modelstore.use(row.entry.name, role=row.entry.role, settings=self.settings)
        except (OSError, VerifaiError) as exc:
            show_error(self, exc, context=f"Using {row.entry.name}")
            return
        self._settings_saved(new)
        self.refresh()

    def _settings_saved(self, new: Settings) -> None:
        # The models part changed on disk; the window's other state (ui) is the caller's.
        self.settings = dataclasses.replace(self.settings, models=new.models)
        self.settings_changed.emit(self.settings)
        self.detect_hardware()

    @Slot()
    def on_delete_clicked(self) -> None:
        """Ask before deleting the selected downloaded model."""
        row = self.selected()
        if row is None:
            return
        e = row.entry
        size = row.size_bytes if row.downloaded else row.partial_bytes
        box = QMessageBox(self)
        box.setObjectName("confirmDelete")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Delete model")
        box.setText(f"Delete {e.name} ({format_bytes(size)}) from this computer?")
        info = "Download it again to use it."
        if row.in_use:
            default = modelstore.fallback(e) or "none"
            info = f"It is in use; the {e.role} goes back to {default}. " + info
        box.setInformativeText(info)
        yes = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        yes.setObjectName("confirmDeleteButton")
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        name = e.name
        box.finished.connect(lambda _r: self._on_delete_answered(box, yes, name))
        self.delete_box = box
        box.open()

    def _on_delete_answered(self, box: QMessageBox, yes: object, name: str) -> None:
        self.delete_box = None
        if box.clickedButton() is yes:
            self.delete(name)

    def delete(self, name: str) -> Task[Settings]:
        """Delete downloaded model ``name`` on a worker (no confirmation)."""
        settings = self.settings

        def work(ctx: TaskContext) -> Settings:
            return modelstore.delete(name, settings=settings)

        task = self.runner.submit(f"delete {name}", work)
        task.succeeded.connect(lambda new: self.on_deleted(name, new))
        task.failed.connect(lambda exc: show_error(self, exc, context=f"Deleting {name}"))
        return task

    def on_deleted(self, name: str, new: Settings) -> None:
        """Follow a deletion: settings (if the model was active) and the tree."""
        self.progress_label.setText(f"{name} was deleted.")
        self.progress_bar.setVisible(False)
        if new.models != self.settings.models:
            self._settings_saved(new)
        self.refresh()

    # ----- closing -------------------------------------------------------------------------

    def done(self, result: int) -> None:
        """Closing stops a running download (what arrived is kept for the next one)."""
        if self.download_task is not None and self.download_task.is_running:
            self.download_task.cancel()
        super().done(result)
