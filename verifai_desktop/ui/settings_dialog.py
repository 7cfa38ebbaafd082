"""The settings dialog in the user's words, on five pages: Answers, Verification, Models and
devices, Privacy, Advanced (:data:`~verifai_desktop.ui.settings_texts.GROUPS`); saved as TOML.

Every label carries its field's tooltip (:mod:`~verifai_desktop.ui.settings_texts` holds the
wording). "Passages per answer" reads "up to k": the generator gets as many of the k best as
fit its reading budget (``generation.prompt_passage_tokens``, on Advanced), and each answer
says how many it got. GPU layers are chosen as all / none / this many
(:func:`gpu_layers_choice`, ``models.n_gpu_layers`` -1 / 0 / N).

The colour preset (``verify.preset``) names the per-label thresholds of the verifier's model
card (:mod:`verifai_desktop.verify.presets`); the dialog says what each one reached on the
card's dev sets (:func:`~verifai_desktop.ui.settings_texts.preset_figures_text`) and enables the
two thresholds only where they apply (Custom, or a verifier whose card lacks the preset).
"""

from __future__ import annotations

import dataclasses
import logging

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.citation_settings import STYLES as CITATION_STYLES
from verifai_desktop.errors import ModelLoadError, ModelNotFound, SettingsError
from verifai_desktop.generate.openai_server import leaves_machine_warning
from verifai_desktop.settings import (
    MAX_CONFLICT_BUDGET,
    MAX_GPU_LAYERS,
    MAX_PROMPT_PASSAGE_TOKENS,
    MIN_PROMPT_PASSAGE_TOKENS,
    SEARCH_MODES,
    SERVER_CONSTRAINTS,
    VERIFY_PRESETS,
    Settings,
    VerifyPreset,
    check_server,
    check_watch,
    save_settings,
)
from verifai_desktop.ui import settings_texts as t
from verifai_desktop.ui.errors import show_error
from verifai_desktop.verify.presets import Presets

log = logging.getLogger(__name__)


def _spin(lo: int, hi: int, value: int, tip: str) -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setValue(value)
    s.setToolTip(tip)
    return s


def _dspin(lo: float, hi: float, value: float, tip: str, step: float = 0.05) -> QDoubleSpinBox:
    s = QDoubleSpinBox()
    s.setRange(lo, hi)
    s.setDecimals(2)
    s.setSingleStep(step)
    s.setValue(value)
    s.setToolTip(tip)
    return s


def _check(text: str, checked: bool, tip: str) -> QCheckBox:
    c = QCheckBox(text)
    c.setChecked(checked)
    c.setToolTip(tip)
    return c


def _line(text: str, tip: str) -> QLineEdit:
    e = QLineEdit(text)
    e.setToolTip(tip)
    return e


def gpu_layers_choice(n_gpu_layers: int) -> tuple[str, int]:
    """``models.n_gpu_layers`` as the dialog shows it: ``("all", 0)`` for -1 (every layer,
    when llama.cpp has a GPU), ``("none", 0)`` for 0, ``("some", N)`` for N layers."""
    if n_gpu_layers < 0:
        return "all", 0
    return ("none", 0) if n_gpu_layers == 0 else ("some", n_gpu_layers)


def gpu_layers_value(choice: str, count: int) -> int:
    """The inverse of :func:`gpu_layers_choice`: -1 (all), 0 (none) or ``count`` (some)."""
    return {"all": -1, "none": 0}.get(choice, count)


def verifier_presets(name: str) -> Presets | None:
    """The presets of verifier ``name``'s model card, without loading the model.

    Args:
        name: ``models.verifier``: a catalog name or a verifier folder.

    Returns:
        The card's presets (empty when it has none), or None when the verifier is not found
        or its card is not valid JSON.
    """
    # Deferred: the window must not import the model code before it is needed.
    from verifai_desktop.verify.nli import get_verifier

    try:
        return get_verifier(name).card.presets
    except (ModelNotFound, ModelLoadError) as exc:
        log.info("no presets for verifier %r: %s", name, exc)
        return None


def _row(form: QFormLayout, text: str, field: QWidget | QLayout, tip: str = "") -> QLabel:
    """Add ``field`` beside a label that carries its tooltip (hovering either explains it).

    Args:
        form: the page's form.
        text: the label.
        field: the field, or a layout holding it (with a Browse button, a spin box).
        tip: the tooltip, when ``field`` is a layout; else the field's own.
    """
    label = QLabel(text)
    label.setToolTip(tip or (field.toolTip() if isinstance(field, QWidget) else ""))
    if isinstance(field, QWidget):
        label.setBuddy(field)
    form.addRow(label, field)
    return label


def _add_technical_names(dialog: QWidget) -> None:
    """Append each setting's technical name to the tooltips of its label (or check box) and
    field (:data:`~verifai_desktop.ui.settings_texts.TECHNICAL_NAMES`): labels in the
    user's words, the name ``settings.toml`` uses on hover."""
    for box in dialog.findChildren(QCheckBox):
        key = t.TECHNICAL_NAMES.get(box.text())
        if key is not None:
            box.setToolTip(t.with_technical_name(box.toolTip(), key))
    for form in dialog.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            label = label_item.widget() if label_item is not None else None
            key = t.TECHNICAL_NAMES.get(label.text()) if isinstance(label, QLabel) else None
            if label is None or key is None:
                continue
            tip = t.with_technical_name(label.toolTip(), key)
            label.setToolTip(tip)
            field_item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            inner = field_item.layout() if field_item is not None else None
            first = inner.itemAt(0) if inner is not None and inner.count() else field_item
            field = first.widget() if first is not None else None
            if field is not None:
                field.setToolTip(tip)


def _with_button(field: QWidget, button: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addWidget(field, 1)
    row.addWidget(button)
    return row


def _page(pages: QTabWidget, title: str) -> QFormLayout:
    page = QWidget()
    page.setObjectName(f"settingsPage{pages.count()}")
    form = QFormLayout(page)
    pages.addTab(page, title)
    return form


class SettingsDialog(QDialog):
    """Edits a :class:`Settings`; :meth:`accept` saves it with ``save_settings``.

    Attributes:
        result_settings: the settings saved on accept (``None`` before).
        pages: one tab per group of :data:`~verifai_desktop.ui.settings_texts.GROUPS`.
        server_page_index: the tab holding the server fields (shown when one is refused).
    """

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self.original = settings
        self.result_settings: Settings | None = None
        m, r, v, g = settings.models, settings.retrieval, settings.verify, settings.generation
        self.pages = QTabWidget()
        answers, verification, models, privacy, advanced = (
            _page(self.pages, title) for title in t.GROUPS
        )

        # -- Answers -------------------------------------------------------------------
        self.k = _spin(1, 50, r.k, t.PASSAGES_TIP)
        self.k.setPrefix(t.PASSAGES_PREFIX)
        _row(answers, t.PASSAGES_LABEL, self.k)
        passages_note = QLabel(t.PASSAGES_NOTE)
        passages_note.setObjectName("passagesNote")
        passages_note.setToolTip(t.PASSAGES_TIP)
        passages_note.setStyleSheet("color:#445")
        answers.addRow(passages_note)
        self.abstain_threshold = _dspin(0.0, 1.0, v.abstain_threshold, t.ABSTAIN_TIP, 0.01)
        _row(answers, t.ABSTAIN_LABEL, self.abstain_threshold)
        self.abstain_unsupported = _check(
            t.ABSTAIN_UNSUPPORTED_TEXT, v.abstain_unsupported, t.ABSTAIN_UNSUPPORTED_TIP
        )
        answers.addRow(self.abstain_unsupported)
        self.rerank = _check(t.RERANK_TEXT, r.rerank, t.RERANK_TIP)
        answers.addRow(self.rerank)
        self.watch = _check(t.WATCH_TEXT, settings.watch.enabled, t.WATCH_TIP)
        answers.addRow(self.watch)
        self.citation_style = QComboBox()
        self.citation_style.addItems(list(CITATION_STYLES))
        self.citation_style.setCurrentText(settings.citations.style)
        self.citation_style.setToolTip(t.CITATIONS_TIP)
        _row(answers, t.CITATIONS_LABEL, self.citation_style)

        # -- Verification --------------------------------------------------------------
        self.preset = QComboBox()
        for name in VERIFY_PRESETS:
            self.preset.addItem(t.PRESET_TITLES[name], name)
        self.preset.setCurrentIndex(VERIFY_PRESETS.index(v.preset))
        self.preset.setToolTip(t.PRESET_TIP)
        self.preset_figures = QLabel("")
        self.preset_figures.setObjectName("presetFigures")
        self.preset_figures.setWordWrap(True)
        self.preset_figures.setStyleSheet("color:#445")
        self.support_threshold = _dspin(0.0, 1.0, v.support_threshold, t.SUPPORT_TIP)
        self.contradict_threshold = _dspin(0.0, 1.0, v.contradict_threshold, t.CONTRADICT_TIP)
        # The thresholds of Custom, kept while a preset's own are shown in the fields.
        self.custom_thresholds = (v.support_threshold, v.contradict_threshold)
        self._thresholds_editable = False
        self.presets: Presets | None = verifier_presets(m.verifier)
        self.premise = QComboBox()
        self.premise.addItems(["sentences", "passage"])
        self.premise.setCurrentText(v.premise)
        self.premise.setToolTip(t.PREMISE_TIP)
        self.recite = _check(t.RECITE_TEXT, v.recite, t.RECITE_TIP)
        self.conflict_search = _check(
            t.CONFLICT_SEARCH_TEXT, v.conflict_search, t.CONFLICT_SEARCH_TIP
        )
        self.conflict_budget = _spin(
            1, MAX_CONFLICT_BUDGET, v.conflict_budget, t.CONFLICT_BUDGET_TIP
        )
        self.conflict_budget.setEnabled(v.conflict_search)
        self.second_opinion = _check(t.SECOND_OPINION_TEXT, v.second_opinion, t.SECOND_OPINION_TIP)
        _row(verification, t.PRESET_LABEL, self.preset)
        verification.addRow(self.preset_figures)
        _row(verification, t.SUPPORT_LABEL, self.support_threshold)
        _row(verification, t.CONTRADICT_LABEL, self.contradict_threshold)
        _row(verification, t.PREMISE_LABEL, self.premise)
        verification.addRow(self.recite)
        verification.addRow(self.conflict_search)
        _row(verification, t.BUDGET_CHECK_LABEL, self.conflict_budget)
        verification.addRow(self.second_opinion)

        # -- Models and devices --------------------------------------------------------
        self.generator = _line(m.generator, t.GENERATOR_TIP)
        self.generator.setPlaceholderText(t.GENERATOR_PLACEHOLDER)
        gen_browse = QPushButton("Browse…")
        gen_browse.clicked.connect(self.on_browse_generator)
        self.verifier = _line(m.verifier, t.VERIFIER_TIP)
        ver_browse = QPushButton("Browse…")
        ver_browse.clicked.connect(self.on_browse_verifier)
        self.embedder = _line(m.embedder, t.EMBEDDER_TIP)
        choice, count = gpu_layers_choice(m.n_gpu_layers)
        self.gpu_layers = QComboBox()
        for key, text in t.GPU_CHOICES:
            self.gpu_layers.addItem(text, key)
        self.gpu_layers.setToolTip(t.GPU_TIP)
        self.gpu_layers.setCurrentIndex(self.gpu_layers.findData(choice))
        self.gpu_layer_count = _spin(1, MAX_GPU_LAYERS, count or 1, t.GPU_TIP)
        self.gpu_layer_count.setSuffix(" layers")
        gpu_row = QHBoxLayout()
        gpu_row.addWidget(self.gpu_layers)
        gpu_row.addWidget(self.gpu_layer_count)
        gpu_row.addStretch(1)
        _row(models, t.GENERATOR_LABEL, _with_button(self.generator, gen_browse), t.GENERATOR_TIP)
        _row(models, t.VERIFIER_LABEL, _with_button(self.verifier, ver_browse), t.VERIFIER_TIP)
        _row(models, t.EMBEDDER_LABEL, self.embedder)
        _row(models, t.GPU_LABEL, gpu_row, t.GPU_TIP)

        # -- Privacy -------------------------------------------------------------------
        self.keep_history = _check(t.KEEP_HISTORY_TEXT, settings.history.keep, t.KEEP_HISTORY_TIP)
        privacy.addRow(self.keep_history)
        srv = settings.server
        self.server_url = _line(srv.base_url, t.SERVER_URL_TIP)
        self.server_url.setPlaceholderText("empty: answers are written on this computer")
        self.server_model = _line(srv.model, t.SERVER_MODEL_TIP)
        self.server_key_env = _line(srv.api_key_env, t.SERVER_KEY_TIP)
        self.server_constrain = QComboBox()
        self.server_constrain.addItems(list(SERVER_CONSTRAINTS))
        self.server_constrain.setCurrentText(srv.constrain)
        self.server_constrain.setToolTip(t.CONSTRAINT_TIP)
        self.server_warning = QLabel("")
        self.server_warning.setObjectName("serverWarning")
        self.server_warning.setWordWrap(True)
        self.server_warning.setStyleSheet(t.WARNING_STYLE)
        server_box = QGroupBox(t.SERVER_TITLE)
        sf = QFormLayout(server_box)
        _row(sf, t.SERVER_URL_LABEL, self.server_url)
        _row(sf, t.SERVER_MODEL_LABEL, self.server_model)
        _row(sf, t.SERVER_KEY_LABEL, self.server_key_env)
        _row(sf, t.SERVER_CONSTRAINT_LABEL, self.server_constrain)
        sf.addRow(self.server_warning)
        privacy.addRow(server_box)
        self.server_page_index = t.GROUPS.index("Privacy")

        # -- Advanced ------------------------------------------------------------------
        self.mode = QComboBox()
        self.mode.addItems(list(SEARCH_MODES))
        self.mode.setCurrentText(r.mode)
        self.mode.setToolTip(t.MODE_TIP)
        self.lexical_weight = _dspin(0.0, 1.0, r.lexical_weight, t.LEXICAL_TIP)
        self.semantic_weight = _dspin(0.0, 1.0, r.semantic_weight, t.SEMANTIC_TIP)
        self.rrf_k = _spin(1, 1000, r.rrf_k, t.RRF_TIP)
        lo, hi = MIN_PROMPT_PASSAGE_TOKENS, MAX_PROMPT_PASSAGE_TOKENS  # check_generation's
        self.budget_cpu = _spin(lo, hi, g.prompt_passage_tokens, t.BUDGET_CPU_TIP)
        self.budget_gpu = _spin(lo, hi, g.prompt_passage_tokens_gpu, t.BUDGET_GPU_TIP)
        for budget in (self.budget_cpu, self.budget_gpu):
            budget.setSuffix(" tokens")
            budget.setSingleStep(100)
        _row(advanced, t.BUDGET_CPU_LABEL, self.budget_cpu)
        _row(advanced, t.BUDGET_GPU_LABEL, self.budget_gpu)
        _row(advanced, t.MODE_LABEL, self.mode)
        _row(advanced, t.LEXICAL_LABEL, self.lexical_weight)
        _row(advanced, t.SEMANTIC_LABEL, self.semantic_weight)
        _row(advanced, t.RRF_LABEL, self.rrf_k)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        layout.addWidget(buttons)
        _add_technical_names(self)
        self._connect_signals()
        self.on_preset_changed()
        self.on_gpu_layers_chosen()
        self.on_server_url_changed(srv.base_url)

    def _connect_signals(self) -> None:
        self.conflict_search.toggled.connect(self.conflict_budget.setEnabled)
        self.preset.currentIndexChanged.connect(self.on_preset_changed)
        for threshold in (self.support_threshold, self.contradict_threshold):
            threshold.valueChanged.connect(self.on_threshold_edited)
        self.verifier.editingFinished.connect(self.on_verifier_changed)
        self.gpu_layers.currentIndexChanged.connect(self.on_gpu_layers_chosen)
        self.server_url.textChanged.connect(self.on_server_url_changed)

    def group_of(self, field: QWidget) -> str:
        """The title of the page that holds ``field`` (``""`` if none does)."""
        for i in range(self.pages.count()):
            page = self.pages.widget(i)
            if page is not None and page.isAncestorOf(field):
                return self.pages.tabText(i)
        return ""

    @Slot()
    def on_gpu_layers_chosen(self) -> None:
        """The layer count is shown for "This many" only."""
        self.gpu_layer_count.setHidden(self.gpu_layers.currentData() != "some")

    def edited_settings(self) -> Settings:
        """The settings as currently edited (not saved)."""
        s = self.original
        mode = self.mode.currentText()
        premise = self.premise.currentText()
        return dataclasses.replace(
            s,
            models=dataclasses.replace(
                s.models,
                generator=self.generator.text().strip(),
                verifier=self.verifier.text().strip(),
                embedder=self.embedder.text().strip(),
                n_gpu_layers=gpu_layers_value(
                    str(self.gpu_layers.currentData()), self.gpu_layer_count.value()
                ),
            ),
            generation=dataclasses.replace(
                s.generation,
                prompt_passage_tokens=self.budget_cpu.value(),
                prompt_passage_tokens_gpu=self.budget_gpu.value(),
            ),
            retrieval=dataclasses.replace(
                s.retrieval,
                k=self.k.value(),
                mode=mode,  # type: ignore[arg-type]
                lexical_weight=round(self.lexical_weight.value(), 4),
                semantic_weight=round(self.semantic_weight.value(), 4),
                rrf_k=self.rrf_k.value(),
                rerank=self.rerank.isChecked(),
            ),
            verify=dataclasses.replace(
                s.verify,
                preset=self.chosen_preset(),
                # Custom's own, also while a preset is chosen: they apply again on Custom.
                support_threshold=round(self.custom_thresholds[0], 4),
                contradict_threshold=round(self.custom_thresholds[1], 4),
                premise=premise,  # type: ignore[arg-type]
                abstain_threshold=round(self.abstain_threshold.value(), 4),
                recite=self.recite.isChecked(),
                conflict_search=self.conflict_search.isChecked(),
                conflict_budget=self.conflict_budget.value(),
                abstain_unsupported=self.abstain_unsupported.isChecked(),
                second_opinion=self.second_opinion.isChecked(),
            ),
            history=dataclasses.replace(s.history, keep=self.keep_history.isChecked()),
            watch=dataclasses.replace(s.watch, enabled=self.watch.isChecked()),
            citations=dataclasses.replace(s.citations, style=self.citation_style.currentText()),
            server=dataclasses.replace(
                s.server,
                base_url=self.server_url.text().strip(),
                model=self.server_model.text().strip(),
                api_key_env=self.server_key_env.text().strip(),
                constrain=self.server_constrain.currentText(),  # type: ignore[arg-type]
            ),
        )

    def chosen_preset(self) -> VerifyPreset:
        """The colour preset chosen in the combo."""
        return VERIFY_PRESETS[self.preset.currentIndex()]

    @Slot()
    def on_preset_changed(self) -> None:
        """Show the chosen preset's thresholds and dev figures; the threshold fields are
        editable only where they apply (Custom, or a verifier whose card lacks the preset)."""
        name = self.chosen_preset()
        presets = self.presets or {}
        chosen = presets.get(name) if name != "custom" else None
        # Not editable while the values are set: they are the preset's, not edits of Custom's.
        self._thresholds_editable = False
        if chosen:
            self.support_threshold.setValue(min(1.0, chosen["support_threshold"]))
            self.contradict_threshold.setValue(min(1.0, chosen["contradict_threshold"]))
        else:
            self.support_threshold.setValue(self.custom_thresholds[0])
            self.contradict_threshold.setValue(self.custom_thresholds[1])
        self._thresholds_editable = not chosen
        self.support_threshold.setEnabled(not chosen)
        self.contradict_threshold.setEnabled(not chosen)
        if chosen:
            text = t.preset_figures_text(chosen)
        elif self.presets is None:
            text = t.NO_VERIFIER_TEXT
        elif name == "custom":
            text = t.CUSTOM_TEXT
        elif not presets:
            text = t.NO_PRESETS_TEXT
        else:
            text = (
                f"This verifier has no {t.PRESET_TITLES[name]} preset: the thresholds below apply."
            )
        self.preset_figures.setText(text)

    @Slot()
    def on_threshold_edited(self) -> None:
        """Keep the thresholds typed in (they are Custom's while the fields are editable)."""
        if self._thresholds_editable:
            self.custom_thresholds = (
                self.support_threshold.value(),
                self.contradict_threshold.value(),
            )

    @Slot()
    def on_verifier_changed(self) -> None:
        """Read the presets of the verifier now named and show the chosen one's."""
        self.presets = verifier_presets(self.verifier.text().strip())
        self.on_preset_changed()

    @Slot(str)
    def on_server_url_changed(self, text: str) -> None:
        """Say plainly, under the server fields, when passages would leave the machine."""
        warning = leaves_machine_warning(text.strip())
        self.server_warning.setText(f"⚠ {warning}" if warning else "")
        self.server_warning.setVisible(bool(warning))

    def accept(self) -> None:
        """Check and save the edited settings and close; on an invalid value or a failure to
        save, show the error and stay open."""
        settings = self.edited_settings()
        try:
            check_server(settings.server)
            check_watch(settings.watch)
        except SettingsError as exc:
            self.pages.setCurrentIndex(self.server_page_index)
            show_error(self, exc, context="Checking the settings")
            return
        try:
            save_settings(settings)
        except OSError as exc:
            show_error(self, exc, context="Saving settings")
            return
        self.result_settings = settings
        super().accept()

    @Slot()
    def on_browse_generator(self) -> None:
        """Pick a GGUF file."""
        path, _ = QFileDialog.getOpenFileName(self, "Generator model", "", "GGUF models (*.gguf)")
        if path:
            self.generator.setText(path)

    @Slot()
    def on_browse_verifier(self) -> None:
        """Pick a verifier folder."""
        path = QFileDialog.getExistingDirectory(self, "Verifier folder (ONNX)")
        if path:
            self.verifier.setText(path)
            self.on_verifier_changed()
