"""The settings dialog edits the verification settings of issue 11 (re-citation, the
contradiction search and its budget, abstention by evidence) and saves them as TOML."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QFormLayout, QLabel
from pytestqt.qtbot import QtBot

from verifai_desktop.settings import MAX_CONFLICT_BUDGET, Settings, load_settings
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
    dialog.accept()
    assert dialog.result_settings is not None
    saved = load_settings().verify
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
