"""The ask session: retrieve -> abstain? -> generate (streaming, citation grammar) -> verify.

After VerifAI (Kosprdic et al., 2024): hybrid retrieval of the top-k passages, a generator that
cites a passage for every sentence, and an NLI verifier that checks every (sentence, cited
passage) pair. On top: decode-time citation constraints (a passage that was not given cannot
be cited), abstention when retrieval finds nothing close enough (Claim-Aware Scientific RAG),
and sentence labels that surface contradictions. Verification goes through the one path of
:mod:`verifai_desktop.verify.check`; the evidence of a verdict is the premise window that
decided it.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from verifai_desktop import modelstore
from verifai_desktop.contradictions import add_conflicts, check_claim
from verifai_desktop.domain import (
    TOKEN_COUNTS,
    AbstainReason,
    Answer,
    CheckResult,
    Passage,
    Progress,
    strip_citations,
)
from verifai_desktop.errors import Cancelled, EmptyClaim, ModelNotFound, SettingsError
from verifai_desktop.foreground import FOREGROUND
from verifai_desktop.generate import Generator, make_generator, uses_gpu
from verifai_desktop.generate.grammar import citation_grammar
from verifai_desktop.generate.passages import dedupe_passages
from verifai_desktop.generate.prompt import AnswerPrompt, build_answer_prompt
from verifai_desktop.modelstore import Role
from verifai_desktop.names import redact_url
from verifai_desktop.rerank import rerank_by, search_reranked
from verifai_desktop.retrieve import PassageRetriever, Retriever
from verifai_desktop.settings import (
    Settings,
    VerifySettings,
    check_generation,
    check_retrieval,
    check_verify,
)
from verifai_desktop.store.base import CollectionStore
from verifai_desktop.verify.abstention import (
    ABSTAIN_TEXT,
    best_semantic,
    should_abstain,
    supported_anywhere,
)
from verifai_desktop.verify.answer import verify_answer
from verifai_desktop.verify.check import Verifier
from verifai_desktop.verify.claims import Splitter
from verifai_desktop.verify.memo import MemoVerifier
from verifai_desktop.verify.nli import get_verifier
from verifai_desktop.verify.presets import Presets, effective_thresholds
from verifai_desktop.verify.second_opinion import review
from verifai_desktop.verify.stoppable import StoppableVerifier

log = logging.getLogger(__name__)

MAX_ANSWER_SENTENCES = 6
PROMPT_MARGIN_TOKENS = 128  # room for the chat template around the messages
DEDUPE_SPARE = 2
"""Retrieval fetches this many times ``k`` passages, so that ``k`` remain after
near-duplicates are dropped (:func:`~verifai_desktop.generate.passages.dedupe_passages`)."""
PREPARE_STAGE = "prepare"
"""The :class:`Progress` stage of :meth:`AskSession.prepare`, in models."""


RetrieverFactory = Callable[[CollectionStore, Settings], PassageRetriever]


def claim_to_check(claim: str) -> str:
    """The text of ``claim`` that is checked: citation markers removed. The one validation of
    a claim, for :meth:`AskSession.check_claim` and the front ends before they start a check.

    Args:
        claim: any statement, e.g. a sentence of an answer (``"Heparin reduced DVT [2]."``).

    Returns:
        The claim without citation markers (``"Heparin reduced DVT."``).

    Raises:
        EmptyClaim: no letter or digit is left to check.
    """
    text = strip_citations(claim)
    if not any(ch.isalnum() for ch in text):
        raise EmptyClaim(claim)
    return text


CHECK_ROLES = ("verifier", "embedder")
"""The models a claim check uses (and names in :attr:`CheckResult.models`): no generator."""


def _identity(name: str, role: Role) -> dict[str, str]:
    """``{name, path, sha256}`` of a model, or just its name when the catalog cannot place it."""
    try:
        return modelstore.resolve(name, role).as_dict()
    except ModelNotFound:
        return {"name": name, "sha256": ""}


@dataclass(frozen=True, slots=True)
class AskResult:
    """An answer plus the prompt that produced it (None when abstaining); for evaluation."""

    answer: Answer
    prompt: AnswerPrompt | None


class AskSession:
    """Answers questions from collections, keeping the generator and verifier loaded.

    The UI holds one session; the constructor is cheap and each model loads on first use.
    Components may be injected (tests use fakes behind the protocols). One question runs at a
    time (a lock serialises :meth:`ask_detailed`).

    Args:
        settings: the settings in effect (the caller loads them; the session never reads
            ``settings.toml``).
        generator: a :class:`~verifai_desktop.generate.Generator`; ``settings.models.generator``
            (plus ``lora_path``) if None.
        verifier: a :class:`~verifai_desktop.verify.check.Verifier`; ``settings.models.verifier``
            if None.
        retriever_factory: builds the retriever of a collection; a
            :class:`~verifai_desktop.retrieve.Retriever` with ``settings.retrieval`` if None.
        splitter: sentence splitter for answers; the ingest splitter if None.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        generator: Generator | None = None,
        verifier: Verifier | None = None,
        retriever_factory: RetrieverFactory | None = None,
        splitter: Splitter | None = None,
    ) -> None:
        self.settings = settings
        self._generator = generator
        self._verifier = verifier
        self._retriever_factory = retriever_factory
        self._retrievers: dict[int, tuple[CollectionStore, PassageRetriever]] = {}
        self._splitter = splitter
        self._identities: dict[str, dict[str, str]] = {}
        if generator is not None:
            self._identities["generator"] = {"name": type(generator).__name__, "sha256": ""}
        if verifier is not None:
            self._identities["verifier"] = {"name": type(verifier).__name__, "sha256": ""}
        self._lock = threading.Lock()
        self._presets: tuple[str, Presets] | None = None  # (verifier name, its card's presets)

    # -- components -----------------------------------------------------------------------

    @property
    def generator(self) -> Generator:
        """The generator (resolved and assembled on first use): the OpenAI-compatible server
        of ``settings.server`` when it names one, else in-process llama.cpp.

        Raises:
            ModelNotFound, ModelLoadError: the generator or LoRA file is missing or damaged.
        """
        if self._generator is None and self.settings.server.base_url:
            from verifai_desktop.generate.openai_server import ServerGenerator

            server = self.settings.server
            self._generator = ServerGenerator(server, self.settings.models)
            self._identities["generator"] = {
                "name": server.model,
                "path": redact_url(server.base_url),  # kept in answers and audit records
                "sha256": "",
            }
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
        """The NLI verifier (its model loads on first use).

        Raises:
            ModelNotFound: ``settings.models.verifier`` names no verifier.
        """
        if self._verifier is None:
            name = self.settings.models.verifier
            self._verifier = get_verifier(name)
            self._identities["verifier"] = _identity(name, "verifier")
        return self._verifier

    def thresholds(self) -> VerifySettings:
        """``settings.verify`` with the per-label thresholds of its preset, taken from the
        verifier's model card (:func:`~verifai_desktop.verify.presets.effective_thresholds`;
        a verifier without a card, or ``preset = "custom"``, keeps the settings' own)."""
        name = self.settings.models.verifier
        if self._presets is None or self._presets[0] != name:  # the card is read once
            verifier = self._verifier
            if verifier is None:
                try:  # the card only: the model loads (and is recorded) when a pair is verified
                    verifier = get_verifier(name)
                except ModelNotFound:
                    return self.settings.verify
            card = getattr(verifier, "card", None)
            self._presets = (name, getattr(card, "presets", {}))
        return effective_thresholds(self.settings.verify, self._presets[1])

    def settings_in_effect(self) -> Settings:
        """The settings with the thresholds actually applied (:meth:`thresholds`): what an
        answer records as made with (its JSON ``thresholds``, the history, the audit record)."""
        return dataclasses.replace(self.settings, verify=self.thresholds())

    def retriever(self, collection: CollectionStore) -> PassageRetriever:
        """The retriever of ``collection`` (cached per collection object).

        The default retriever records the collection's embedder as the session's ``embedder``
        model (it embeds the question).
        """
        key = id(collection)
        hit = self._retrievers.get(key)
        if hit is None or hit[0] is not collection:
            if self._retriever_factory is not None:
                retriever = self._retriever_factory(collection, self.settings)
            else:
                retriever = Retriever(collection, self.settings.retrieval)
                self._identities["embedder"] = _identity(collection.embedder_name, "embedder")
            hit = (collection, retriever)
            self._retrievers[key] = hit
        return hit[1]

    def set_identity(self, role: str, identity: dict[str, str]) -> None:
        """Record the identity (name, path, sha256) of an injected model."""
        self._identities[role] = dict(identity)

    def model_identities(self) -> dict[str, dict[str, str]]:
        """Role -> {name, path, sha256} of every model used so far."""
        return {role: dict(ident) for role, ident in self._identities.items()}

    def prepare(
        self,
        *,
        generator: bool = True,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        """Resolve the models before the first question, so that a missing one fails at once.

        The generator is located (its file resolved in the model store, or the server's client
        made); the llama.cpp model itself loads on its first prompt, sized to it. The verifier
        loads (:meth:`Verifier.load`). Both stay with the session for the questions after.

        Args:
            generator: locate the generator too (an answer needs it; a claim check does not).
            progress: reports stage :data:`PREPARE_STAGE`, in models: before each step, its
                ``message`` says what is happening (``"locating the generator…"``,
                ``"loading the verifier…"``); then done == total, without a message.
            cancel: set to stop before the next step.

        Raises:
            ModelNotFound, ModelLoadError: a model is missing or damaged.
            Cancelled: ``cancel`` was set.
        """
        steps: list[tuple[str, Callable[[], object]]] = []
        if generator:
            steps.append(("locating the generator…", lambda: self.generator))
        steps.append(("loading the verifier…", lambda: self.verifier.load()))
        for done, (message, step) in enumerate(steps):
            if cancel is not None and cancel.is_set():
                raise Cancelled("loading the models")
            if progress:
                progress(Progress(PREPARE_STAGE, done, len(steps), "models", message))
            step()
        if progress:
            progress(Progress(PREPARE_STAGE, len(steps), len(steps), "models"))

    # -- asking ---------------------------------------------------------------------------

    def ask(
        self,
        collection: CollectionStore,
        question: str,
        *,
        k: int | None = None,
        on_token: Callable[[str], None] | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """Answer ``question`` from ``collection`` with cited, verified sentences.

        Steps: retrieve the top-k passages (reference-list chunks left out when
        ``settings.retrieval.exclude_references``), near-duplicates dropped; abstain
        (:data:`ABSTAIN_TEXT`, with the closest passages) when the best raw cosine is below
        ``settings.verify.abstain_threshold``; give the generator the passages, best first,
        that fit the passage token budget (``settings.generation``, larger when the generator
        runs on a GPU) and generate under the citation grammar, streaming pieces to
        ``on_token``; verify every answer sentence against every passage given, a verifier
        batch per sentence, at ``settings.verify.premise`` granularity, label the sentences and
        re-cite those their citations do not support (``settings.verify.recite``,
        :mod:`verifai_desktop.verify.answer`); search the whole collection for passages that
        contradict each sentence (``settings.verify.conflict_search``); abstain by evidence
        (``AbstainReason.UNSUPPORTED``) when no sentence is supported
        (``settings.verify.abstain_unsupported``). ``Answer.passages`` are the passages given,
        numbered as in the prompt.

        Args:
            collection: an open collection.
            question: the question.
            k: most passages given to the generator (the token budget may give fewer);
                ``settings.retrieval.k`` if None.
            on_token: called with each generated text piece, in order.
            progress: reports, in order: ``retrieve`` (when done, with the passages found),
                ``prompt`` (passages given of those found, with them), ``read`` (prompt tokens
                read), ``generate`` (reply pieces), ``verify`` (answer sentences checked),
                ``conflicts`` (the collection-wide search for contradictions, when on).
            cancel: set to stop.

        Returns:
            The answer, with per-stage wall times in ms (``retrieve``, ``generate``,
            ``first_token``, ``verify``, ``total``) and model identities (name, path, sha256).

        Raises:
            ModelNotFound, ModelLoadError: a model is missing or damaged.
            SettingsError: ``k`` is below 1 or a setting is out of range.
            GenerationError: the generator failed.
            Cancelled: ``cancel`` was set.
        """
        return self.ask_detailed(
            collection, question, k=k, on_token=on_token, progress=progress, cancel=cancel
        ).answer

    def ask_detailed(
        self,
        collection: CollectionStore,
        question: str,
        *,
        k: int | None = None,
        on_token: Callable[[str], None] | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> AskResult:
        """Like :meth:`ask`, also returning the prompt used (None when abstaining)."""
        with self._lock, FOREGROUND.answering():  # background jobs wait their turn
            return self._ask(collection, question, k, on_token, progress, cancel)

    def search(
        self,
        collection: CollectionStore,
        query: str,
        *,
        k: int | None = None,
        verifier: Verifier | None = None,
    ) -> tuple[Passage, ...]:
        """Up to ``k`` passages for ``query`` (``settings.retrieval.k`` if None): retrieval's
        order, or reranked by evidence with ``settings.retrieval.rerank``
        (:func:`~verifai_desktop.rerank.search_reranked`; ``verifier``: the session's if None).

        Raises:
            SettingsError: a retrieval setting is out of range.
            ModelNotFound, ModelLoadError: reranking needs the verifier and it is missing or
                damaged.
        """
        check_retrieval(self.settings.retrieval)
        return search_reranked(
            self.retriever(collection),
            verifier or StoppableVerifier(lambda: self.verifier),
            query,
            self.settings.retrieval,
            k=k,
            thresholds=self.thresholds(),
        )

    def check_claim(
        self,
        collection: CollectionStore,
        claim: str,
        *,
        budget: int | None = None,
        cancel: threading.Event | None = None,
    ) -> CheckResult:
        """Search ``collection`` for passages that support or contradict ``claim``
        (:func:`~verifai_desktop.contradictions.check_claim`).

        Args:
            collection: an open collection.
            claim: any statement (citation markers are removed).
            budget: candidate passages verified; ``settings.verify.conflict_budget`` if None.
            cancel: set to stop; checked between verifier batches.

        Returns:
            Supporting and contradicting passages, a verdict per document, and the models
            that made them (:data:`CHECK_ROLES` of :meth:`model_identities`).

        Raises:
            ModelNotFound, ModelLoadError: the verifier or the embedder is missing or damaged.
            SettingsError: ``budget`` is below 1 or a setting is out of range.
            EmptyClaim: ``claim`` has no words (:func:`claim_to_check`).
            Cancelled: ``cancel`` was set.
        """
        check_verify(self.settings.verify)
        budget = self.settings.verify.conflict_budget if budget is None else budget
        if budget < 1:
            raise SettingsError("budget", f"{budget!r}; verify 1 or more passages")
        text = claim_to_check(claim)
        with self._lock:
            retriever = self.retriever(collection)
            verifier = StoppableVerifier(lambda: self.verifier, cancel)
            result = check_claim(retriever, verifier, text, self.thresholds(), budget=budget)
            used = {r: i for r, i in self.model_identities().items() if r in CHECK_ROLES}
            return dataclasses.replace(result, models=used)

    def _check(self, cancel: threading.Event | None) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("question")

    def _ask(
        self,
        collection: CollectionStore,
        question: str,
        k: int | None,
        on_token: Callable[[str], None] | None,
        progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> AskResult:
        settings = self.settings
        check_retrieval(settings.retrieval)
        check_generation(settings.generation)
        check_verify(settings.verify)
        k = settings.retrieval.k if k is None else k
        if k <= 0:
            raise SettingsError("k", f"{k!r}; ask for 1 or more passages")
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
        rerank_n = settings.retrieval.rerank_candidates if settings.retrieval.rerank else 0
        retrieved = self.retriever(collection).search(
            question,
            k=DEDUPE_SPARE * max(k, rerank_n),
            include_references=not settings.retrieval.exclude_references,
        )
        passages = dedupe_passages(retrieved)
        timings["retrieve"] = (time.perf_counter() - t0) * 1000
        # one memo for the request: a pair reranking classified is not classified again; Stop
        # is heard between verifier batches
        verifier = MemoVerifier(StoppableVerifier(lambda: self.verifier, cancel))
        if rerank_n:
            report("rerank", 0, 1, "steps", f"reading the top {rerank_n} passages for evidence")
            self._check(cancel)
            t0 = time.perf_counter()
            passages = rerank_by(
                settings.retrieval, verifier, question, passages, self.thresholds()
            )
            timings["rerank"] = (time.perf_counter() - t0) * 1000
        passages = passages[:k]
        if progress:  # the passages found, shown while the generator reads them
            progress(Progress("retrieve", 1, 1, "steps", f"{len(passages)} passages", passages))
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
                abstain_reason=AbstainReason.RETRIEVAL,
            )
            return AskResult(answer, None)

        # -- generate ------------------------------------------------------------------
        generator = self.generator
        t0 = time.perf_counter()
        budget = settings.generation.passage_budget(gpu=uses_gpu(generator))
        prompt = build_answer_prompt(
            question,
            passages,
            count_tokens=generator.count_tokens,
            max_prompt_tokens=settings.models.context_tokens
            - settings.models.max_answer_tokens
            - PROMPT_MARGIN_TOKENS,
            passage_budget_tokens=budget,
            quote_first=settings.generation.quote_first,
            reading_sentences=settings.generation.reading_sentences,
            cut_to_question=settings.generation.cut_to_question,
            keep_best_sentence=settings.generation.keep_best_sentence,
        )
        log.info(
            "prompt: %d of %d passages, %d passage tokens (budget %d), %d cut, %d tokens in all",
            len(prompt.passages),
            len(passages),
            prompt.passage_tokens,
            budget,
            prompt.truncated,
            prompt.prompt_tokens,
        )
        found, passages = passages, prompt.passages  # citations number the passages given
        if progress:
            progress(Progress("prompt", len(passages), len(found), "passages", "", passages))
        grammar = citation_grammar(len(passages), max_sentences=MAX_ANSWER_SENTENCES)
        pieces: list[str] = []
        first_token_ms: float | None = None
        report("generate", 0, settings.models.max_answer_tokens, "tokens")
        stream: Iterator[str] = generator.stream(
            prompt.messages, grammar=grammar, progress=progress, cancel=cancel
        )
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
        timings["first_token"] = timings["generate"] if first_token_ms is None else first_token_ms
        read, wrote = (getattr(generator, f"last_{k}", 0) for k in TOKEN_COUNTS)
        timings.update(
            prompt_tokens=read or prompt.prompt_tokens, generated_tokens=wrote or len(pieces)
        )

        # -- verify --------------------------------------------------------------------
        self._check(cancel)
        t0 = time.perf_counter()
        thresholds = self.thresholds()
        verified = verify_answer(
            verifier, text, passages, thresholds, splitter=self._splitter, progress=progress
        )
        sentences = verified.sentences
        if settings.verify.second_opinion:
            n = len(sentences)
            report("verify", n, n, "sentences", "a second reading of figures and negations")
            self._check(cancel)
            sentences, judged = review(self.generator, sentences, thresholds)
            log.info("second opinion: %d verdicts judged by the generator", judged)
        retriever = self.retriever(collection)
        if settings.verify.conflict_search:
            report("conflicts", 0, 1, "steps", "searching the collection for contradictions")
            self._check(cancel)
            # the verifier loads only if the search finds candidates
            sentences = add_conflicts(retriever, verifier, sentences, passages, thresholds)
        timings["verify"] = (time.perf_counter() - t0) * 1000
        timings["total"] = (time.perf_counter() - t_start) * 1000
        unsupported = settings.verify.abstain_unsupported and not supported_anywhere(
            sentences, best_guess=settings.verify.abstain_best_guess
        )
        if unsupported:
            log.info("abstaining: no sentence of the answer is supported")
        answer = Answer(
            question=question,
            text=verified.text,
            sentences=sentences,
            passages=passages,
            abstained=unsupported,
            timings_ms=timings,
            models=self.model_identities(),
            generated_text=verified.generated_text,
            abstain_reason=AbstainReason.UNSUPPORTED if unsupported else AbstainReason.NONE,
            passages_left_out=prompt.left_out,
        )
        return AskResult(answer, prompt)
