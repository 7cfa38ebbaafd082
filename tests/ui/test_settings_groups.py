"""The settings dialog in the user's words (issue 29): five pages (Answers, Verification,
Models and devices, Privacy, Advanced) holding their fields, a tooltip on every label (not only
on its field), "Passages per answer" read as "up to k, as many as fit the reading budget", and
GPU layers chosen as all / none / this many, saved as -1 / 0 / N; and the answer line says how
many passages were given and when the reading budget cut them."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QWidget
from pytestqt.qtbot import QtBot

from tests.ui.conftest import make_answer
from verifai_desktop.settings import GenerationSettings, ModelSettings, Settings, load_settings
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.settings_dialog import SettingsDialog
from verifai_desktop.ui.settings_texts import (
    GROUPS,
    PASSAGES_NOTE,
    PASSAGES_TIP,
    TECHNICAL_NAMES,
    with_technical_name,
)


def _dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    return dialog


def _form_of(field: QWidget) -> QFormLayout:
    parent = field.parentWidget()
    assert parent is not None
    form = parent.layout()
    assert isinstance(form, QFormLayout)
    return form


def _field(form: QFormLayout, row: int) -> QWidget:
    """The widget of a form row: the field, or the first widget of its layout."""
    item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
    assert item is not None
    widget = item.widget()
    if widget is None:
        layout = item.layout()
        assert layout is not None
        first = layout.itemAt(0)
        assert first is not None
        widget = first.widget()
    assert widget is not None
    return widget


def test_the_settings_are_grouped_in_five_pages(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, load_settings())
    assert [dialog.pages.tabText(i) for i in range(dialog.pages.count())] == list(GROUPS)
    assert GROUPS == ("Answers", "Verification", "Models and devices", "Privacy", "Advanced")
    expected: dict[str, tuple[QWidget, ...]] = {
        "Answers": (
            dialog.k,
            dialog.abstain_threshold,
            dialog.abstain_unsupported,
            dialog.watch,
        ),
        "Verification": (
            dialog.preset,
            dialog.support_threshold,
            dialog.contradict_threshold,
            dialog.premise,
            dialog.recite,
            dialog.conflict_search,
            dialog.conflict_budget,
            dialog.second_opinion,
        ),
        "Models and devices": (
            dialog.generator,
            dialog.verifier,
            dialog.embedder,
            dialog.gpu_layers,
            dialog.gpu_layer_count,
        ),
        "Privacy": (
            dialog.keep_history,
            dialog.server_url,
            dialog.server_model,
            dialog.server_key_env,
            dialog.server_constrain,
        ),
        "Advanced": (
            dialog.budget_cpu,
            dialog.budget_gpu,
            dialog.mode,
            dialog.lexical_weight,
            dialog.semantic_weight,
            dialog.rrf_k,
        ),
    }
    for group, fields in expected.items():
        assert [dialog.group_of(f) for f in fields] == [group] * len(fields), group
    assert dialog.pages.tabText(dialog.server_page_index) == "Privacy"


def test_every_label_and_check_box_carries_a_tooltip(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, load_settings())
    labelled = 0
    for form in dialog.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            if label is None:
                continue
            widget = label.widget()
            assert isinstance(widget, QLabel)
            assert widget.toolTip() != "", widget.text()
            assert _field(form, row).toolTip() == widget.toolTip(), widget.text()
            labelled += 1
    assert labelled == 22  # issue 43: "Cite sources:"
    for box in dialog.findChildren(QCheckBox):
        assert box.toolTip() != "", box.text()
    # Every setting's tooltip ends with its technical name (labels are in the user's words).
    for form in dialog.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            text = label.widget().text() if label is not None else ""
            if text in TECHNICAL_NAMES:
                assert label.widget().toolTip().endswith(f"settings.toml: {TECHNICAL_NAMES[text]}")
    form = _form_of(dialog.generator)
    assert _field(form, 0) is dialog.generator
    label_item = form.itemAt(0, QFormLayout.ItemRole.LabelRole)
    assert label_item is not None
    generator_label = label_item.widget()
    assert isinstance(generator_label, QLabel)
    assert generator_label.text() == "Generator:"
    assert generator_label.toolTip() == dialog.generator.toolTip() != ""


def test_passages_read_up_to_k_as_many_as_fit_the_reading_budget(qtbot: QtBot) -> None:
    base = load_settings()
    dialog = _dialog(qtbot, base)
    assert dialog.k.text() == f"up to {base.retrieval.k}"
    note = dialog.findChild(QLabel, "passagesNote")
    assert note is not None
    assert note.text() == PASSAGES_NOTE == "Up to k, as many as fit the model's reading budget."
    label = _form_of(dialog.k).labelForField(dialog.k)
    assert isinstance(label, QLabel)
    # In the user's words, the technical name on hover.
    assert (label.text(), label.toolTip()) == (
        "Passages per answer:",
        with_technical_name(PASSAGES_TIP, "retrieval.k"),
    )
    assert "reading budget" in PASSAGES_TIP and "how many were given" in PASSAGES_TIP
    # The reading budgets are on Advanced and saved.
    assert (dialog.budget_cpu.value(), dialog.budget_gpu.value()) == (700, 4000)
    dialog.k.setValue(8)
    dialog.budget_cpu.setValue(900)
    dialog.budget_gpu.setValue(3000)
    dialog.accept()
    saved = load_settings()
    assert saved.retrieval.k == 8
    assert saved.generation == GenerationSettings(900, 3000)


@pytest.mark.parametrize(
    ("layers", "choice", "shown"),
    [(-1, "all", "All"), (0, "none", "None (processor only)"), (7, "some", "This many:")],
)
def test_gpu_layers_all_none_n_round_trip(
    qtbot: QtBot, layers: int, choice: str, shown: str
) -> None:
    base = load_settings()
    assert base.models.n_gpu_layers == -1  # all, by default
    start = dataclasses.replace(base, models=ModelSettings(n_gpu_layers=layers))
    dialog = _dialog(qtbot, start)
    assert [dialog.gpu_layers.itemText(i) for i in range(3)] == [
        "All",
        "None (processor only)",
        "This many:",
    ]
    assert (dialog.gpu_layers.currentData(), dialog.gpu_layers.currentText()) == (choice, shown)
    assert dialog.gpu_layer_count.isHidden() == (choice != "some")
    assert dialog.edited_settings().models.n_gpu_layers == layers

    # Chosen in the dialog, saved as -1 / 0 / N and shown so again.
    for pick, count, value in (("some", 12, 12), ("none", 12, 0), ("all", 12, -1), ("some", 3, 3)):
        dialog = _dialog(qtbot, load_settings())
        dialog.gpu_layers.setCurrentIndex(dialog.gpu_layers.findData(pick))
        assert dialog.gpu_layer_count.isHidden() == (pick != "some")
        dialog.gpu_layer_count.setValue(count)
        dialog.accept()
        assert load_settings().models.n_gpu_layers == value
        again = _dialog(qtbot, load_settings())
        assert again.gpu_layers.currentData() == pick
        if pick == "some":
            assert again.gpu_layer_count.value() == count


def test_the_answer_line_says_how_many_passages_the_reading_budget_let_through(
    qtbot: QtBot,
) -> None:
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    cut = dataclasses.replace(make_answer(), passages_left_out=8, timings_ms={"retrieve": 210.0})
    window.on_answer_ready(cut)
    assert window.answer_info.text() == (
        "1 supported, 1 partially supported, 1 contradicted, 1 no evidence, 1 unreferenced"
        " · 2 of 10 passages given (reading budget) · retrieve 0.2 s"
    )
    window.on_answer_ready(dataclasses.replace(cut, passages_left_out=0))
    assert " · 2 passages given · " in window.answer_info.text()
