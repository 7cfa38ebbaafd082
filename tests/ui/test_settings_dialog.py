"""The settings dialog edits the verification settings of issue 11 (re-citation, the
contradiction search and its budget, abstention by evidence) and those of issue 16 (answer
history, folder watching, an OpenAI-compatible generation server, with the warning that
passages leave the machine) and saves them as TOML."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QFormLayout, QLabel, QMessageBox
from pytestqt.qtbot import QtBot

from verifai_desktop.generate.openai_server import leaves_machine_warning
from verifai_desktop.settings import (
    MAX_CONFLICT_BUDGET,
    SERVER_CONSTRAINTS,
    Settings,
    load_settings,
)
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.settings_dialog import SettingsDialog


def _dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    return dialog


def test_verify_settings_load_into_the_dialog_and_round_trip_through_toml(qtbot: QtBot) -> None:
    base = load_settings()
    assert (
        base.verify.recite,
        base.verify.conflict_search,
        base.verify.conflict_budget,
        base.verify.abstain_unsupported,
    ) == (True, True, 6, True)
    off = dataclasses.replace(
        base,
        verify=dataclasses.replace(
            base.verify,
            recite=False,
            conflict_search=False,
            conflict_budget=17,
            abstain_unsupported=False,
        ),
    )
    dialog = _dialog(qtbot, off)
    assert (
        dialog.recite.isChecked(),
        dialog.conflict_search.isChecked(),
        dialog.conflict_budget.value(),
        dialog.abstain_unsupported.isChecked(),
    ) == (False, False, 17, False)
    # The budget only matters while the search is on.
    assert not dialog.conflict_budget.isEnabled()
    assert dialog.edited_settings().verify == off.verify

    dialog.recite.setChecked(True)
    dialog.conflict_search.setChecked(True)
    assert dialog.conflict_budget.isEnabled()
    dialog.conflict_budget.setValue(MAX_CONFLICT_BUDGET + 5)  # clamped to the allowed range
    dialog.abstain_unsupported.setChecked(True)
    assert not dialog.second_opinion.isChecked()  # off by default
    dialog.second_opinion.setChecked(True)
    dialog.accept()
    assert dialog.result_settings is not None
    saved = load_settings().verify
    assert saved.second_opinion
    assert (
        saved.recite,
        saved.conflict_search,
        saved.conflict_budget,
        saved.abstain_unsupported,
    ) == (True, True, MAX_CONFLICT_BUDGET, True)
    assert saved == dialog.result_settings.verify

    # And back off again, through a fresh dialog on what was saved.
    again = _dialog(qtbot, load_settings())
    assert again.conflict_budget.value() == MAX_CONFLICT_BUDGET
    again.recite.setChecked(False)
    again.abstain_unsupported.setChecked(False)
    again.conflict_budget.setValue(1)
    again.accept()
    saved = load_settings().verify
    assert (
        saved.recite,
        saved.conflict_search,
        saved.conflict_budget,
        saved.abstain_unsupported,
    ) == (False, True, 1, False)


def test_verify_settings_are_named_in_the_apps_words(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, load_settings())
    assert (
        dialog.recite.text(),
        dialog.conflict_search.text(),
        dialog.abstain_unsupported.text(),
    ) == (
        "Re-cite sentences to the passage that supports them",
        "Search all documents for contradictions",
        "Decline to answer when nothing is supported",
    )
    form = dialog.conflict_budget.parentWidget().layout()
    assert isinstance(form, QFormLayout)
    label = form.labelForField(dialog.conflict_budget)
    assert isinstance(label, QLabel) and label.text() == "Passages checked per sentence:"
    assert "Your documents do not support an answer" in dialog.abstain_unsupported.toolTip()
    assert "contradict" in dialog.conflict_search.toolTip()
    assert "each sentence" in dialog.conflict_budget.toolTip()
    assert "cited" in dialog.recite.toolTip()


def test_history_watch_and_server_settings_round_trip_through_toml(qtbot: QtBot) -> None:
    base = load_settings()
    assert (base.history.keep, base.watch.enabled, base.server.base_url) == (True, True, "")
    dialog = _dialog(qtbot, base)
    assert (dialog.keep_history.isChecked(), dialog.watch.isChecked()) == (True, True)
    assert dialog.server_constrain.currentText() == "auto"
    assert [dialog.server_constrain.itemText(i) for i in range(4)] == list(SERVER_CONSTRAINTS)
    assert dialog.server_warning.isHidden()  # generated on this computer

    dialog.keep_history.setChecked(False)
    dialog.watch.setChecked(False)
    dialog.server_url.setText("http://127.0.0.1:8080/v1")
    dialog.server_model.setText("qwen2.5-3b")
    dialog.server_key_env.setText("MY_KEY")
    dialog.server_constrain.setCurrentText("grammar")
    assert dialog.server_warning.isHidden()  # a local server: nothing leaves
    dialog.accept()
    assert dialog.result_settings is not None
    saved = load_settings()
    assert (saved.history.keep, saved.watch.enabled) == (False, False)
    assert (
        saved.server.base_url,
        saved.server.model,
        saved.server.api_key_env,
        saved.server.constrain,
    ) == ("http://127.0.0.1:8080/v1", "qwen2.5-3b", "MY_KEY", "grammar")
    assert saved == dataclasses.replace(dialog.result_settings, ui=saved.ui)

    again = _dialog(qtbot, saved)
    assert (again.keep_history.isChecked(), again.watch.isChecked()) == (False, False)
    assert (again.server_url.text(), again.server_model.text()) == (
        "http://127.0.0.1:8080/v1",
        "qwen2.5-3b",
    )
    assert again.server_constrain.currentText() == "grammar"


def test_a_remote_server_is_warned_of_and_a_bad_one_is_refused(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, load_settings())
    dialog.server_url.setText("https://llm.example.com/v1")
    assert not dialog.server_warning.isHidden()
    assert dialog.server_warning.text() == "⚠ " + leaves_machine_warning(
        "https://llm.example.com/v1"
    )
    assert "leave this machine" in dialog.server_warning.text()

    # No model named: refused with the setting named, the dialog stays open.
    dialog.accept()
    assert dialog.result_settings is None
    (box,) = [b for b in dialog.findChildren(QMessageBox, "errorBox") if b.isVisible()]
    assert box.windowTitle() == "Invalid setting"
    assert box.text() == (
        "Checking the settings: invalid setting server.model: ''; name the server's model"
    )
    assert dialog.pages.currentIndex() == dialog.server_page_index
    box.close()
    dialog.server_url.setText("llm.example.com")
    dialog.server_model.setText("big")
    dialog.accept()
    boxes = [b for b in dialog.findChildren(QMessageBox, "errorBox") if b.isVisible()]
    assert [b.text() for b in boxes] == [
        "Checking the settings: invalid setting server.base_url: 'llm.example.com'; "
        "use an http:// or https:// address"
    ]
    boxes[0].close()
    assert load_settings().server.base_url == ""  # nothing was saved

    # Accepted, the window says so plainly for as long as it is set.
    dialog.server_url.setText("https://llm.example.com/v1")
    dialog.accept()
    assert dialog.result_settings is not None
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    assert window.server_warning.isVisibleTo(window)
    assert window.server_warning.text() == dialog.server_warning.text()
    window.apply_settings(Settings())
    assert not window.server_warning.isVisibleTo(window)
    window.apply_settings(dialog.result_settings)
    assert window.server_warning.text().startswith(
        "⚠ Answers are generated by the server at llm.example.com"
    )


def test_reranking_is_switched_on_in_answers_and_saved(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, load_settings())
    assert not dialog.rerank.isChecked()  # off by default
    assert "evidence probability" in dialog.rerank.toolTip()
    dialog.rerank.setChecked(True)
    dialog.accept()
    assert load_settings().retrieval.rerank
    assert _dialog(qtbot, load_settings()).rerank.isChecked()
