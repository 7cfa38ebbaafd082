"""The settings dialog: models, retrieval, verification and abstention; saved as TOML.

The colour preset (``verify.preset``) names the per-label thresholds of the verifier's model
card (:mod:`verifai_desktop.verify.presets`); the dialog says what each one reached on the
card's dev sets (:func:`preset_figures_text`) and enables the two thresholds only where they
apply (Custom, or a verifier whose card lacks the preset).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping

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
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from verifai_desktop.errors import ModelLoadError, ModelNotFound, SettingsError
from verifai_desktop.generate.openai_server import leaves_machine_warning
from verifai_desktop.presentation import CONFLICT_GLYPH, UNSUPPORTED_TEXT
from verifai_desktop.settings import (
    MAX_CONFLICT_BUDGET,
    SEARCH_MODES,
    SERVER_CONSTRAINTS,
    VERIFY_PRESETS,
    Settings,
    VerifyPreset,
    check_server,
    check_watch,
    save_settings,
)
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


RECITE_TEXT = "Re-cite sentences to the passage that supports them"
RECITE_TIP = (
    "Check every sentence against all the passages given to the model, not only the ones it "
    "cited, and cite the passages that support it instead of the ones that do not"
)
CONFLICT_SEARCH_TEXT = "Search all documents for contradictions"
CONFLICT_SEARCH_TIP = (
    "After answering, search the whole collection for passages that contradict each sentence "
    f"and mark such sentences with {CONFLICT_GLYPH}"
)
CONFLICT_BUDGET_TIP = (
    "How many candidate passages the contradiction search checks for each sentence; "
    "more finds more contradictions and takes longer"
)
SECOND_OPINION_TEXT = "Ask the generator to re-read figures and negations (slower)"
SECOND_OPINION_TIP = (
    "Each green sentence with a figure or a negation, or that the verifier barely decided, is "
    "judged again by the generator; where it disagrees the sentence is shown unsure. Adds a "
    "few seconds per such sentence; the bundled 0.5B raises false alarms, the 1.5B fewer"
)
ABSTAIN_UNSUPPORTED_TEXT = "Decline to answer when nothing is supported"
ABSTAIN_UNSUPPORTED_TIP = (
    "When no sentence of the answer is supported by the passages, say "
    f"“{UNSUPPORTED_TEXT}” and show the closest evidence; the generated answer is "
    "shown only on request"
)

KEEP_HISTORY_TEXT = "Keep every verified answer in the collection's history"
KEEP_HISTORY_TIP = (
    "Past questions are listed in the History tab, reopen as they were verified, take your "
    "marks on verdicts and can be exported as audit records; kept in the collection's folder"
)
WATCH_TEXT = "Follow the folders of the open collection"
WATCH_TIP = (
    "While the app runs, files added to or changed in the folders a collection was built from "
    "are indexed and deleted ones removed; a folder on a disk that is not connected is left "
    "as it was"
)
SERVER_TITLE = "Generation server (OpenAI-compatible)"
SERVER_URL_TIP = (
    "API root of a vLLM, Ollama, llama.cpp or NIM server, e.g. http://127.0.0.1:8080/v1; "
    "empty: answers are generated on this computer with the generator above"
)
CONSTRAINT_TIP = (
    "How citations are kept valid: grammar (llama.cpp's server), guided_grammar (vLLM), "
    "none (invalid citations are dropped), auto (asks the server)"
)
WARNING_STYLE = "color:#8a4b00;background:#fff4e0;padding:4px;border-radius:3px"

PRESET_TITLES: dict[VerifyPreset, str] = {
    "strict": "Strict",
    "balanced": "Balanced",
    "lenient": "Lenient",
    "custom": "Custom",
}
PRESET_TIP = (
    "How sure the verifier must be before a sentence is shown green (supported) or red "
    "(contradicted); below that it is shown unsure, with its best guess in the hover card. "
    "Strict shows fewer colours that are right more often, Lenient more colours that are "
    "wrong more often. The presets' thresholds were chosen on dev sets and come with the "
    "verifier (its model card); Custom uses the two thresholds below."
)
SUPPORT_TIP = (
    "P(SUPPORT) at or above which a sentence is shown green (with the Custom preset, or a "
    "verifier without presets)"
)
CONTRADICT_TIP = (
    "P(CONTRADICT) at or above which a sentence is shown red (with the Custom preset, or a "
    "verifier without presets)"
)
CUSTOM_TEXT = "Custom: the two thresholds below decide green and red; below them, unsure."
NO_PRESETS_TEXT = "This verifier has no presets: the thresholds below apply."
NO_VERIFIER_TEXT = (
    "The verifier named above cannot be read, nor its presets: the thresholds below apply."
)
DEV_SETS = (("scifact_dev", "SciFact dev"), ("healthver_dev", "HealthVer dev"))
"""Prefixes of the dev figures a preset may carry, and how the dialog names them."""


def _never(values: Mapping[str, float], key: str) -> bool:
    # The card writes 1.01 for a label no threshold made precise enough on dev.
    return values.get(key, 0.0) > 1.0


def preset_figures_text(values: Mapping[str, float]) -> str:
    """A preset's dev precision and coverage in plain words.

    E.g. "On SciFact dev, green is right 81% of the time (41% of supported pairs shown green);
    red is right 57% of the time (32% of contradicted pairs shown red); 20% shown unsure."
    A threshold above 1 (the card's 1.01) reads "green is never shown" / "red is never shown".

    Args:
        values: one preset of a verifier's model card (``presets`` in ``model_card.json``,
            written by ``models/choose_thresholds.py``): ``support_threshold``,
            ``contradict_threshold`` and, per dev set of :data:`DEV_SETS`, fractions 0-1
            ``<set>_support_precision``, ``<set>_support_coverage``,
            ``<set>_contradict_precision``, ``<set>_contradict_coverage`` and optionally
            ``<set>_unsure_share``.

    Returns:
        One sentence per dev set with all four figures; without any, what is never shown and
        that the card gives no dev figures.
    """
    green_never = _never(values, "support_threshold")
    red_never = _never(values, "contradict_threshold")
    sentences = []
    for prefix, title in DEV_SETS:
        keys = [f"{prefix}_{k}" for k in ("support_precision", "support_coverage")]
        keys += [f"{prefix}_{k}" for k in ("contradict_precision", "contradict_coverage")]
        if not all(k in values for k in keys):
            continue
        sp, sc, cp, cc = (values[k] for k in keys)
        green = (
            "green is never shown"
            if green_never
            else f"green is right {sp:.0%} of the time ({sc:.0%} of supported pairs shown green)"
        )
        red = (
            "red is never shown"
            if red_never
            else f"red is right {cp:.0%} of the time ({cc:.0%} of contradicted pairs shown red)"
        )
        unsure = values.get(f"{prefix}_unsure_share")
        tail = f"; {unsure:.0%} shown unsure" if unsure is not None else ""
        sentences.append(f"On {title}, {green}; {red}{tail}.")
    if sentences:
        return " ".join(sentences)
    never = [f"{c} is never shown." for c, n in (("Green", green_never), ("Red", red_never)) if n]
    return " ".join([*never, "The verifier's card gives no dev figures for this preset."])


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


def _row(form: QFormLayout, text: str, field: QWidget) -> QLabel:
    """Add ``field`` beside a label that carries its tooltip (hovering either explains it)."""
    label = QLabel(text)
    label.setToolTip(field.toolTip())
    label.setBuddy(field)
    form.addRow(label, field)
    return label


class SettingsDialog(QDialog):
    """Edits a :class:`Settings`; :meth:`accept` saves it with ``save_settings``.

    Attributes:
        result_settings: the settings saved on accept (``None`` before).
    """

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(520)
        self.original = settings
        self.result_settings: Settings | None = None
        m, r, v = settings.models, settings.retrieval, settings.verify

        self.generator = QLineEdit(m.generator)
        self.generator.setToolTip(
            "Catalog name or path of a GGUF file; empty: the best bundled generator installed"
        )
        self.generator.setPlaceholderText("automatic: the best bundled generator installed")
        gen_browse = QPushButton("Browse…")
        gen_browse.clicked.connect(self.on_browse_generator)
        gen_row = QHBoxLayout()
        gen_row.addWidget(self.generator, 1)
        gen_row.addWidget(gen_browse)
        self.verifier = QLineEdit(m.verifier)
        self.verifier.setToolTip("Catalog name or folder of an ONNX NLI verifier")
        ver_browse = QPushButton("Browse…")
        ver_browse.clicked.connect(self.on_browse_verifier)
        ver_row = QHBoxLayout()
        ver_row.addWidget(self.verifier, 1)
        ver_row.addWidget(ver_browse)
        self.embedder = QLineEdit(m.embedder)
        self.embedder.setToolTip("sentence-transformers name or path (new collections use it)")
        self.gpu_layers = _spin(
            -1,
            999,
            m.n_gpu_layers,
            "Layers offloaded to the GPU; -1 = all when CUDA is available, 0 = CPU only",
        )
        models_box = QGroupBox("Models (load on first use)")
        mf = QFormLayout(models_box)
        mf.addRow("Generator (GGUF):", gen_row)
        mf.addRow("Verifier:", ver_row)
        _row(mf, "Embedder:", self.embedder)
        _row(mf, "GPU layers:", self.gpu_layers)

        self.k = _spin(1, 50, r.k, "Passages given to the generator")
        self.mode = QComboBox()
        self.mode.addItems(list(SEARCH_MODES))
        self.mode.setCurrentText(r.mode)
        self.lexical_weight = _dspin(
            0.0, 1.0, r.lexical_weight, "Weight of normalised BM25 in hybrid mode"
        )
        self.semantic_weight = _dspin(
            0.0, 1.0, r.semantic_weight, "Weight of normalised cosine in hybrid mode"
        )
        self.rrf_k = _spin(1, 1000, r.rrf_k, "k of Reciprocal Rank Fusion (Cormack et al., 2009)")
        retrieval_box = QGroupBox("Retrieval")
        rf = QFormLayout(retrieval_box)
        _row(rf, "Passages (k):", self.k)
        _row(rf, "Mode:", self.mode)
        _row(rf, "Lexical weight:", self.lexical_weight)
        _row(rf, "Semantic weight:", self.semantic_weight)
        _row(rf, "RRF k:", self.rrf_k)

        self.preset = QComboBox()
        for name in VERIFY_PRESETS:
            self.preset.addItem(PRESET_TITLES[name], name)
        self.preset.setCurrentIndex(VERIFY_PRESETS.index(v.preset))
        self.preset.setToolTip(PRESET_TIP)
        self.preset_figures = QLabel("")
        self.preset_figures.setObjectName("presetFigures")
        self.preset_figures.setWordWrap(True)
        self.preset_figures.setStyleSheet("color:#445")
        self.support_threshold = _dspin(0.0, 1.0, v.support_threshold, SUPPORT_TIP)
        self.contradict_threshold = _dspin(0.0, 1.0, v.contradict_threshold, CONTRADICT_TIP)
        # The thresholds of Custom, kept while a preset's own are shown in the fields.
        self.custom_thresholds = (v.support_threshold, v.contradict_threshold)
        self._thresholds_editable = False
        self.presets: Presets | None = verifier_presets(m.verifier)
        self.premise = QComboBox()
        self.premise.addItems(["sentences", "passage"])
        self.premise.setCurrentText(v.premise)
        self.premise.setToolTip(
            "What each answer sentence is checked against: windows of 1-3 sentences of a "
            "passage, the best deciding (sentences), or the whole passage at once (passage)"
        )
        self.abstain_threshold = _dspin(
            0.0,
            1.0,
            v.abstain_threshold,
            "Best cosine below which the app answers 'Not found in your documents'",
            0.01,
        )
        self.recite = _check(RECITE_TEXT, v.recite, RECITE_TIP)
        self.conflict_search = _check(CONFLICT_SEARCH_TEXT, v.conflict_search, CONFLICT_SEARCH_TIP)
        self.conflict_budget = _spin(1, MAX_CONFLICT_BUDGET, v.conflict_budget, CONFLICT_BUDGET_TIP)
        self.conflict_budget.setEnabled(v.conflict_search)
        self.abstain_unsupported = _check(
            ABSTAIN_UNSUPPORTED_TEXT, v.abstain_unsupported, ABSTAIN_UNSUPPORTED_TIP
        )
        self.second_opinion = _check(SECOND_OPINION_TEXT, v.second_opinion, SECOND_OPINION_TIP)
        verify_box = QGroupBox("Verification and abstention")
        vf = QFormLayout(verify_box)
        _row(vf, "Colour preset:", self.preset)
        vf.addRow(self.preset_figures)
        _row(vf, "Support threshold:", self.support_threshold)
        _row(vf, "Contradiction threshold:", self.contradict_threshold)
        _row(vf, "Premise:", self.premise)
        vf.addRow(self.recite)
        vf.addRow(self.conflict_search)
        _row(vf, "Passages checked per sentence:", self.conflict_budget)
        _row(vf, "Abstention threshold:", self.abstain_threshold)
        vf.addRow(self.abstain_unsupported)
        vf.addRow(self.second_opinion)
        self.conflict_search.toggled.connect(self.conflict_budget.setEnabled)
        self.preset.currentIndexChanged.connect(self.on_preset_changed)
        self.support_threshold.valueChanged.connect(self.on_threshold_edited)
        self.contradict_threshold.valueChanged.connect(self.on_threshold_edited)
        self.verifier.editingFinished.connect(self.on_verifier_changed)
        self.on_preset_changed()

        self.keep_history = _check(KEEP_HISTORY_TEXT, settings.history.keep, KEEP_HISTORY_TIP)
        self.watch = _check(WATCH_TEXT, settings.watch.enabled, WATCH_TIP)
        data_box = QGroupBox("History and folders")
        df = QFormLayout(data_box)
        df.addRow(self.keep_history)
        df.addRow(self.watch)

        srv = settings.server
        self.server_url = QLineEdit(srv.base_url)
        self.server_url.setPlaceholderText("empty: generate on this computer")
        self.server_url.setToolTip(SERVER_URL_TIP)
        self.server_model = QLineEdit(srv.model)
        self.server_model.setToolTip("The model name the server knows")
        self.server_key_env = QLineEdit(srv.api_key_env)
        self.server_key_env.setToolTip(
            "Environment variable holding the API key (else the system keyring's "
            "verifai-desktop entry for the host; else no key is sent)"
        )
        self.server_constrain = QComboBox()
        self.server_constrain.addItems(list(SERVER_CONSTRAINTS))
        self.server_constrain.setCurrentText(srv.constrain)
        self.server_constrain.setToolTip(CONSTRAINT_TIP)
        self.server_warning = QLabel("")
        self.server_warning.setObjectName("serverWarning")
        self.server_warning.setWordWrap(True)
        self.server_warning.setStyleSheet(WARNING_STYLE)
        server_box = QGroupBox(SERVER_TITLE)
        sf = QFormLayout(server_box)
        _row(sf, "Base URL:", self.server_url)
        _row(sf, "Model:", self.server_model)
        _row(sf, "API key variable:", self.server_key_env)
        _row(sf, "Citations:", self.server_constrain)
        sf.addRow(self.server_warning)
        self.server_url.textChanged.connect(self.on_server_url_changed)
        self.on_server_url_changed(srv.base_url)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        # Two pages: the dialog would be taller than a laptop screen with every group on one.
        answers_page = QWidget()
        ap = QVBoxLayout(answers_page)
        ap.addWidget(models_box)
        ap.addWidget(retrieval_box)
        ap.addWidget(verify_box)
        ap.addStretch(1)
        server_page = QWidget()
        sp = QVBoxLayout(server_page)
        sp.addWidget(server_box)
        sp.addWidget(data_box)
        sp.addStretch(1)
        self.pages = QTabWidget()
        self.pages.addTab(answers_page, "Models and verification")
        self.server_page_index = self.pages.addTab(server_page, "Server, history, folders")
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        layout.addWidget(buttons)

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
                n_gpu_layers=self.gpu_layers.value(),
            ),
            retrieval=dataclasses.replace(
                s.retrieval,
                k=self.k.value(),
                mode=mode,  # type: ignore[arg-type]
                lexical_weight=round(self.lexical_weight.value(), 4),
                semantic_weight=round(self.semantic_weight.value(), 4),
                rrf_k=self.rrf_k.value(),
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
            text = preset_figures_text(chosen)
        elif self.presets is None:
            text = NO_VERIFIER_TEXT
        elif name == "custom":
            text = CUSTOM_TEXT
        elif not presets:
            text = NO_PRESETS_TEXT
        else:
            text = f"This verifier has no {PRESET_TITLES[name]} preset: the thresholds below apply."
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
