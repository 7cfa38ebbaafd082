"""Settings dataclasses, their TOML file, and where VerifAI keeps its data.

The data root is the platform's user data directory (``platformdirs``), or ``$VERIFAI_HOME``
when set. Under it: ``settings.toml``, ``collections/<name>/`` and ``models/``.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import tomli_w

from verifai_desktop.citation_settings import CitationSettings as CitationSettings
from verifai_desktop.citation_settings import check_citations
from verifai_desktop.errors import SettingsError
from verifai_desktop.paths import APP_NAME as APP_NAME
from verifai_desktop.paths import HOME_ENV as HOME_ENV
from verifai_desktop.paths import collections_dir as collections_dir
from verifai_desktop.paths import data_root as data_root
from verifai_desktop.paths import models_dir as models_dir
from verifai_desktop.paths import settings_path as settings_path
from verifai_desktop.private import make_private_dir, write_private_text
from verifai_desktop.settings_checks import MAX_ANSWER_TOKENS as MAX_ANSWER_TOKENS
from verifai_desktop.settings_checks import MAX_CHUNKS_PER_FILE as MAX_CHUNKS_PER_FILE
from verifai_desktop.settings_checks import MAX_CONFLICT_BUDGET as MAX_CONFLICT_BUDGET
from verifai_desktop.settings_checks import MAX_CONTEXT_TOKENS as MAX_CONTEXT_TOKENS
from verifai_desktop.settings_checks import MAX_GPU_LAYERS as MAX_GPU_LAYERS
from verifai_desktop.settings_checks import MAX_PROMPT_PASSAGE_TOKENS as MAX_PROMPT_PASSAGE_TOKENS
from verifai_desktop.settings_checks import MAX_READING_SENTENCES as MAX_READING_SENTENCES
from verifai_desktop.settings_checks import MAX_RETRIEVAL_DEPTH as MAX_RETRIEVAL_DEPTH
from verifai_desktop.settings_checks import MAX_SERVER_TIMEOUT_S as MAX_SERVER_TIMEOUT_S
from verifai_desktop.settings_checks import MAX_THREADS as MAX_THREADS
from verifai_desktop.settings_checks import MIN_CONTEXT_TOKENS as MIN_CONTEXT_TOKENS
from verifai_desktop.settings_checks import MIN_PROMPT_PASSAGE_TOKENS as MIN_PROMPT_PASSAGE_TOKENS
from verifai_desktop.settings_checks import OCR_ENGINES as OCR_ENGINES
from verifai_desktop.settings_checks import PREMISES as PREMISES
from verifai_desktop.settings_checks import RERANK_FUSIONS as RERANK_FUSIONS
from verifai_desktop.settings_checks import SEARCH_MODES as SEARCH_MODES
from verifai_desktop.settings_checks import SERVER_CONSTRAINTS as SERVER_CONSTRAINTS
from verifai_desktop.settings_checks import VERIFY_PRESETS as VERIFY_PRESETS
from verifai_desktop.settings_checks import PremiseGranularity as PremiseGranularity
from verifai_desktop.settings_checks import RerankFusion as RerankFusion
from verifai_desktop.settings_checks import SearchMode as SearchMode
from verifai_desktop.settings_checks import ServerConstraint as ServerConstraint
from verifai_desktop.settings_checks import VerifyPreset as VerifyPreset
from verifai_desktop.settings_checks import check_generation as check_generation
from verifai_desktop.settings_checks import check_ingest as check_ingest
from verifai_desktop.settings_checks import check_models as check_models
from verifai_desktop.settings_checks import check_retrieval as check_retrieval
from verifai_desktop.settings_checks import check_server as check_server
from verifai_desktop.settings_checks import check_verify as check_verify
from verifai_desktop.settings_checks import check_watch as check_watch


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
        prompt_passage_tokens: passage budget when the generator runs on the CPU: 700, the
            smallest that lost nothing measurable on PubMedQA dev questions 41-80 against the
            1,500 before it (own abstract cited 95.0% / 97.5% re-cited either way; prompt
            1,585 -> 797 tokens, first token 12.4 -> 5.9 s; ``benchmarks/reading_budget.py``).
        prompt_passage_tokens_gpu: passage budget when llama.cpp offloads layers to a GPU,
            where prompt reading is one to two orders of magnitude faster.
        quote_first: for a question asking for a figure, quote the passages' sentences that
            bear most on it and ask for figures as written there with their group
            (:mod:`verifai_desktop.generate.quote`; issue 39).
        reading_sentences: the generator reads each passage trimmed to this many sentences
            that bear on the question, their neighbours and the passage's first sentence
            (:mod:`verifai_desktop.generate.focus`; issue 40); 0 reads passages whole (the
            default: trimmed to 2 sentences at the same budget, one more dev question's own
            abstract went uncited, ``benchmarks/reading_budget.py``).
        cut_to_question: the passage that crosses the budget keeps, of what fits, its
            sentences that bear most on the question (and their neighbours and first sentence,
            room permitting; :func:`verifai_desktop.generate.focus.focus_to_fit`) instead of its
            opening (issue 40; chosen on dev questions, ``benchmarks/reading_budget.py``:
            PubMedQA dev 41-80 own abstract cited 95.0 -> 97.5%, answers with a green sentence
            40.0 -> 37.5%; SciFact dev claims as questions 87.5% either way, 30.0 -> 37.5%).
        keep_best_sentence: with ``cut_to_question``, the sentence of all retrieved passages
            that bears most on the question is read even when its passage ranks below the
            budget: that passage is given last, cut to the sentence and its neighbours
            (:func:`verifai_desktop.generate.prompt.build_answer_prompt`; issue 40). No tuned
            parameter; on the dev sets above it changes 5 of 80 prompts, own abstract cited
            97.5 / 100% either way on PubMedQA and 87.5 -> 90.0 / 90.0% on SciFact, one answer
            fewer with a green sentence on each (``benchmarks/reading_budget.py``, README).
    """

    prompt_passage_tokens: int = 700
    prompt_passage_tokens_gpu: int = 4000
    quote_first: bool = True
    reading_sentences: int = 0
    cut_to_question: bool = True
    keep_best_sentence: bool = True

    def passage_budget(self, *, gpu: bool) -> int:
        """The passage token budget for a generator on the GPU (``gpu``) or the CPU."""
        return self.prompt_passage_tokens_gpu if gpu else self.prompt_passage_tokens


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
