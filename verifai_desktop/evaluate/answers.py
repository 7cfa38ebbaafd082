"""`verifai eval answers`: whole answers on PubMedQA, measured by their citations.

A collection is built from the PubMedQA abstracts (PQA-L ``ori_pqal.json``: the CONTEXTS of a
PMID joined into one document, source key ``pubmedqa:<pmid>``). Each question is asked through
the real pipeline (retrieve, generate under the citation grammar, verify) and we report:

* citation coverage: answer sentences with at least one citation (TREC BioGen 2025 / BioACE);
* invalid citations: cited numbers naming no given passage (dropped; 0 under the grammar);
* citation support / contradict rates: (sentence, cited passage) pairs whose verifier
  P(SUPPORT) >= support_threshold / P(CONTRADICT) >= contradict_threshold;
* gold cited: questions whose own abstract is among the cited passages (and among retrieved);
* decision agreement: yes/no/maybe vs the gold ``final_decision``. The decision is a second,
  grammar-constrained one-word turn ("yes" | "no" | "maybe") appended to the answer chat;
* mean wall time per stage;
* the refusal / hallucination trade-off: every question is answered (abstention off), then
  for each threshold t a question counts as refused when its best raw cosine < t, and we
  report the refusal rate and the share of not-supported sentences among the kept answers.

Anchors (TREC BioGen 2025, BioACE): best run coverage 99.36%, support 98.33%; GEHC run 98.77%
coverage, 95.39% support, 0.00% contradict.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop import modelstore
from verifai_desktop.domain import (
    Answer,
    DocFormat,
    Document,
    Location,
    LocationKind,
    Passage,
    Progress,
    Section,
    SentenceLabel,
)
from verifai_desktop.errors import Cancelled, DatasetError
from verifai_desktop.generate import Generator, make_generator, uses_gpu
from verifai_desktop.generate.grammar import decision_grammar
from verifai_desktop.generate.prompt import (
    DECISION_PROMPT,
    AnswerPrompt,
    ChatMessage,
    decision_messages,
)
from verifai_desktop.pipeline import AskSession, best_semantic
from verifai_desktop.settings import Settings, data_root
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.writer import ingest_documents
from verifai_desktop.verify.check import Verifier

log = logging.getLogger(__name__)

KEY_PREFIX = "pubmedqa:"
DECISIONS: tuple[str, ...] = ("yes", "no", "maybe")
SWEEP_THRESHOLDS: tuple[float, ...] = (0.0, 0.25, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
ANCHORS: tuple[tuple[str, float, float, float | None], ...] = (
    ("TREC BioGen 2025 best (BioACE)", 99.36, 98.33, None),
    ("TREC BioGen 2025 GEHC (BioACE)", 98.77, 95.39, 0.00),
)


@dataclass(frozen=True, slots=True)
class PubMedQAItem:
    """One PubMedQA (PQA-L) question.

    Attributes:
        pmid: PubMed id of the question's abstract.
        question: the question (the article title as a question).
        contexts: the abstract's paragraphs without its conclusion.
        final_decision: gold ``yes`` / ``no`` / ``maybe``.
    """

    pmid: str
    question: str
    contexts: tuple[str, ...]
    final_decision: str


def load_pubmedqa(path: Path) -> tuple[PubMedQAItem, ...]:
    """Read ``ori_pqal.json`` (PMID -> {QUESTION, CONTEXTS, final_decision, ...}), file order.

    Raises:
        DatasetError: not readable JSON of that shape.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        items = tuple(
            PubMedQAItem(
                str(pmid),
                str(v["QUESTION"]),
                tuple(str(c) for c in v["CONTEXTS"]),
                str(v["final_decision"]).lower(),
            )
            for pmid, v in data.items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DatasetError(path, str(exc)) from exc
    return items


def to_document(item: PubMedQAItem) -> Document:
    """The abstract as a one-section document whose path is its source key."""
    text = "\n\n".join(c.strip() for c in item.contexts)
    return Document(
        path=Path(f"{KEY_PREFIX}{item.pmid}"),
        format=DocFormat.TXT,
        title=f"PMID {item.pmid}",
        text=text,
        sections=(
            Section(0, len(text), Location(LocationKind.SECTION, heading=f"PMID {item.pmid}")),
        ),
    )


def passage_pmid(passage: Passage) -> str | None:
    """PMID of a passage from a PubMedQA collection (its path is ``pubmedqa:<pmid>``)."""
    name = str(passage.path).replace("\\", "/").rsplit("/", 1)[-1]
    return name[len(KEY_PREFIX) :] if name.startswith(KEY_PREFIX) else None


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """What happened to one question.

    Attributes:
        pmid: the question's PMID.
        gold: gold decision.
        decision: our yes/no/maybe.
        best_cosine: best raw cosine of the retrieved passages (None if none had one).
        gold_retrieved: the gold abstract is among the passages given.
        gold_cited: the gold abstract is among the passages cited.
        labels: sentence labels, in order.
        n_pairs: (sentence, cited passage) pairs verified.
        n_support: pairs with P(SUPPORT) >= support threshold.
        n_contradict: pairs with P(CONTRADICT) >= contradict threshold.
        n_invalid: invalid citation numbers.
        timings_ms: per-stage wall time (``decide`` included).
        answer: the answer text.
        gold_cited_generator: the gold abstract is among the generator's own citations
            (before re-citation).
        generator_labels: sentence labels from the generator's own citations.
        n_pairs_generator: (sentence, passage the generator cited) pairs.
        n_support_generator: those with P(SUPPORT) >= support threshold.
        n_contradict_generator: those with P(CONTRADICT) >= contradict threshold.
        n_conflicts: sentences with conflicting evidence elsewhere in the collection.
        held_out: the question's own abstract was left out of the collection (held-out mode).
    """

    pmid: str
    gold: str
    decision: str
    best_cosine: float | None
    gold_retrieved: bool
    gold_cited: bool
    labels: tuple[str, ...]
    n_pairs: int
    n_support: int
    n_contradict: int
    n_invalid: int
    timings_ms: dict[str, float]
    answer: str
    gold_cited_generator: bool = False
    generator_labels: tuple[str, ...] = ()
    n_pairs_generator: int = 0
    n_support_generator: int = 0
    n_contradict_generator: int = 0
    n_conflicts: int = 0
    held_out: bool = False

    @property
    def evidence_refused(self) -> bool:
        """Abstention by evidence: no sentence is supported (or partially) after re-citation."""
        return not any(label in SUPPORTED_LABELS for label in self.labels)


SUPPORTED_LABELS = frozenset(
    {SentenceLabel.SUPPORTED.value, SentenceLabel.PARTIALLY_SUPPORTED.value}
)
"""Labels that count as support for abstention by evidence."""


@dataclass(frozen=True, slots=True)
class CitationRow:
    """Citation figures of one citation set (the generator's own, or after re-citation), %.

    Attributes:
        name: which citations.
        coverage_pct: sentences with at least one citation.
        gold_cited_pct: questions whose own abstract is cited.
        support_pct: (sentence, cited passage) pairs with P(SUPPORT) >= threshold.
        contradict_pct: pairs with P(CONTRADICT) >= threshold.
        supported_sentences_pct: sentences labelled supported.
    """

    name: str
    coverage_pct: float
    gold_cited_pct: float
    support_pct: float
    contradict_pct: float
    supported_sentences_pct: float


@dataclass(frozen=True, slots=True)
class HeldOutRow:
    """Held-out mode, one abstention rule at one retrieval threshold (percentages).

    Attributes:
        rule: ``"retrieval"`` (best cosine < threshold) or ``"retrieval + evidence"`` (also
            refuse when no sentence is supported after re-citation).
        threshold: the retrieval threshold.
        refused_held_out_pct: refusals among questions whose abstract was removed (should be
            refused).
        refused_kept_pct: refusals among questions whose abstract is in the collection.
        unsupported_pct: not-supported sentences among the answers kept (both halves).
        kept_answers: answers kept.
    """

    rule: str
    threshold: float
    refused_held_out_pct: float
    refused_kept_pct: float
    unsupported_pct: float
    kept_answers: int


@dataclass(frozen=True, slots=True)
class AbstentionRow:
    """One abstention threshold: refusal rate vs not-supported share of kept answers (%)."""

    threshold: float
    refusal_pct: float
    unsupported_pct: float
    contradicted_pct: float
    kept_sentences: int


@dataclass(frozen=True, slots=True)
class AnswersReport:
    """Aggregates over the questions asked (percentages 0..100).

    Attributes:
        n_questions: questions asked.
        n_documents: abstracts in the collection.
        k: passages per question.
        n_sentences: answer sentences in all.
        coverage_pct: sentences with >= 1 valid citation.
        invalid_citation_pct: invalid citation numbers among all cited numbers.
        support_pct: verified pairs with P(SUPPORT) >= support threshold.
        contradict_pct: verified pairs with P(CONTRADICT) >= contradict threshold.
        label_pct: share of sentences per label.
        gold_retrieved_pct: questions whose gold abstract was retrieved.
        gold_cited_pct: questions whose gold abstract was cited.
        decision_accuracy_pct: decision equal to the gold final_decision.
        decision_counts: how often we said yes/no/maybe.
        mean_ms: mean wall time per stage.
        sweep: the refusal / hallucination trade-off.
        decision_method: how yes/no/maybe was derived.
        models: model identities.
        questions: per-question results.
        citations: the generator's own citations vs after re-citation.
        conflict_sentences_pct: sentences with conflicting evidence in the collection.
        verify_share_pct: verification (re-citation + contradiction search) as a share of
            the answer's wall time (mean verify / mean total, same run).
        held_out: the held-out sweep (held-out mode only).
        sentences_per_answer: mean answer length, sentences.
    """

    n_questions: int
    n_documents: int
    k: int
    n_sentences: int
    coverage_pct: float
    invalid_citation_pct: float
    support_pct: float
    contradict_pct: float
    label_pct: dict[str, float]
    gold_retrieved_pct: float
    gold_cited_pct: float
    decision_accuracy_pct: float
    decision_counts: dict[str, int]
    mean_ms: dict[str, float]
    sweep: tuple[AbstentionRow, ...]
    decision_method: str
    models: dict[str, dict[str, str]]
    questions: tuple[QuestionResult, ...]
    citations: tuple[CitationRow, ...] = ()
    conflict_sentences_pct: float = 0.0
    verify_share_pct: float = 0.0
    held_out: tuple[HeldOutRow, ...] = ()
    sentences_per_answer: float = 0.0


def _pct(num: float, den: float) -> float:
    return 100.0 * num / den if den else 0.0


def question_result(
    item: PubMedQAItem,
    answer: Answer,
    decision: str,
    settings: Settings,
    decide_ms: float,
    *,
    held_out: bool = False,
) -> QuestionResult:
    """Score one answered question."""
    thresholds = settings.verify
    cited = {n for s in answer.sentences for n in s.citations}
    cited_gen = {n for s in answer.sentences for n in s.generator_citations}
    pmids = [passage_pmid(p) for p in answer.passages]
    verdicts = [v for s in answer.sentences for v in s.verdicts]
    gen_verdicts = [
        v for s in answer.sentences for v in (s.generator_verdicts if s.recited else s.verdicts)
    ]
    timings = dict(answer.timings_ms)
    timings["decide"] = decide_ms
    return QuestionResult(
        pmid=item.pmid,
        gold=item.final_decision,
        decision=decision,
        best_cosine=best_semantic(answer.passages),
        gold_retrieved=item.pmid in pmids,
        gold_cited=any(pmids[n - 1] == item.pmid for n in cited),
        labels=tuple(s.label.value for s in answer.sentences),
        n_pairs=len(verdicts),
        n_support=sum(v.p_support >= thresholds.support_threshold for v in verdicts),
        n_contradict=sum(v.p_contradict >= thresholds.contradict_threshold for v in verdicts),
        n_invalid=sum(len(s.invalid_citations) for s in answer.sentences),
        timings_ms=timings,
        answer=answer.text,
        gold_cited_generator=any(pmids[n - 1] == item.pmid for n in cited_gen),
        generator_labels=tuple((s.generator_label or s.label).value for s in answer.sentences),
        n_pairs_generator=len(gen_verdicts),
        n_support_generator=sum(v.p_support >= thresholds.support_threshold for v in gen_verdicts),
        n_contradict_generator=sum(
            v.p_contradict >= thresholds.contradict_threshold for v in gen_verdicts
        ),
        n_conflicts=sum(bool(s.conflicts) for s in answer.sentences),
        held_out=held_out,
    )


def abstention_sweep(
    results: Sequence[QuestionResult], thresholds: Sequence[float] = SWEEP_THRESHOLDS
) -> tuple[AbstentionRow, ...]:
    """Refusal rate vs share of not-supported sentences in kept answers, per threshold.

    A question is refused at threshold t when its best raw cosine is below t (as
    :func:`verifai_desktop.pipeline.should_abstain` decides).
    """
    rows = []
    for t in thresholds:
        kept = [r for r in results if r.best_cosine is None or r.best_cosine >= t]
        labels = [label for r in kept for label in r.labels]
        rows.append(
            AbstentionRow(
                threshold=t,
                refusal_pct=_pct(len(results) - len(kept), len(results)),
                unsupported_pct=_pct(
                    sum(label != SentenceLabel.SUPPORTED.value for label in labels), len(labels)
                ),
                contradicted_pct=_pct(
                    sum(label == SentenceLabel.CONTRADICTED.value for label in labels), len(labels)
                ),
                kept_sentences=len(labels),
            )
        )
    return tuple(rows)


def aggregate(
    results: Sequence[QuestionResult],
    *,
    n_documents: int,
    k: int,
    models: dict[str, dict[str, str]],
) -> AnswersReport:
    """Aggregate per-question results into a report."""
    labels = [label for r in results for label in r.labels]
    n_sent = len(labels)
    n_pairs = sum(r.n_pairs for r in results)
    n_invalid = sum(r.n_invalid for r in results)
    stages: dict[str, list[float]] = {}
    for r in results:
        for stage, ms in r.timings_ms.items():
            stages.setdefault(stage, []).append(ms)
    counts = {d: sum(r.decision == d for r in results) for d in DECISIONS}
    mean = {s: sum(v) / len(v) for s, v in stages.items()}
    return AnswersReport(
        n_questions=len(results),
        n_documents=n_documents,
        k=k,
        n_sentences=n_sent,
        coverage_pct=_pct(
            sum(label != SentenceLabel.UNREFERENCED.value for label in labels), n_sent
        ),
        invalid_citation_pct=_pct(n_invalid, n_pairs + n_invalid),
        support_pct=_pct(sum(r.n_support for r in results), n_pairs),
        contradict_pct=_pct(sum(r.n_contradict for r in results), n_pairs),
        label_pct={lab.value: _pct(labels.count(lab.value), n_sent) for lab in SentenceLabel},
        gold_retrieved_pct=_pct(sum(r.gold_retrieved for r in results), len(results)),
        gold_cited_pct=_pct(sum(r.gold_cited for r in results), len(results)),
        decision_accuracy_pct=_pct(sum(r.decision == r.gold for r in results), len(results)),
        decision_counts=counts,
        mean_ms=mean,
        sweep=abstention_sweep(results),
        decision_method=(
            "second chat turn after the answer, grammar-constrained to one word "
            "(yes | no | maybe), prompt: " + _decision_prompt()
        ),
        models=models,
        questions=tuple(results),
        citations=citation_rows(results),
        conflict_sentences_pct=_pct(sum(r.n_conflicts for r in results), n_sent),
        verify_share_pct=_pct(mean.get("verify", 0.0), mean.get("total", 0.0)),
        held_out=held_out_sweep(results) if any(r.held_out for r in results) else (),
        sentences_per_answer=n_sent / len(results) if results else 0.0,
    )


def citation_rows(results: Sequence[QuestionResult]) -> tuple[CitationRow, CitationRow]:
    """The generator's own citations vs the citations after re-citation."""
    rows = []
    for name, labels, gold, pairs, sup, con in (
        (
            "generator's citations",
            [lab for r in results for lab in r.generator_labels],
            sum(r.gold_cited_generator for r in results),
            sum(r.n_pairs_generator for r in results),
            sum(r.n_support_generator for r in results),
            sum(r.n_contradict_generator for r in results),
        ),
        (
            "after re-citation",
            [lab for r in results for lab in r.labels],
            sum(r.gold_cited for r in results),
            sum(r.n_pairs for r in results),
            sum(r.n_support for r in results),
            sum(r.n_contradict for r in results),
        ),
    ):
        rows.append(
            CitationRow(
                name=name,
                coverage_pct=_pct(
                    sum(lab != SentenceLabel.UNREFERENCED.value for lab in labels), len(labels)
                ),
                gold_cited_pct=_pct(gold, len(results)),
                support_pct=_pct(sup, pairs),
                contradict_pct=_pct(con, pairs),
                supported_sentences_pct=_pct(
                    sum(lab == SentenceLabel.SUPPORTED.value for lab in labels), len(labels)
                ),
            )
        )
    return rows[0], rows[1]


def held_out_sweep(
    results: Sequence[QuestionResult], thresholds: Sequence[float] = SWEEP_THRESHOLDS
) -> tuple[HeldOutRow, ...]:
    """Refusal rates on the held-out and kept halves, and the not-supported share of the
    answers kept, for both abstention rules at every retrieval threshold."""
    held = [r for r in results if r.held_out]
    kept_half = [r for r in results if not r.held_out]
    rows = []
    for rule in ("retrieval", "retrieval + evidence"):
        for t in thresholds:

            def refused(r: QuestionResult, t: float = t, rule: str = rule) -> bool:
                by_retrieval = r.best_cosine is not None and r.best_cosine < t
                return by_retrieval or (rule != "retrieval" and r.evidence_refused)

            answered = [r for r in results if not refused(r)]
            labels = [lab for r in answered for lab in r.labels]
            rows.append(
                HeldOutRow(
                    rule=rule,
                    threshold=t,
                    refused_held_out_pct=_pct(sum(refused(r) for r in held), len(held)),
                    refused_kept_pct=_pct(sum(refused(r) for r in kept_half), len(kept_half)),
                    unsupported_pct=_pct(
                        sum(lab != SentenceLabel.SUPPORTED.value for lab in labels), len(labels)
                    ),
                    kept_answers=len(answered),
                )
            )
    return tuple(rows)


def _decision_prompt() -> str:
    return repr(DECISION_PROMPT)


def decide(generator: Generator, prompt: AnswerPrompt, answer_text: str) -> str:
    """A one-word yes/no/maybe decision for an answered question (the PubMedQA decision).

    The answer chat is continued with a constrained one-word question (grammar
    ``yes | no | maybe``); the shared prefix reuses llama.cpp's KV cache.

    Args:
        generator: the generator that wrote the answer (the session's).
        prompt: the answer's prompt.
        answer_text: the answer as generated.

    Returns:
        ``"yes"``, ``"no"`` or ``"maybe"``.
    """
    reply = "".join(
        generator.stream(
            decision_messages(prompt, answer_text), grammar=decision_grammar(), max_tokens=4
        )
    )
    return reply.strip().lower()


class CachingGenerator:
    """A generator that replays earlier replies to identical requests (evaluation only).

    Decoding is greedy with a fixed seed, so a reply is a function of the model file, the
    messages, the grammar and the token limit; re-running an evaluation (e.g. with another
    verifier or thresholds) then costs no generation. Replies are kept with the wall times
    they took, which the report uses instead of the replay's near-zero time.

    Args:
        inner: the real generator.
        model_sha256: sha256 of the model file (part of the key).
        path: JSON file holding the cache.
    """

    def __init__(self, inner: Generator, model_sha256: str, path: Path) -> None:
        self.inner = inner
        self.model_sha256 = model_sha256
        self.path = path
        self.last: dict[str, float] | None = None
        try:
            self._cache: dict[str, dict[str, object]] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._cache = {}
        self.hits = 0

    def count_tokens(self, text: str) -> int:
        """Token count from the real model."""
        return self.inner.count_tokens(text)

    @property
    def gpu_offload(self) -> bool:
        """Whether the real model runs on a GPU (it picks the prompt's passage budget)."""
        return uses_gpu(self.inner)

    def _key(
        self, messages: Sequence[ChatMessage], grammar: str | None, max_tokens: int | None
    ) -> str:
        blob = json.dumps(
            [self.model_sha256, [m.as_dict() for m in messages], grammar, max_tokens],
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        grammar: str | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        """Replay a cached reply (no prompt is read: no progress), or stream from the real
        model and remember it."""
        key = self._key(messages, grammar, max_tokens)
        hit = self._cache.get(key) if temperature == 0.0 else None
        if hit is not None:
            self.hits += 1
            self.last = {
                "generate": float(hit["generate_ms"]),  # type: ignore[arg-type]
                "first_token": float(hit["first_token_ms"]),  # type: ignore[arg-type]
            }
            yield str(hit["text"])
            return
        t0 = time.perf_counter()
        first: float | None = None
        pieces = []
        for piece in self.inner.stream(
            messages,
            grammar=grammar,
            max_tokens=max_tokens,
            temperature=temperature,
            progress=progress,
            cancel=cancel,
        ):
            if first is None:
                first = (time.perf_counter() - t0) * 1000
            pieces.append(piece)
            yield piece
        total = (time.perf_counter() - t0) * 1000
        self.last = {"generate": total, "first_token": first if first is not None else total}
        if temperature == 0.0:
            self._cache[key] = {
                "text": "".join(pieces),
                "generate_ms": total,
                "first_token_ms": self.last["first_token"],
            }
            self._save()

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._cache), encoding="utf-8")
        os.replace(tmp, self.path)


def build_collection(
    name: str,
    items: Sequence[PubMedQAItem],
    *,
    settings: Settings,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Create or update collection ``name`` to hold exactly the abstracts of ``items``.

    Unchanged abstracts are skipped by the ingest (same text hash). Returns the document count.
    """
    keys = {f"{KEY_PREFIX}{it.pmid}" for it in items}

    def docs() -> Iterator[tuple[str, Document]]:
        for it in items:
            yield f"{KEY_PREFIX}{it.pmid}", to_document(it)

    with Collection.open(name, create=True, settings=settings) as collection:
        stale = [str(getattr(rec, "source", "")) for rec in collection.documents()]
        stale = [key for key in stale if key and key not in keys]
        if stale:
            collection.remove_sources(stale)
        ingest_documents(collection, docs(), progress=progress, cancel=cancel, total=len(items))
        return len(collection.documents())


def held_out_corpus(
    corpus: Sequence[PubMedQAItem], asked: Sequence[PubMedQAItem]
) -> tuple[tuple[PubMedQAItem, ...], frozenset[str]]:
    """The held-out mode's corpus: ``corpus`` without the own abstract of every other question
    asked (the 1st, 3rd, ...); returns it and the PMIDs removed."""
    held = frozenset(it.pmid for it in asked[0::2])
    return tuple(it for it in corpus if it.pmid not in held), held


def evaluate_pubmedqa(
    path: Path,
    *,
    limit: int = 30,
    k: int = 5,
    corpus_limit: int | None = None,
    skip: int = 0,
    collection_name: str = "pubmedqa-eval",
    settings: Settings,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    verifier: Verifier | None = None,
    use_cache: bool = True,
    held_out: bool = False,
) -> AnswersReport:
    """Ask ``limit`` PubMedQA questions, after the first ``skip``, over a collection of abstracts.

    Args:
        path: ``ori_pqal.json``.
        limit: questions asked (file order).
        k: passages per question.
        corpus_limit: abstracts indexed (file order; at least up to the last question asked);
            all if None.
        skip: questions passed over before the ones asked. The first 40 are the reported
            set; choices (the answer prompt, ``benchmarks/answer_prompt.py``) are made on
            questions after them (``skip=40``).
        collection_name: collection built (or reused when unchanged).
        settings: the settings in effect; abstention is switched off for the run (see the
            module docstring).
        progress: per-question progress (stage ``"questions"``) and ingest progress.
        cancel: set to stop between questions.
        verifier: the NLI verifier; ``settings.models.verifier`` if None.
        use_cache: replay identical generations from ``<data root>/cache/generations.json``
            (see :class:`CachingGenerator`).
        held_out: leave the own abstract of every other question asked (the 1st, 3rd, ...)
            out of the collection (named ``<collection_name>-heldout``): those questions
            should be refused (:func:`held_out_sweep`).

    Returns:
        The report.

    Raises:
        DatasetError: the file is unreadable.
        Cancelled: ``cancel`` was set.
    """
    items = load_pubmedqa(path)
    corpus = items if corpus_limit is None else items[: max(corpus_limit, skip + limit)]
    asked = items[skip : skip + limit]
    held: frozenset[str] = frozenset()
    if held_out:
        corpus, held = held_out_corpus(corpus, asked)
        collection_name = f"{collection_name}-heldout"
    n_docs = build_collection(
        collection_name, corpus, settings=settings, progress=progress, cancel=cancel
    )
    run_settings = dataclasses.replace(
        settings,
        verify=dataclasses.replace(
            settings.verify, abstain_threshold=-1.0, abstain_unsupported=False
        ),
    )
    ident = modelstore.resolve(settings.models.generator, "generator")
    generator: Generator = make_generator(ident.path, settings.models)
    cache: CachingGenerator | None = None
    if use_cache:
        cache = CachingGenerator(
            generator, ident.sha256, data_root() / "cache" / "generations.json"
        )
        generator = cache
    session = AskSession(run_settings, generator=generator, verifier=verifier)
    session.set_identity("generator", ident.as_dict())
    results = []
    with Collection.open(collection_name, settings=settings) as collection:
        for i, item in enumerate(asked, start=1):
            if cancel is not None and cancel.is_set():
                raise Cancelled("evaluation")
            if cache is not None:
                cache.last = None
            detailed = session.ask_detailed(collection, item.question, k=k)
            generated = dict(cache.last) if cache is not None and cache.last else {}
            if cache is not None:
                cache.last = None
            t0 = time.perf_counter()
            decision = "maybe"
            if detailed.prompt is not None:
                answer = detailed.answer
                decision = decide(
                    session.generator, detailed.prompt, answer.generated_text or answer.text
                )
            decide_ms = (time.perf_counter() - t0) * 1000
            if cache is not None and cache.last:
                decide_ms = cache.last["generate"]
            result = question_result(
                item, detailed.answer, decision, run_settings, decide_ms, held_out=item.pmid in held
            )
            if generated:  # report the original generation times, not the replay's
                replayed_ms = result.timings_ms.get("generate", 0.0)
                result.timings_ms.update(generated)
                result.timings_ms["total"] = (
                    result.timings_ms.get("total", 0.0) - replayed_ms + generated["generate"]
                )
            results.append(result)
            if progress:
                progress(Progress("questions", i, len(asked), "questions", item.pmid))
    return aggregate(results, n_documents=n_docs, k=k, models=session.model_identities())


def format_report(report: AnswersReport) -> str:
    """The report as plain-text tables."""
    lines = [
        f"PubMedQA answers: {report.n_questions} questions, {report.n_documents} abstracts, "
        f"k={report.k}, {report.n_sentences} sentences "
        f"({report.sentences_per_answer:.1f} per answer)",
        f"generator: {generator_name(report)}",
        "",
        f"{'metric':<40}{'ours':>10}",
        f"{'citation coverage (%)':<40}{report.coverage_pct:>10.2f}",
        f"{'invalid citations (%)':<40}{report.invalid_citation_pct:>10.2f}",
        f"{'citation support (%)':<40}{report.support_pct:>10.2f}",
        f"{'citation contradict (%)':<40}{report.contradict_pct:>10.2f}",
        f"{'gold abstract retrieved (%)':<40}{report.gold_retrieved_pct:>10.2f}",
        f"{'gold abstract cited (%)':<40}{report.gold_cited_pct:>10.2f}",
        f"{'yes/no/maybe agreement (%)':<40}{report.decision_accuracy_pct:>10.2f}",
        "",
        "sentence labels (%): " + ", ".join(f"{k} {v:.1f}" for k, v in report.label_pct.items()),
        "decisions: " + ", ".join(f"{k} {v}" for k, v in report.decision_counts.items()),
        "mean time per stage (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in report.mean_ms.items()),
        "",
        f"{'anchor':<36}{'coverage':>10}{'support':>10}{'contradict':>12}",
    ]
    for name, cov, sup, con in ANCHORS:
        con_text = f"{con:.2f}" if con is not None else "-"
        lines.append(f"{name:<36}{cov:>10.2f}{sup:>10.2f}{con_text:>12}")
    lines.append(
        f"{'VerifAI Desktop (this run)':<36}{report.coverage_pct:>10.2f}"
        f"{report.support_pct:>10.2f}{report.contradict_pct:>12.2f}"
    )
    lines += [
        "",
        "abstention sweep (best raw cosine < threshold -> refuse)",
        f"{'threshold':>10}{'refused %':>12}{'not supported %':>18}"
        f"{'contradicted %':>17}{'kept sent.':>12}",
    ]
    for row in report.sweep:
        lines.append(
            f"{row.threshold:>10.2f}{row.refusal_pct:>12.1f}{row.unsupported_pct:>18.1f}"
            f"{row.contradicted_pct:>17.1f}{row.kept_sentences:>12d}"
        )
    lines += ["", "citations before and after re-citation (%)"]
    lines.append(
        f"{'':<24}{'coverage':>10}{'own cited':>11}{'support':>9}{'contra.':>9}{'supported':>11}"
    )
    for c in report.citations:
        lines.append(
            f"{c.name:<24}{c.coverage_pct:>10.1f}{c.gold_cited_pct:>11.1f}{c.support_pct:>9.1f}"
            f"{c.contradict_pct:>9.1f}{c.supported_sentences_pct:>11.1f}"
        )
    lines += [
        f"sentences with conflicting evidence in the collection: "
        f"{report.conflict_sentences_pct:.1f}%",
        f"verification share of the answer's wall time: {report.verify_share_pct:.1f}%",
    ]
    if report.held_out:
        lines += [
            "",
            "held-out mode: every other question's own abstract removed (should be refused)",
            f"{'rule':<22}{'threshold':>10}{'refused held-out %':>20}{'refused kept %':>16}"
            f"{'not supported %':>17}{'kept':>6}",
        ]
        for h in report.held_out:
            lines.append(
                f"{h.rule:<22}{h.threshold:>10.2f}{h.refused_held_out_pct:>20.1f}"
                f"{h.refused_kept_pct:>16.1f}{h.unsupported_pct:>17.1f}{h.kept_answers:>6d}"
            )
    lines += ["", f"decision method: {report.decision_method}"]
    return "\n".join(lines)


def generator_name(report: AnswersReport, *, sha256: bool = True) -> str:
    """The generator a report was made with: its name and, if asked, the start of its sha256."""
    ident = report.models.get("generator", {})
    sha = ident.get("sha256", "") if sha256 else ""
    return ident.get("name", "?") + (f" (sha256 {sha[:12]})" if sha else "")


def format_comparison(reports: Sequence[AnswersReport]) -> str:
    """Generators side by side on the same questions, one row per report.

    Columns: answers, sentences per answer, own abstract cited and (sentence, passage) pairs
    supported with the generator's citations / after re-citation, sentences supported after
    re-citation, yes/no/maybe agreement, and mean seconds per answer (retrieve + generate +
    verify, the decision turn not included) and of it generating.

    Args:
        reports: reports of :func:`evaluate_pubmedqa` on the same questions.

    Returns:
        A plain-text table.
    """
    lines = [
        "generators on the same questions (gen. = the generator's citations, "
        "re. = after re-citation)",
        f"{'generator':<36}{'n':>4}{'sent./ans.':>11}{'own cited % gen./re.':>22}"
        f"{'pairs sup. % gen./re.':>23}{'sent. sup. %':>13}{'agree %':>9}"
        f"{'s/answer':>10}{'s gen.':>8}",
    ]
    for r in reports:
        own = {c.name: c for c in r.citations}
        gen, rec = own.get("generator's citations"), own.get("after re-citation")
        own_cited = f"{gen.gold_cited_pct:.1f}/{rec.gold_cited_pct:.1f}" if gen and rec else "-"
        support = f"{gen.support_pct:.1f}/{rec.support_pct:.1f}" if gen and rec else "-"
        lines.append(
            f"{generator_name(r, sha256=False):<36}{r.n_questions:>4d}"
            f"{r.sentences_per_answer:>11.2f}{own_cited:>22}{support:>23}"
            f"{r.label_pct.get(SentenceLabel.SUPPORTED.value, 0.0):>13.1f}"
            f"{r.decision_accuracy_pct:>9.1f}{r.mean_ms.get('total', 0.0) / 1000:>10.1f}"
            f"{r.mean_ms.get('generate', 0.0) / 1000:>8.1f}"
        )
    return "\n".join(lines)
