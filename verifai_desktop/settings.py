"""Settings dataclasses, their TOML file, and where VerifAI keeps its data.

The data root is the platform's user data directory (``platformdirs``), or ``$VERIFAI_HOME``
when set. Under it: ``settings.toml``, ``collections/<name>/`` and ``models/``.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

import tomli_w

from verifai_desktop.citation_settings import CitationSettings as CitationSettings
from verifai_desktop.citation_settings import check_citations
from verifai_desktop.errors import SettingsError
from verifai_desktop.names import redact_url
from verifai_desktop.paths import APP_NAME as APP_NAME
from verifai_desktop.paths import HOME_ENV as HOME_ENV
from verifai_desktop.paths import collections_dir as collections_dir
from verifai_desktop.paths import data_root as data_root
from verifai_desktop.paths import models_dir as models_dir
from verifai_desktop.paths import settings_path as settings_path
from verifai_desktop.private import make_private_dir, write_private_text

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


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    """Hybrid retrieval parameters.

    Defaults are VerifAI's chosen row (lexical 0.7, semantic 0.3; Bojic et al., VerifAI, 2024)
    and RRF's k = 60 (Cormack et al., SIGIR 2009).
    """

    k: int = 10
    mode: SearchMode = "hybrid"
    lexical_weight: float = 0.7
    semantic_weight: float = 0.3
    rrf_k: int = 60
    candidates: int = 100  # how many hits each engine returns before fusion
    # Leave reference-list chunks out of the passages given to the generator (they stay
    # searchable; `verifai search` shows them, marked). Retrieval then fetches past them so
    # that k other passages still reach the prompt.
    exclude_references: bool = True
    # Evidence-aware reranking (verifai_desktop.rerank): the verifier reads the top
    # `rerank_candidates` passages against the question and their order is fused with its
    # evidence probability. Off by default: on SciFact BEIR train (50 claims) the best row,
    # N 5, linear, weight 0.5, gained 0.002 nDCG@10 (benchmarks/rerank.py; README, Measured).
    rerank: bool = False
    rerank_candidates: int = 5
    rerank_fusion: RerankFusion = "linear"
    rerank_weight: float = 0.5


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Which models are used. Names resolve through the model catalog; paths are used as given.

    Attributes:
        embedder: sentence-transformers name or path; ``"all-MiniLM-L6-v2"`` is the bundled one.
        generator: GGUF catalog name or path; empty (the default): the best bundled generator
            installed, Qwen2.5-Coder-1.5B-Instruct when the ``generator-1-5b`` extra is
            installed, else the bundled ``"qwen2.5-coder-0.5b-instruct-q4_k_m"``.
        verifier: ONNX verifier folder or catalog name; ``"verifai-minilm-nli"`` is bundled.
        n_gpu_layers: layers offloaded to the GPU; -1 means all when llama.cpp has CUDA, else 0.
        lora_path: optional LoRA adapter for the generator.
        context_tokens: upper bound on the generator context (it is sized to the prompt).
        max_answer_tokens: generation limit.
        n_threads: CPU threads the generator reads the prompt and decodes with; 0 (the
            default): the machine's physical cores, at least 2 where there are 2 logical CPUs
            (:func:`verifai_desktop.hardware.generator_threads`). llama-cpp-python's own
            default, half the logical CPUs, decodes on one thread of two (issue 40).
    """

    embedder: str = "all-MiniLM-L6-v2"
    generator: str = ""
    verifier: str = "verifai-minilm-nli"
    n_gpu_layers: int = -1
    lora_path: str = ""
    context_tokens: int = 8192
    max_answer_tokens: int = 512
    n_threads: int = 0


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    """How much retrieved text the generator reads.

    Prompt reading (prefill) dominates the wait before the first token on a CPU: the bundled
    0.5B model reads a 10-passage prompt (about 3,000 tokens) in 60-140 s on 2 cores (issue 13).
    Passages are given best first, near-duplicates dropped, until this many tokens (the
    generator's own tokenizer; passage text plus its source line) are used; the passage that
    crosses the budget is cut at a sentence boundary, and at most ``retrieval.k`` are given.

    Attributes:
        prompt_passage_tokens: passage budget when the generator runs on the CPU.
        prompt_passage_tokens_gpu: passage budget when llama.cpp offloads layers to a GPU,
            where prompt reading is one to two orders of magnitude faster.
        quote_first: for a question asking for a figure, quote the passages' sentences that
            bear most on it and ask for figures as written there with their group
            (:mod:`verifai_desktop.generate.quote`; issue 39).
    """

    prompt_passage_tokens: int = 1500
    prompt_passage_tokens_gpu: int = 4000
    quote_first: bool = True

    def passage_budget(self, *, gpu: bool) -> int:
        """The passage token budget for a generator on the GPU (``gpu``) or the CPU."""
        return self.prompt_passage_tokens_gpu if gpu else self.prompt_passage_tokens


MAX_CONFLICT_BUDGET = 100
"""Most candidate passages the contradiction search may verify per sentence."""


@dataclass(frozen=True, slots=True)
class VerifySettings:
    """Verification thresholds and premise granularity.

    Attributes:
        preset: which per-label thresholds decide the colours: ``strict``, ``balanced`` or
            ``lenient`` take them from the verifier's model card (each chosen on dev sets for a
            stated precision); ``custom`` takes the two thresholds below. A verifier whose card
            has no presets uses the two thresholds below whatever the preset.
        contradict_threshold: with ``preset = "custom"``, P(CONTRADICT) at or above which a
            pair counts as contradicting (when CONTRADICT is the verifier's best guess).
        support_threshold: with ``preset = "custom"``, P(SUPPORT) at or above which a pair
            counts as supporting (when SUPPORT is the best guess and no check held it back).
        premise: ``"passage"`` (whole passage as premise) or ``"sentences"`` (1-3 sentence
            windows, max-aggregated).
        abstain_threshold: best raw cosine similarity below which the app answers
            "not found in your documents" instead of generating (Claim-Aware Scientific RAG).
        recite: verify every answer sentence against every passage given to the generator,
            not only the ones it cited, and re-cite a sentence its citations do not support
            to the passages that do (:mod:`verifai_desktop.verify.answer`).
        conflict_search: search the whole collection for passages that contradict each
            answer sentence (:mod:`verifai_desktop.contradictions`).
        abstain_unsupported: abstention by evidence: when no answer sentence is supported
            after re-citation, say that the documents do not support an answer and show the
            generated text only on request.
        abstain_best_guess: with ``abstain_unsupported``, an unsure sentence whose best
            guess is SUPPORT (and that no check held back) counts as support, so only an
            answer whose every sentence the verifier leans against or finds nothing for is
            refused.
        second_opinion: ask the generator already loaded to judge again each green sentence
            that holds a figure or a negation, or that the verifier barely decided; where it
            does not say SUPPORT the sentence is shown unsure (:mod:`verifai_desktop.verify.
            second_opinion`). Off: with the bundled 0.5B it raised false alarms on dev.
        conflict_budget: candidate passages the contradiction search verifies per sentence
            (and ``verifai check`` per claim, unless told otherwise); the cost of the search
            grows with it.
    """

    preset: VerifyPreset = "balanced"
    contradict_threshold: float = 0.5
    support_threshold: float = 0.5
    premise: PremiseGranularity = "sentences"
    abstain_threshold: float = 0.25
    recite: bool = True
    conflict_search: bool = True
    conflict_budget: int = 6
    abstain_unsupported: bool = True
    abstain_best_guess: bool = False
    second_opinion: bool = False


@dataclass(frozen=True, slots=True)
class IngestSettings:
    """How files are gathered for ingest.

    Attributes:
        follow_external_links: index the target of a symbolic link found in a chosen folder
            even when it lies outside every folder chosen (off: such links are recorded as
            failed with the reason and never read, so a link to ``/etc/passwd`` or another
            user's files does not end up in the collection).
        max_chunks_per_file: a file that makes more chunks than this is recorded as failed,
            with its chunk count, instead of being embedded (a 50 MB one-line text file makes
            about 32,000 chunks and would stall the run for most of an hour on a 2-core CPU).
            10,000 chunks is about 4,000 pages of a paper.
        ocr_engine: how pages without a text layer (scans) and the images of DOCX, PPTX and
            EPUB files (:mod:`verifai_desktop.ingest.embedded`) are read: ``"tesseract"``
            (Tesseract, Debian ``tesseract-ocr``), ``"rapidocr"`` (RapidOCR on ONNX Runtime,
            the ``ocr`` extra) or ``"off"`` (recorded as needing OCR, as ``verifai ingest
            --no-ocr`` does); :mod:`verifai_desktop.ingest.ocr`.
        ocr_dpi: resolution pages are rendered at for OCR, dots per inch.
        ocr_max_pixels: a page whose embedded image holds more pixels than this, or such an
            image of a DOCX, PPTX or EPUB, is not recognised (a decompression bomb, or a
            poster); a page that renders larger at ``ocr_dpi`` is rendered at a lower
            resolution. 50 Mpx is an A4 scan at 600 dpi.
        ocr_max_pages: a file with more scanned pages than this, or a DOCX, PPTX or EPUB
            with more images to read, is not recognised (its pages or images are recorded as
            needing OCR, with this reason).
    """

    follow_external_links: bool = False
    max_chunks_per_file: int = 10_000
    ocr_engine: str = "tesseract"
    ocr_dpi: int = 300
    ocr_max_pixels: int = 50_000_000
    ocr_max_pages: int = 100


@dataclass(frozen=True, slots=True)
class HistorySettings:
    """The answer history (:mod:`verifai_desktop.store.history`).

    Attributes:
        keep: keep every verified answer in its collection's history (``history.sqlite``);
            off: nothing is kept (audit records can then not be exported afterwards).
    """

    keep: bool = True


@dataclass(frozen=True, slots=True)
class WatchSettings:
    """Folder watching (:mod:`verifai_desktop.store.watch`).

    Attributes:
        enabled: the desktop app keeps the open collection in step with the folders it was
            built from while it runs (``verifai watch`` does so in a terminal).
        debounce_s: seconds without a further change before a burst of changes is synced
            (an editor's save or a copy of many files becomes one sync).
    """

    enabled: bool = True
    debounce_s: float = 2.0


ServerConstraint = Literal["auto", "grammar", "guided_grammar", "none"]
SERVER_CONSTRAINTS: tuple[ServerConstraint, ...] = ("auto", "grammar", "guided_grammar", "none")


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Generation on an OpenAI-compatible server instead of in-process llama.cpp
    (:mod:`verifai_desktop.generate.openai_server`).

    Attributes:
        base_url: the server's API root (``http://127.0.0.1:8080/v1``); ``""`` generates
            in process with ``models.generator``. Only this host is contacted; passages leave
            the machine when it is not local.
        model: the model name the server knows.
        api_key_env: environment variable holding the API key (else the system keyring's
            ``verifai-desktop`` entry for the host; else none is sent).
        constrain: how citations are constrained: ``grammar`` sends the GBNF citation grammar
            (llama.cpp's server), ``guided_grammar`` sends it as vLLM guided decoding,
            ``none`` parses citations and drops invalid ones; ``auto`` asks the server which
            it is (llama.cpp: grammar, otherwise none).
        timeout_s: seconds to wait for the server to start answering.
    """

    base_url: str = ""
    model: str = ""
    api_key_env: str = "VERIFAI_API_KEY"
    constrain: ServerConstraint = "auto"
    timeout_s: float = 300.0


@dataclass(frozen=True, slots=True)
class UiSettings:
    """State the desktop app remembers."""

    last_collection: str = "default"
    window_geometry: str = ""  # base64 of QWidget.saveGeometry()
    splitter_state: str = ""  # base64 of QSplitter.saveState(): the panel widths
    library_shown: bool = True  # View → Show library


@dataclass(frozen=True, slots=True)
class Settings:
    """All settings; saved as TOML at :func:`settings_path`."""

    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    models: ModelSettings = field(default_factory=ModelSettings)
    generation: GenerationSettings = field(default_factory=GenerationSettings)
    verify: VerifySettings = field(default_factory=VerifySettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    history: HistorySettings = field(default_factory=HistorySettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    citations: CitationSettings = field(default_factory=CitationSettings)
    ui: UiSettings = field(default_factory=UiSettings)


_T = TypeVar("_T")


def _from_table(cls: type[_T], table: object, where: str) -> _T:
    if not isinstance(table, dict):
        raise SettingsError(where, "expected a table")
    kwargs: dict[str, object] = {}
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key, value in table.items():
        if key not in fields:
            raise SettingsError(f"{where}.{key}", "unknown setting")
        default = getattr(cls(), key)
        if dataclasses.is_dataclass(default):
            kwargs[key] = _from_table(type(default), value, f"{where}.{key}")
        elif isinstance(default, float) and type(value) is int:
            kwargs[key] = float(value)  # TOML writes 1 for 1.0
        elif type(value) is not type(default):
            expected = type(default).__name__
            raise SettingsError(f"{where}.{key}", f"expected {expected}, got {value!r}")
        else:
            kwargs[key] = value
    return cls(**kwargs)


def load_settings(path: Path | None = None) -> Settings:
    """Read settings from TOML; missing file or keys fall back to defaults.

    Raises:
        SettingsError: the file is not valid TOML or holds an unknown key or a wrong type.
    """
    path = path or settings_path()
    if not path.exists():
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(str(path), f"not valid TOML ({exc}); fix or delete the file") from exc
    verify = data.get("verify")
    thresholds = {"support_threshold", "contradict_threshold"}
    if isinstance(verify, dict) and "preset" not in verify and thresholds & verify.keys():
        verify["preset"] = "custom"  # thresholds set before presets existed: the user's own
    settings = _from_table(Settings, data, "settings")
    check_models(settings.models)
    check_retrieval(settings.retrieval)
    check_generation(settings.generation)
    check_verify(settings.verify)
    check_ingest(settings.ingest)
    check_watch(settings.watch)
    check_server(settings.server)
    check_citations(settings.citations)
    return settings


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
            :data:`MAX_PROMPT_PASSAGE_TOKENS` tokens; ``quote_first`` is true or false.
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


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write settings as TOML atomically (temp file, then rename), user-only (mode 0600).

    Returns:
        The path written.

    Raises:
        OSError: the file or its folder cannot be written.
    """
    path = path or settings_path()
    make_private_dir(path.parent)
    write_private_text(path, tomli_w.dumps(dataclasses.asdict(settings)))
    return path
