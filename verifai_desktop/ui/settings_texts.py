"""The settings dialog's wording: group titles, labels and tooltips in the user's words, and
the colour presets' dev figures in plain words (:func:`preset_figures_text`).

Kept apart from :mod:`verifai_desktop.ui.settings_dialog`, which builds the fields; every label
carries the tooltip of its field (hovering either explains it).
"""

from __future__ import annotations

from collections.abc import Mapping

from verifai_desktop.presentation import CONFLICT_GLYPH, UNSUPPORTED_TEXT
from verifai_desktop.settings import VerifyPreset

GROUPS = ("Answers", "Verification", "Models and devices", "Privacy", "Advanced")
"""The dialog's pages, in order."""

PASSAGES_LABEL = "Passages per answer:"
PASSAGES_TIP = (
    "Up to this many of the best passages are given to the generator: as many as fit the "
    "model's reading budget (Advanced), best first. Each answer says how many were given, "
    "and why fewer when the reading budget cut them."
)
PASSAGES_NOTE = "Up to k, as many as fit the model's reading budget."
PASSAGES_PREFIX = "up to "
ABSTAIN_LABEL = "Answer only above this closeness:"
ABSTAIN_TIP = (
    "How close (0 to 1) the best passage must be to the question for the app to answer; "
    "below it, the app says 'Not found in your documents' and writes nothing"
)
GENERATOR_LABEL = "Generator:"
GENERATOR_TIP = (
    "The model that writes the answers: a model of Models (Edit → Models…) or a .gguf file; "
    "empty: the best one installed"
)
GENERATOR_PLACEHOLDER = "automatic: the best generator installed"
VERIFIER_LABEL = "Verifier:"
VERIFIER_TIP = (
    "The model that checks each sentence of an answer against its passages: a model of "
    "Models or a verifier folder"
)
EMBEDDER_LABEL = "Embedder:"
EMBEDDER_TIP = "The model that finds passages by meaning; collections made from now on use it"
GPU_LABEL = "GPU layers:"
GPU_TIP = (
    "How much of the generator runs on the graphics card (GPU): all of it (fastest, when a "
    "supported GPU is present, else the processor is used), none (the processor only), or "
    "this many of its layers (when the GPU's memory does not hold them all)"
)
GPU_CHOICES = (("all", "All"), ("none", "None (processor only)"), ("some", "This many:"))
"""The GPU layers choices: (key, shown text); ``all`` is -1, ``none`` 0, ``some`` N layers."""
MODE_LABEL = "Search by:"
MODE_TIP = (
    "How passages are found: words and meaning together (hybrid), the question's words "
    "(lexical) or its meaning (semantic)"
)
LEXICAL_LABEL = "Weight of words:"
LEXICAL_TIP = "In hybrid search, how much matching words count (normalised BM25)"
SEMANTIC_LABEL = "Weight of meaning:"
SEMANTIC_TIP = "In hybrid search, how much matching meaning counts (normalised cosine)"
RRF_LABEL = "Rank fusion constant:"
RRF_TIP = (
    "How ranks of the two searches are merged in the fused ranking: larger values flatten "
    "the difference between top and lower ranks (k of Reciprocal Rank Fusion, Cormack et "
    "al., 2009)"
)
BUDGET_CPU_LABEL = "Reading budget, processor:"
BUDGET_CPU_TIP = (
    "How many tokens of passages the generator reads when it runs on the processor (about "
    "¾ of a word each); reading takes most of the wait, so more passages mean a longer wait"
)
BUDGET_GPU_LABEL = "Reading budget, GPU:"
BUDGET_GPU_TIP = (
    "How many tokens of passages the generator reads when it runs on a GPU, where reading is "
    "much faster"
)
PREMISE_LABEL = "Compare each sentence with:"
PREMISE_TIP = (
    "What each answer sentence is checked against: windows of 1-3 sentences of a "
    "passage, the best deciding (sentences), or the whole passage at once (passage)"
)
SERVER_URL_LABEL = "Server address:"
SERVER_MODEL_LABEL = "Model on the server:"
SERVER_MODEL_TIP = "The name the server gives the model that writes the answers"
SERVER_KEY_LABEL = "API key variable:"
SERVER_KEY_TIP = (
    "Environment variable holding the API key (else the system keyring's "
    "verifai-desktop entry for the host; else no key is sent)"
)
SERVER_CONSTRAINT_LABEL = "Citations:"
BUDGET_CHECK_LABEL = "Passages checked per sentence:"
PRESET_LABEL = "Colour preset:"
SUPPORT_LABEL = "Green from this probability:"
CONTRADICT_LABEL = "Red from this probability:"

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

RERANK_TEXT = "Rerank passages by evidence (slower)"
RERANK_TIP = (
    "The verifier reads the best passages found against the question and puts those that "
    "bear on it first; each source then shows its evidence probability. Adds a few seconds "
    "per question on a laptop CPU"
)

KEEP_HISTORY_TEXT = "Keep every verified answer in the collection's history"
KEEP_HISTORY_TIP = (
    "Past questions are listed in the History tab, reopen as they were verified, take your "
    "marks on verdicts and can be exported as audit records; kept in the collection's folder"
)
CITATIONS_LABEL = "Cite sources:"
CITATIONS_TIP = (
    "author-year: a document added from a .bib file or a Zotero library is cited "
    "\u201c(Cohan et al., 2020, p. 3)\u201d and the answer ends with its references (APA), "
    "other documents by file name; numeric: [1] markers throughout"
)
WATCH_TEXT = "Follow the folders of the open collection"
WATCH_TIP = (
    "While the app runs, files added to or changed in the folders a collection was built from "
    "are indexed and deleted ones removed; a folder on a disk that is not connected is left "
    "as it was"
)
SERVER_TITLE = "Answers written by a server (OpenAI-compatible)"
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


TECHNICAL_NAMES: dict[str, str] = {
    PASSAGES_LABEL: "retrieval.k",
    ABSTAIN_LABEL: "verify.abstain_threshold",
    GENERATOR_LABEL: "models.generator",
    VERIFIER_LABEL: "models.verifier",
    EMBEDDER_LABEL: "models.embedder",
    GPU_LABEL: "models.n_gpu_layers",
    MODE_LABEL: "retrieval.mode",
    LEXICAL_LABEL: "retrieval.lexical_weight",
    SEMANTIC_LABEL: "retrieval.semantic_weight",
    RRF_LABEL: "retrieval.rrf_k",
    BUDGET_CPU_LABEL: "generation.prompt_passage_tokens",
    BUDGET_GPU_LABEL: "generation.prompt_passage_tokens_gpu",
    PREMISE_LABEL: "verify.premise",
    SERVER_URL_LABEL: "server.base_url",
    SERVER_MODEL_LABEL: "server.model",
    SERVER_KEY_LABEL: "server.api_key_env",
    SERVER_CONSTRAINT_LABEL: "server.constrain",
    BUDGET_CHECK_LABEL: "verify.conflict_budget",
    PRESET_LABEL: "verify.preset",
    SUPPORT_LABEL: "verify.support_threshold",
    CONTRADICT_LABEL: "verify.contradict_threshold",
    RECITE_TEXT: "verify.recite",
    CONFLICT_SEARCH_TEXT: "verify.conflict_search",
    SECOND_OPINION_TEXT: "verify.second_opinion",
    ABSTAIN_UNSUPPORTED_TEXT: "verify.abstain_unsupported",
    RERANK_TEXT: "retrieval.rerank",
    KEEP_HISTORY_TEXT: "history.keep",
    WATCH_TEXT: "watch.enabled",
}
"""Each field's label (or check box text) -> its technical name in ``settings.toml``."""


def with_technical_name(tip: str, key: str) -> str:
    """``tip`` followed by the setting's technical name: what ``settings.toml``, the command
    line's ``--set`` style and the README call it."""
    return f"{tip}\n\nIn settings.toml: {key}" if tip else f"In settings.toml: {key}"
