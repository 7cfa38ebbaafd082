"""Checks of settings values before they are used: each names the key, the value and what is
allowed (split from :mod:`verifai_desktop.settings`, which loads, saves and re-exports them)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from verifai_desktop.errors import SettingsError
from verifai_desktop.names import redact_url

if TYPE_CHECKING:
    from verifai_desktop.settings import (
        GenerationSettings,
        IngestSettings,
        ModelSettings,
        RetrievalSettings,
        ServerSettings,
        VerifySettings,
        WatchSettings,
    )


SearchMode = Literal["hybrid", "rrf", "lexical", "semantic"]
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "rrf", "lexical", "semantic")
RerankFusion = Literal["linear", "rrf"]
RERANK_FUSIONS: tuple[RerankFusion, ...] = ("linear", "rrf")
"""How evidence-aware reranking fuses rank and evidence (:func:`verifai_desktop.rerank.fuse`)."""
PremiseGranularity = Literal["passage", "sentences"]
PREMISES: tuple[PremiseGranularity, ...] = ("passage", "sentences")
VerifyPreset = Literal["strict", "balanced", "lenient", "custom"]
VERIFY_PRESETS: tuple[VerifyPreset, ...] = ("strict", "balanced", "lenient", "custom")
"""Named per-label thresholds: the first three are chosen on dev sets for a stated precision
and kept in the verifier's model card (``presets`` in ``model_card.json``); ``custom`` uses
``support_threshold`` and ``contradict_threshold`` as set."""

MAX_CONFLICT_BUDGET = 100
"""Most candidate passages the contradiction search may verify per sentence."""

ServerConstraint = Literal["auto", "grammar", "guided_grammar", "none"]
SERVER_CONSTRAINTS: tuple[ServerConstraint, ...] = ("auto", "grammar", "guided_grammar", "none")


def check_watch(watch: WatchSettings) -> None:
    """Validate the watch settings.

    Raises:
        SettingsError: ``debounce_s`` is not a number from 0.1 to 600 seconds.
    """
    if not (math.isfinite(watch.debounce_s) and 0.1 <= watch.debounce_s <= 600):
        raise _bad("watch.debounce_s", watch.debounce_s, "use 0.1 to 600 seconds")


MAX_SERVER_TIMEOUT_S = 3600.0
"""Longest wait for a generation server to start answering: an hour. Beyond it the HTTP
client's timer overflows (``1e308`` raised ``OverflowError``), and a server that silent is
down."""


def check_server(server: ServerSettings) -> None:
    """Validate the generation server settings.

    Raises:
        SettingsError: ``base_url`` is not an ``http://`` or ``https://`` address, a server
            is set without ``model``, ``constrain`` is unknown or ``timeout_s`` is not a
            number from 1 to :data:`MAX_SERVER_TIMEOUT_S` seconds. The address is named
            without its credentials (:func:`~verifai_desktop.names.redact_url`).
    """
    if server.constrain not in SERVER_CONSTRAINTS:
        raise _bad("server.constrain", server.constrain, f"use one of {SERVER_CONSTRAINTS}")
    t = server.timeout_s
    number = isinstance(t, (int, float)) and not isinstance(t, bool)
    if not (number and math.isfinite(t) and 1.0 <= t <= MAX_SERVER_TIMEOUT_S):
        allowed = f"use a number of seconds from 1 to {MAX_SERVER_TIMEOUT_S:g}"
        raise _bad("server.timeout_s", t, allowed)
    if not server.base_url:
        return
    if not server.base_url.startswith(("http://", "https://")):
        raise _bad(
            "server.base_url", redact_url(server.base_url), "use an http:// or https:// address"
        )
    if not server.model:
        raise _bad("server.model", server.model, "name the server's model")


def _bad(key: str, value: object, allowed: str) -> SettingsError:
    return SettingsError(key, f"{value!r}; {allowed}")


def _check_whole(key: str, value: object, low: int, high: int, unit: str = "") -> None:
    """``value`` is a whole number from ``low`` to ``high`` (the messages of values below
    ``low`` say "of {low} or more", as they always have)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(key, value, f"use a whole number{unit}")
    if value < low:
        raise _bad(key, value, f"use a whole number of {low}{unit} or more")
    if value > high:
        raise _bad(key, value, f"use a whole number from {low} to {high}{unit}")


MAX_GPU_LAYERS = 999
"""Most layers to offload (the settings dialog's limit; no GGUF model has that many)."""
MIN_CONTEXT_TOKENS = 512
"""Smallest generator context: a short prompt and a short answer."""
MAX_CONTEXT_TOKENS = 1_048_576
"""Largest generator context (1M tokens, the longest any GGUF model is trained for)."""
MAX_ANSWER_TOKENS = 32_768
"""Longest answer the generator may write."""


def check_models(models: ModelSettings) -> None:
    """Check model settings before they are used.

    Raises:
        SettingsError: names the key, the value and what is allowed: ``n_gpu_layers`` a
            whole number from -1 (all) to :data:`MAX_GPU_LAYERS`, ``context_tokens`` from
            :data:`MIN_CONTEXT_TOKENS` to :data:`MAX_CONTEXT_TOKENS`, ``max_answer_tokens``
            from 1 to :data:`MAX_ANSWER_TOKENS`, ``n_threads`` from 0 (the physical cores) to
            :data:`MAX_THREADS`.
    """
    _check_whole("models.n_gpu_layers", models.n_gpu_layers, -1, MAX_GPU_LAYERS)
    _check_whole("models.n_threads", models.n_threads, 0, MAX_THREADS)
    _check_whole(
        "models.context_tokens",
        models.context_tokens,
        MIN_CONTEXT_TOKENS,
        MAX_CONTEXT_TOKENS,
        " tokens",
    )
    _check_whole(
        "models.max_answer_tokens", models.max_answer_tokens, 1, MAX_ANSWER_TOKENS, " tokens"
    )


def _check_unit(key: str, value: float, low: float = 0.0) -> None:
    if not (math.isfinite(value) and low <= value <= 1.0):
        raise _bad(key, value, f"use a number from {low:g} to 1")


MAX_RETRIEVAL_DEPTH = 10_000
"""Largest ``k``, ``candidates`` and ``rrf_k``: far past what a prompt holds or an evaluation
asks for (``evaluate.retrieval.CHUNK_DEPTH`` is 300), short of a search that reads the
whole index."""


def check_retrieval(retrieval: RetrievalSettings) -> None:
    """Check retrieval settings before they are used.

    Raises:
        SettingsError: names the key, the value and what is allowed: ``k``, ``rrf_k`` and
            ``candidates`` must be whole numbers from 1 to :data:`MAX_RETRIEVAL_DEPTH`,
            ``mode`` a search mode, the weights
            finite numbers from 0 to 1 that are not both 0, ``exclude_references`` and
            ``rerank`` true or false, ``rerank_candidates`` 1 to
            :data:`MAX_RETRIEVAL_DEPTH`, ``rerank_fusion`` linear or rrf, ``rerank_weight``
            0 to 1.
    """
    r = retrieval
    if r.mode not in SEARCH_MODES:
        raise _bad("retrieval.mode", r.mode, f"use one of {', '.join(SEARCH_MODES)}")
    for key in ("k", "rrf_k", "candidates"):
        _check_whole(f"retrieval.{key}", getattr(r, key), 1, MAX_RETRIEVAL_DEPTH)
    _check_unit("retrieval.lexical_weight", r.lexical_weight)
    _check_unit("retrieval.semantic_weight", r.semantic_weight)
    if r.mode == "hybrid" and r.lexical_weight + r.semantic_weight == 0:
        raise _bad(
            "retrieval.semantic_weight", r.semantic_weight, "the two weights must not both be 0"
        )
    for key in ("exclude_references", "rerank"):
        if not isinstance(getattr(r, key), bool):
            raise _bad(f"retrieval.{key}", getattr(r, key), "use true or false")
    _check_whole("retrieval.rerank_candidates", r.rerank_candidates, 1, MAX_RETRIEVAL_DEPTH)
    if r.rerank_fusion not in RERANK_FUSIONS:
        raise _bad("retrieval.rerank_fusion", r.rerank_fusion, f"use {' or '.join(RERANK_FUSIONS)}")
    _check_unit("retrieval.rerank_weight", r.rerank_weight)


MAX_THREADS = 1024
"""Most generator threads ``models.n_threads`` may ask for."""

MIN_PROMPT_PASSAGE_TOKENS = 128
"""Smallest passage budget: one passage's source line and a few sentences."""
MAX_PROMPT_PASSAGE_TOKENS = MAX_CONTEXT_TOKENS
"""Largest passage budget: the largest generator context."""


def check_generation(generation: GenerationSettings) -> None:
    """Check generation settings before they are used.

    Raises:
        SettingsError: names the key, the value and what is allowed: both passage budgets are
            whole numbers from :data:`MIN_PROMPT_PASSAGE_TOKENS` to
            :data:`MAX_PROMPT_PASSAGE_TOKENS` tokens; ``quote_first`` is true or false;
            ``reading_sentences`` is a whole number from 0 to :data:`MAX_READING_SENTENCES`.
    """
    for key in ("prompt_passage_tokens", "prompt_passage_tokens_gpu"):
        _check_whole(
            f"generation.{key}",
            getattr(generation, key),
            MIN_PROMPT_PASSAGE_TOKENS,
            MAX_PROMPT_PASSAGE_TOKENS,
            " tokens",
        )
    if not isinstance(generation.quote_first, bool):
        raise _bad("generation.quote_first", generation.quote_first, "use true or false")
    _check_whole(
        "generation.reading_sentences", generation.reading_sentences, 0, MAX_READING_SENTENCES, ""
    )


MAX_READING_SENTENCES = 50
"""Most sentences chosen per passage when passages are trimmed (0 reads them whole)."""


MAX_CHUNKS_PER_FILE = 1_000_000
"""Largest ``ingest.max_chunks_per_file``: about 400,000 pages, 100 times the default."""


OCR_ENGINES = ("tesseract", "rapidocr", "off")
"""Values of ``ingest.ocr_engine``."""


def check_ingest(ingest: IngestSettings) -> None:
    """Check ingest settings before they are used.

    Raises:
        SettingsError: ``max_chunks_per_file`` is not a whole number from 1 to
            :data:`MAX_CHUNKS_PER_FILE`, ``ocr_engine`` not one of :data:`OCR_ENGINES`,
            ``ocr_dpi`` not from 72 to 1200, ``ocr_max_pixels`` not from 1 Mpx to 1 Gpx,
            ``ocr_max_pages`` not from 1 to 100,000.
    """
    _check_whole("ingest.max_chunks_per_file", ingest.max_chunks_per_file, 1, MAX_CHUNKS_PER_FILE)
    if ingest.ocr_engine not in OCR_ENGINES:
        raise _bad("ingest.ocr_engine", ingest.ocr_engine, f"use one of {', '.join(OCR_ENGINES)}")
    _check_whole("ingest.ocr_dpi", ingest.ocr_dpi, 72, 1200, " dpi")
    _check_whole("ingest.ocr_max_pixels", ingest.ocr_max_pixels, 1_000_000, 1_000_000_000)
    _check_whole("ingest.ocr_max_pages", ingest.ocr_max_pages, 1, 100_000)


def check_verify(verify: VerifySettings) -> None:
    """Check verification settings before they are used.

    Raises:
        SettingsError: names the key, the value and what is allowed: the contradict and
            support thresholds are probabilities from 0 to 1, ``preset`` one of
            :data:`VERIFY_PRESETS`, ``abstain_threshold`` a cosine
            similarity from -1 to 1 (-1 never abstains), ``premise`` one of ``passage`` or
            ``sentences``, ``recite``, ``conflict_search``, ``abstain_unsupported`` and
            ``abstain_best_guess`` true or
            false,
            ``conflict_budget`` a whole number from 1 to :data:`MAX_CONFLICT_BUDGET`.
    """
    v = verify
    _check_unit("verify.contradict_threshold", v.contradict_threshold)
    _check_unit("verify.support_threshold", v.support_threshold)
    _check_unit("verify.abstain_threshold", v.abstain_threshold, low=-1.0)
    if v.premise not in PREMISES:
        raise _bad("verify.premise", v.premise, f"use one of {', '.join(PREMISES)}")
    if v.preset not in VERIFY_PRESETS:
        raise _bad("verify.preset", v.preset, f"use one of {', '.join(VERIFY_PRESETS)}")
    for key in (
        "recite",
        "conflict_search",
        "abstain_unsupported",
        "abstain_best_guess",
        "second_opinion",
    ):
        if not isinstance(getattr(v, key), bool):
            raise _bad(f"verify.{key}", getattr(v, key), "use true or false")
    b = v.conflict_budget
    if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= MAX_CONFLICT_BUDGET:
        allowed = f"use a whole number from 1 to {MAX_CONFLICT_BUDGET}"
        raise _bad("verify.conflict_budget", b, allowed)
