"""The colour preset in the settings dialog (issue 26): Strict / Balanced / Lenient / Custom,
each preset's dev precision and coverage from the verifier's model card in plain words, the
threshold fields editable only where they apply, and ``verify.preset`` saved as TOML."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from PySide6.QtWidgets import QFormLayout, QLabel, QWidget
from pytestqt.qtbot import QtBot

from verifai_desktop.settings import Settings, load_settings
from verifai_desktop.ui.settings_dialog import SettingsDialog
from verifai_desktop.ui.settings_texts import (
    CONTRADICT_TIP,
    CUSTOM_TEXT,
    NO_PRESETS_TEXT,
    NO_VERIFIER_TEXT,
    PRESET_TIP,
    SUPPORT_TIP,
    preset_figures_text,
    with_technical_name,
)

# As models/choose_thresholds.py writes them: Strict never shows red (1.01), HealthVer beside.
PRESETS = {
    "strict": {
        "support_threshold": 0.9,
        "contradict_threshold": 1.01,
        "scifact_dev_support_precision": 0.912,
        "scifact_dev_support_coverage": 0.213,
        "scifact_dev_contradict_precision": 0.0,
        "scifact_dev_contradict_coverage": 0.0,
        "scifact_dev_unsure_share": 0.574,
    },
    "balanced": {
        "support_threshold": 0.75,
        "contradict_threshold": 0.65,
        "scifact_dev_support_precision": 0.81,
        "scifact_dev_support_coverage": 0.41,
        "scifact_dev_contradict_precision": 0.57,
        "scifact_dev_contradict_coverage": 0.32,
        "scifact_dev_unsure_share": 0.2,
        "healthver_dev_support_precision": 0.64,
        "healthver_dev_support_coverage": 0.12,
        "healthver_dev_contradict_precision": 0.48,
        "healthver_dev_contradict_coverage": 0.25,
    },
    "lenient": {"support_threshold": 0.55, "contradict_threshold": 0.45},
}


def _verifier_folder(root: Path, presets: dict[str, dict[str, float]] | None) -> Path:
    folder = root / "verifier"
    folder.mkdir()
    card: dict[str, object] = {"name": "test-verifier"}
    if presets is not None:
        card["presets"] = presets
    (folder / "model_card.json").write_text(json.dumps(card), encoding="utf-8")
    return folder


def _settings(verifier: str, preset: str = "balanced") -> Settings:
    base = Settings()
    return dataclasses.replace(
        base,
        models=dataclasses.replace(base.models, verifier=verifier),
        verify=dataclasses.replace(
            base.verify,
            preset=preset,  # type: ignore[arg-type]
            support_threshold=0.6,
            contradict_threshold=0.7,
        ),
    )


def _dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    return dialog


def _fields(dialog: SettingsDialog) -> tuple[bool, float, bool, float]:
    s, c = dialog.support_threshold, dialog.contradict_threshold
    return (s.isEnabled(), round(s.value(), 2), c.isEnabled(), round(c.value(), 2))


def _accept(dialog: SettingsDialog) -> tuple[str, float, float]:
    """Save the dialog; the preset and thresholds read back from ``settings.toml``."""
    dialog.accept()
    saved = load_settings().verify
    return (saved.preset, saved.support_threshold, saved.contradict_threshold)


def _label(dialog: SettingsDialog, field: QWidget) -> QLabel:
    parent = field.parentWidget()
    assert parent is not None
    form = parent.layout()
    assert isinstance(form, QFormLayout)
    label = form.labelForField(field)
    assert isinstance(label, QLabel)
    return label


def test_figures_are_said_in_plain_words() -> None:
    assert preset_figures_text(PRESETS["balanced"]) == (
        "On SciFact dev, green is right 81% of the time (41% of supported pairs shown green); "
        "red is right 57% of the time (32% of contradicted pairs shown red); 20% shown unsure. "
        "On HealthVer dev, green is right 64% of the time (12% of supported pairs shown green); "
        "red is right 48% of the time (25% of contradicted pairs shown red)."
    )
    assert preset_figures_text(PRESETS["strict"]) == (
        "On SciFact dev, green is right 91% of the time (21% of supported pairs shown green); "
        "red is never shown; 57% shown unsure."
    )
    assert preset_figures_text(PRESETS["lenient"]) == (
        "The verifier's card gives no dev figures for this preset."
    )
    assert preset_figures_text({"support_threshold": 1.01, "contradict_threshold": 1.01}) == (
        "Green is never shown. Red is never shown. "
        "The verifier's card gives no dev figures for this preset."
    )


def test_preset_shows_its_figures_and_thresholds_and_custom_is_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    folder = _verifier_folder(tmp_path, PRESETS)
    dialog = _dialog(qtbot, _settings(str(folder)))
    combo = dialog.preset
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "Strict",
        "Balanced",
        "Lenient",
        "Custom",
    ]
    assert combo.currentText() == "Balanced"
    # A preset's thresholds are shown, not editable.
    assert _fields(dialog) == (False, 0.75, False, 0.65)
    assert dialog.preset_figures.text() == preset_figures_text(PRESETS["balanced"])

    combo.setCurrentText("Strict")
    assert _fields(dialog) == (False, 0.9, False, 1.0)  # 1.01: never shown
    assert "red is never shown" in dialog.preset_figures.text()

    # Custom: the settings' own thresholds, editable; they survive a look at another preset.
    combo.setCurrentText("Custom")
    assert _fields(dialog) == (True, 0.6, True, 0.7)
    assert dialog.preset_figures.text() == CUSTOM_TEXT
    dialog.support_threshold.setValue(0.85)
    combo.setCurrentText("Lenient")
    assert _fields(dialog) == (False, 0.55, False, 0.45)
    combo.setCurrentText("Custom")
    assert _fields(dialog) == (True, 0.85, True, 0.7)

    # Saving a preset keeps Custom's thresholds for when Custom is chosen again.
    combo.setCurrentText("Strict")
    assert _accept(dialog) == ("strict", 0.85, 0.7)
    again = _dialog(qtbot, load_settings())
    assert again.preset.currentText() == "Strict"
    assert _fields(again) == (False, 0.9, False, 1.0)
    again.preset.setCurrentText("Custom")
    assert _fields(again) == (True, 0.85, True, 0.7)
    again.accept()
    assert load_settings().verify.preset == "custom"


def test_labels_carry_the_tooltips(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = _dialog(qtbot, _settings(str(_verifier_folder(tmp_path, PRESETS))))
    fields: list[tuple[QWidget, str]] = [
        (dialog.preset, with_technical_name(PRESET_TIP, "verify.preset")),
        (dialog.support_threshold, with_technical_name(SUPPORT_TIP, "verify.support_threshold")),
        (
            dialog.contradict_threshold,
            with_technical_name(CONTRADICT_TIP, "verify.contradict_threshold"),
        ),
    ]
    for field, tip in fields:
        assert field.toolTip() == tip
        assert _label(dialog, field).toolTip() == tip
    assert _label(dialog, dialog.preset).text() == "Colour preset:"
    premise_label = _label(dialog, dialog.premise)
    assert premise_label.toolTip() == dialog.premise.toolTip() != ""


def test_a_verifier_without_presets_uses_the_thresholds(qtbot: QtBot, tmp_path: Path) -> None:
    plain = _verifier_folder(tmp_path, None)
    dialog = _dialog(qtbot, _settings(str(plain)))
    assert dialog.preset.currentText() == "Balanced"
    assert dialog.preset_figures.text() == NO_PRESETS_TEXT
    # The thresholds apply whatever the preset, so they can be edited.
    assert _fields(dialog) == (True, 0.6, True, 0.7)
    dialog.preset.setCurrentText("Custom")
    assert dialog.preset_figures.text() == CUSTOM_TEXT
    dialog.preset.setCurrentText("Lenient")
    dialog.contradict_threshold.setValue(0.8)
    assert _accept(dialog) == ("lenient", 0.6, 0.8)

    # Naming a verifier with presets shows them at once; one that cannot be found says so.
    other = tmp_path / "other"
    other.mkdir()
    with_presets = _verifier_folder(other, PRESETS)
    dialog.verifier.setText(str(with_presets))
    dialog.verifier.editingFinished.emit()
    assert _fields(dialog) == (False, 0.55, False, 0.45)
    assert dialog.preset_figures.text() == preset_figures_text(PRESETS["lenient"])
    dialog.verifier.setText(str(tmp_path / "no-such-verifier"))
    dialog.verifier.editingFinished.emit()
    assert dialog.preset_figures.text() == NO_VERIFIER_TEXT
    assert _fields(dialog) == (True, 0.6, True, 0.8)


def test_a_card_lacking_the_chosen_preset_says_so(qtbot: QtBot, tmp_path: Path) -> None:
    folder = _verifier_folder(tmp_path, {"strict": PRESETS["strict"]})
    dialog = _dialog(qtbot, _settings(str(folder), preset="lenient"))
    assert dialog.preset_figures.text() == (
        "This verifier has no Lenient preset: the thresholds below apply."
    )
    assert _fields(dialog) == (True, 0.6, True, 0.7)
