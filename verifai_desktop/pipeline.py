"""ask(): retrieve -> abstain? -> generate (streaming, citation grammar) -> verify -> Answer.

After VerifAI (Kosprdic et al., 2024): hybrid retrieval of the top-k passages, a generator that
cites a passage for every sentence, and an NLI verifier that checks every (sentence, cited
passage) pair. On top: decode-time citation constraints (a passage that was not given cannot
be cited), abstention when retrieval finds nothing close enough (Claim-Aware Scientific RAG),
and sentence labels that surface contradictions.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import NDArray

from verifai_desktop import modelstore
from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    NliLabel,
    Passage,
    Progress,
    Verdict,
)
from verifai_desktop.errors import Cancelled, ModelNotFound
from verifai_desktop.generate import Generator, make_generator
from verifai_desktop.generate.grammar import citation_grammar, decision_grammar
from verifai_desktop.generate.prompt import AnswerPrompt, build_answer_prompt, decision_messages
from verifai_desktop.settings import PremiseGranularity, Settings, load_settings
from verifai_desktop.verify.claims import ParsedSentence, Splitter, split_answer
from verifai_desktop.verify.evidence import SentenceEmbedder, find_evidence
from verifai_desktop.verify.labels import sentence_label

if TYPE_CHECKING:
    from verifai_desktop.store.collection import Collection

log = logging.getLogger(__name__)


def preload_onnxruntime() -> None:
    """Import ONNX Runtime now, before anything imports usearch.

    Importing ``onnxruntime`` after ``usearch`` segfaults the process (usearch 2.26 with
    onnxruntime 1.31 on Linux); the other order is fine. The verifier loads ONNX Runtime
    lazily, after a collection (and with it usearch) is open, so it is loaded here first.
    """
    try:
        import onnxruntime  # noqa: F401
    except ImportError:  # pragma: no cover - the verifier will say what is missing
        log.debug("onnxruntime not installed")


preload_onnxruntime()

ABSTAIN_TEXT = "Not found in your documents."
MAX_ANSWER_SENTENCES = 6
NLI_ORDER: tuple[NliLabel, ...] = (NliLabel.SUPPORT, NliLabel.CONTRADICT, NliLabel.NO_EVIDENCE)


class PassageRetriever(Protocol):
    """Finds passages for a query in one collection (``retrieve.Retriever`` behind settings)."""

    def search(self, query: str, *, k: int) -> tuple[Passage, ...]:
        """The top-k passages, best first."""
        ...


class Verifier(Protocol):
    """An NLI model (:class:`verifai_desktop.verify.nli.OnnxVerifier`)."""

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Probabilities, float32, shape (n, 3), order SUPPORT, CONTRADICT, NO_EVIDENCE,
        for (premise, hypothesis) pairs, in one batch."""
        ...


RetrieverFactory = Callable[["Collection", Settings], PassageRetriever]


def best_semantic(passages: Sequence[Passage]) -> float | None:
    """The highest raw cosine among ``passages`` (None if no passage has one)."""
    scores = [p.raw_semantic for p in passages if p.raw_semantic is not None]
    return max(scores) if scores else None


def should_abstain(passages: Sequence[Passage], threshold: float) -> bool:
    """Abstain when nothing was retrieved or the best raw cosine is below ``threshold``.

    Passages without a semantic score (lexical-only search) never cause abstention.
    """
    if not passages:
        return True
    best = best_semantic(passages)
    return best is not None and best < threshold


def premises_for(passage: Passage, granularity: PremiseGranularity) -> tuple[str, ...]:
    """The premise texts a claim is checked against for one passage.

    ``passage``: the whole passage. ``sentences``: every window of 1..3 consecutive sentences
    (:func:`verifai_desktop.verify.premises.sentence_windows`); the pair's result is the most
    decisive window (as :func:`verifai_desktop.verify.nli.aggregate_windows`).
    """
    from verifai_desktop.verify.premises import sentence_windows

    if granularity == "passage":
        return (passage.text,)
    windows = sentence_windows(passage.text, passage.sentence_spans or None)
    if not windows:
        return (passage.text,)
    return tuple(dict.fromkeys(passage.text[s:e] for s, e in windows))


def verify_claims(
    pairs: Sequence[tuple[str, Passage]],
    verifier: Verifier,
    granularity: PremiseGranularity,
) -> NDArray[np.float32]:
    """Probabilities for (claim, passage) pairs, every premise window in ONE verifier batch.

    Returns:
        float32, shape (len(pairs), 3), order SUPPORT, CONTRADICT, NO_EVIDENCE.
    """
    if not pairs:
        return np.zeros((0, 3), dtype=np.float32)
    batch: list[tuple[str, str]] = []
    owners: list[int] = []
    for i, (claim, passage) in enumerate(pairs):
        for premise in premises_for(passage, granularity):
            batch.append((premise, claim))
            owners.append(i)
    probs = np.asarray(verifier.classify(batch), dtype=np.float32)
    out = np.zeros((len(pairs), 3), dtype=np.float32)
    best = np.full(len(pairs), -1.0)
    for row, owner in enumerate(owners):
        strength = float(max(probs[row, 0], probs[row, 1]))
        if strength > best[owner]:
            best[owner] = strength
            out[owner] = probs[row]
    return out


@dataclass(frozen=True, slots=True)
class AskResult:
    """An answer plus what built it (for evaluation)."""

    answer: Answer
    prompt: AnswerPrompt | None


class _SettingsRetriever:
    """:class:`verifai_desktop.retrieve.Retriever` with the retrieval settings applied."""

    def __init__(self, collection: Collection, settings: Settings) -> None:
        from verifai_desktop.retrieve import Retriever

        self._retriever = Retriever(collection)
        self._settings = settings.retrieval

    def search(self, query: str, *, k: int) -> tuple[Passage, ...]:
        r = self._settings
        return self._retriever.search(
            query,
            k=k,
            mode=r.mode,
            lexical_weight=r.lexical_weight,
            semantic_weight=r.semantic_weight,
            rrf_k=r.rrf_k,
            candidates=r.candidates,
        )


def _collection_retriever(collection: Collection, settings: Settings) -> PassageRetriever:
    return _SettingsRetriever(collection, settings)


class AskSession:
    """Keeps the generator, verifier and embedder loaded between questions (the UI holds one).

    The constructor is cheap; each model loads on first use. Components may be injected
    (tests use fakes behind the protocols).

    Args:
        settings: settings; loaded from disk if None.
        generator: a :class:`~verifai_desktop.generate.Generator`; from settings if None.
        verifier: a :class:`Verifier`; from settings if None.
        embedder: for evidence sentences; ``settings.models.embedder`` if None.
        retriever_factory: builds the retriever of a collection.
        splitter: sentence splitter; the ingest splitter if None.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        generator: Generator | None = None,
        verifier: Verifier | None = None,
        embedder: SentenceEmbedder | None = None,
        retriever_factory: RetrieverFactory | None = None,
        splitter: Splitter | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self._generator = generator
        self._verifier = verifier
        self._embedder = embedder
        self._retriever_factory = retriever_factory or _collection_retriever
        self._retrievers: dict[int, tuple[Collection, PassageRetriever]] = {}
        self._splitter = splitter
        self._identities: dict[str, dict[str, str]] = {}
        if generator is not None:
            self._identities["generator"] = {"name": type(generator).__name__, "sha256": ""}
        if verifier is not None:
            self._identities["verifier"] = {"name": type(verifier).__name__, "sha256": ""}
        if embedder is not None:
            self._identities["embedder"] = {"name": type(embedder).__name__, "sha256": ""}
        self._lock = threading.Lock()

    # -- components -----------------------------------------------------------------------

    @property
    def generator(self) -> Generator:
        """The generator (resolved and assembled on first use)."""
        if self._generator is None:
            models = self.settings.models
            ident = modelstore.resolve(models.generator, "generator")
            lora = None
            if models.lora_path:
                lora_ident = modelstore.resolve(models.lora_path, "lora")
                lora = lora_ident.path
                self._identities["lora"] = lora_ident.as_dict()
            self._generator = make_generator(ident.path, models, lora)
            self._identities["generator"] = ident.as_dict()
        return self._generator

    @property
    def verifier(self) -> Verifier:
        """The NLI verifier (loaded on first use)."""
        if self._verifier is None:
            from verifai_desktop.verify import nli

            name = self.settings.models.verifier
            self._verifier = nli.get_verifier(name)
            try:
                self._identities["verifier"] = modelstore.resolve(name, "verifier").as_dict()
            except ModelNotFound:
                self._identities["verifier"] = {"name": name, "sha256": ""}
        return self._verifier

    @property
    def embedder(self) -> SentenceEmbedder:
        """The sentence embedder used for evidence sentences."""
        if self._embedder is None:
            from verifai_desktop.index.embedder import get_embedder

            name = self.settings.models.embedder
            self._embedder = get_embedder(name)
            try:
                self._identities["embedder"] = modelstore.resolve(name, "embedder").as_dict()
            except ModelNotFound:
                self._identities["embedder"] = {"name": name, "sha256": ""}
        return self._embedder

    def retriever(self, collection: Collection) -> PassageRetriever:
        """The retriever of ``collection`` (cached per collection object)."""
        key = id(collection)
        hit = self._retrievers.get(key)
        if hit is None or hit[0] is not collection:
            hit = (collection, self._retriever_factory(collection, self.settings))
            self._retrievers[key] = hit
        return hit[1]

    def set_identity(self, role: str, identity: dict[str, str]) -> None:
        """Record the identity (name, path, sha256) of an injected model."""
        self._identities[role] = dict(identity)

    def model_identities(self) -> dict[str, dict[str, str]]:
        """Role -> {name, path, sha256} of every model used so far."""
        return {role: dict(ident) for role, ident in self._identities.items()}

    # -- the pipeline ---------------------------------------------------------------------

    def ask(
        self,
        collection: Collection,
        question: str,
        *,
        k: int | None = None,
        on_token: Callable[[str], None] | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """Answer ``question`` from ``collection``; see :func:`ask`."""
        return self.ask_detailed(
            collection, question, k=k, on_token=on_token, progress=progress, cancel=cancel
        ).answer

    def ask_detailed(
        self,
        collection: Collection,
        question: str,
        *,
        k: int | None = None,
        on_token: Callable[[str], None] | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> AskResult:
        """Like :meth:`ask`, also returning the prompt used (None when abstaining)."""
        with self._lock:
            return self._ask(collection, question, k, on_token, progress, cancel)

    def _check(self, cancel: threading.Event | None) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("question")

    def _ask(
        self,
        collection: Collection,
        question: str,
        k: int | None,
        on_token: Callable[[str], None] | None,
        progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> AskResult:
        settings = self.settings
        k = k or settings.retrieval.k
        timings: dict[str, float] = {}
        t_start = time.perf_counter()

        def report(
            stage: str, done: int, total: int | None, unit: str = "", message: str = ""
        ) -> None:
            if progress:
                progress(Progress(stage, done, total, unit, message))

        report("retrieve", 0, 1, "steps")
        self._check(cancel)
        t0 = time.perf_counter()
        passages = tuple(self.retriever(collection).search(question, k=k))
        timings["retrieve"] = (time.perf_counter() - t0) * 1000
        report("retrieve", 1, 1, "steps", f"{len(passages)} passages")
        self._check(cancel)

        if should_abstain(passages, settings.verify.abstain_threshold):
            timings["generate"] = 0.0
            timings["verify"] = 0.0
            timings["total"] = (time.perf_counter() - t_start) * 1000
            log.info(
                "abstaining: best cosine %s < %s",
                best_semantic(passages),
                settings.verify.abstain_threshold,
            )
            answer = Answer(
                question=question,
                text=ABSTAIN_TEXT,
                sentences=(),
                passages=passages,
                abstained=True,
                timings_ms=timings,
                models=self.model_identities(),
            )
            return AskResult(answer, None)

        # -- generate ------------------------------------------------------------------
        generator = self.generator
        t0 = time.perf_counter()
        prompt = build_answer_prompt(
            question,
            passages,
            count_tokens=generator.count_tokens,
            max_prompt_tokens=settings.models.context_tokens
            - settings.models.max_answer_tokens
            - 128,
        )
        grammar = citation_grammar(len(passages), max_sentences=MAX_ANSWER_SENTENCES)
        pieces: list[str] = []
        first_token_ms: float | None = None
        report("generate", 0, settings.models.max_answer_tokens, "tokens")
        stream: Iterator[str] = generator.stream(prompt.messages, grammar=grammar, cancel=cancel)
        for piece in stream:
            if first_token_ms is None:
                first_token_ms = (time.perf_counter() - t0) * 1000
            pieces.append(piece)
            if on_token:
                on_token(piece)
            report("generate", len(pieces), settings.models.max_answer_tokens, "tokens")
            self._check(cancel)
        text = "".join(pieces).strip()
        timings["generate"] = (time.perf_counter() - t0) * 1000
        timings["first_token"] = (
            first_token_ms if first_token_ms is not None else timings["generate"]
        )

        # -- verify --------------------------------------------------------------------
        self._check(cancel)
        t0 = time.perf_counter()
        report("verify", 0, 1, "steps")
        sentences = self._verify(text, passages)
        timings["verify"] = (time.perf_counter() - t0) * 1000
        report("verify", 1, 1, "steps")
        timings["total"] = (time.perf_counter() - t_start) * 1000
        answer = Answer(
            question=question,
            text=text,
            sentences=sentences,
            passages=passages,
            abstained=False,
            timings_ms=timings,
            models=self.model_identities(),
        )
        return AskResult(answer, prompt)

    def _verify(self, text: str, passages: Sequence[Passage]) -> tuple[AnswerSentence, ...]:
        parsed: tuple[ParsedSentence, ...] = split_answer(
            text, len(passages), splitter=self._splitter
        )
        pairs = [(s.claim, passages[n - 1]) for s in parsed for n in s.citations]
        probs = verify_claims(pairs, self.verifier, self.settings.verify.premise) if pairs else None
        evidence = find_evidence(pairs, self.embedder) if pairs else ()
        out: list[AnswerSentence] = []
        row = 0
        for sentence in parsed:
            verdicts = []
            for number in sentence.citations:
                assert probs is not None
                p = probs[row]
                ev = evidence[row]
                verdicts.append(
                    Verdict(
                        passage_number=number,
                        label=NLI_ORDER[int(np.argmax(p))],
                        p_support=float(p[0]),
                        p_contradict=float(p[1]),
                        p_no_evidence=float(p[2]),
                        evidence=ev.text,
                        evidence_span=ev.span,
                    )
                )
                row += 1
            label = sentence_label(verdicts, self.settings.verify)
            out.append(
                AnswerSentence(
                    text=sentence.text,
                    char_start=sentence.char_start,
                    char_end=sentence.char_end,
                    citations=sentence.citations,
                    verdicts=tuple(verdicts),
                    label=label,
                    invalid_citations=sentence.invalid_citations,
                )
            )
        return tuple(out)

    def decide(self, prompt: AnswerPrompt, answer_text: str) -> str:
        """A one-word yes/no/maybe decision for the answered question (PubMedQA evaluation).

        The answer chat is continued with a constrained one-word question (grammar
        ``yes | no | maybe``); the shared prefix reuses llama.cpp's KV cache.
        """
        reply = "".join(
            self.generator.stream(
                decision_messages(prompt, answer_text), grammar=decision_grammar(), max_tokens=4
            )
        )
        return reply.strip().lower()


def ask(
    collection: Collection,
    question: str,
    *,
    settings: Settings | None = None,
    on_token: Callable[[str], None] | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Answer:
    """Answer a question from a collection with cited, verified sentences.

    Steps: retrieve the top-k passages (hybrid BM25 + HNSW); abstain ("Not found in your
    documents.", with the closest passages) when the best raw cosine is below
    ``settings.verify.abstain_threshold``; generate an answer under the citation grammar,
    streaming tokens to ``on_token``; split it into sentences, verify every (sentence, cited
    passage) pair in one verifier batch, find each pair's evidence sentence, label sentences.

    Args:
        collection: an open collection.
        question: the question.
        settings: settings; loaded from disk if None.
        on_token: called with each generated text piece, in order.
        progress: progress reports (stages ``retrieve``, ``generate``, ``verify``).
        cancel: set to stop; raises :class:`~verifai_desktop.errors.Cancelled`.

    Returns:
        The answer, with per-stage wall times in ms (``retrieve``, ``generate``,
        ``first_token``, ``verify``, ``total``) and model identities (name, path, sha256).

    Raises:
        ModelNotFound, ModelLoadError: a model is missing or damaged.
        GenerationError: the generator failed.
        Cancelled: ``cancel`` was set.
    """
    session = AskSession(settings)
    return session.ask(collection, question, on_token=on_token, progress=progress, cancel=cancel)


ANSWER_SCHEMA = "verifai.answer/1"


def answer_to_dict(answer: Answer, settings: Settings | None = None) -> dict[str, object]:
    """The whole answer as JSON-ready data (``verifai ask --json``; schema ``verifai.answer/1``).

    Offsets: sentence ``char_start/char_end`` index ``answer``; verdict ``evidence_char_*``
    index the cited passage's ``text``; passage ``char_start/char_end`` index its document.
    """
    from verifai_desktop.verify.labels import label_counts, sentence_probability

    thresholds = (settings or Settings()).verify
    sentences = []
    for i, s in enumerate(answer.sentences):
        sentences.append(
            {
                "index": i,
                "text": s.text,
                "char_start": s.char_start,
                "char_end": s.char_end,
                "citations": list(s.citations),
                "invalid_citations": list(s.invalid_citations),
                "label": s.label.value,
                "probability": sentence_probability(s.label, s.verdicts, thresholds),
                "verdicts": [
                    {
                        "passage": v.passage_number,
                        "label": v.label.value,
                        "probability": v.probability,
                        "p_support": v.p_support,
                        "p_contradict": v.p_contradict,
                        "p_no_evidence": v.p_no_evidence,
                        "evidence": v.evidence,
                        "evidence_char_start": v.evidence_span[0],
                        "evidence_char_end": v.evidence_span[1],
                    }
                    for v in s.verdicts
                ],
            }
        )
    passages = []
    for n, p in enumerate(answer.passages, start=1):
        passages.append(
            {
                "number": n,
                "chunk_id": int(p.chunk_id),
                "doc_id": int(p.doc_id),
                "path": str(p.path),
                "file": p.path.name,
                "title": p.title,
                "location": p.location.as_dict(),
                "char_start": p.char_start,
                "char_end": p.char_end,
                "scores": {
                    "fused": p.fused_score,
                    "lexical": p.lexical_score,
                    "semantic": p.semantic_score,
                    "raw_lexical": p.raw_lexical,
                    "raw_semantic": p.raw_semantic,
                },
                "text": p.text,
            }
        )
    counts = label_counts(s.label for s in answer.sentences)
    return {
        "schema": ANSWER_SCHEMA,
        "question": answer.question,
        "answer": answer.text,
        "abstained": answer.abstained,
        "sentences": sentences,
        "label_counts": {label.value: n for label, n in counts.items()},
        "passages": passages,
        "timings_ms": dict(answer.timings_ms),
        "models": {role: dict(ident) for role, ident in answer.models.items()},
        "thresholds": {
            "support": thresholds.support_threshold,
            "contradict": thresholds.contradict_threshold,
            "abstain": thresholds.abstain_threshold,
        },
    }
