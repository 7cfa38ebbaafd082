"""Scores of `verifai eval answers`: one answered question, and the aggregates over a run.

Per question (:func:`question_result`): citation coverage, invalid citations, the
(sentence, cited passage) pairs whose verifier P(SUPPORT) / P(CONTRADICT) pass the settings'
thresholds, whether the question's own abstract was retrieved and cited, for the generator's
own citations and after re-citation. Over a run (:func:`aggregate`): those figures as
percentages, decision agreement, mean wall time per stage, the refusal / hallucination sweep
(:func:`abstention_sweep`) and, in held-out mode, :func:`held_out_sweep`. The questions come
from :mod:`verifai_desktop.evaluate.pubmedqa`; the runner is
:mod:`verifai_desktop.evaluate.answers`; :mod:`verifai_desktop.evaluate.answer_tables` prints
the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verifai_desktop.domain import Answer, SentenceLabel
from verifai_desktop.evaluate.pubmedqa import PubMedQAItem, passage_pmid
from verifai_desktop.generate.prompt import DECISION_PROMPT
from verifai_desktop.settings import Settings
from verifai_desktop.verify.abstention import best_guess_support, best_semantic

DECISIONS: tuple[str, ...] = ("yes", "no", "maybe")
SWEEP_THRESHOLDS: tuple[float, ...] = (0.0, 0.25, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


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
        best_guess_supported: some sentence is unsure with a best guess of SUPPORT that no
            check held back (:func:`verifai_desktop.verify.abstention.best_guess_support`).
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
    best_guess_supported: bool = False

    @property
    def evidence_refused(self) -> bool:
        """Abstention by evidence: no sentence is supported (or partially) after re-citation."""
        return not any(label in SUPPORTED_LABELS for label in self.labels)

    @property
    def best_guess_refused(self) -> bool:
        """Abstention by evidence with ``verify.abstain_best_guess``: no sentence supported
        and none unsure with a best guess of SUPPORT."""
        return self.evidence_refused and not self.best_guess_supported


SUPPORTED_LABELS = frozenset(
    {SentenceLabel.SUPPORTED.value, SentenceLabel.PARTIALLY_SUPPORTED.value}
)
"""Labels that count as support for abstention by evidence (``unsure`` does not: the verifier
could not tell, whatever its best guess)."""


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
        label_pct: share of sentences per label (every :class:`SentenceLabel` value,
            ``unsure`` included).
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
        best_guess_supported=any(best_guess_support(s) for s in answer.sentences),
    )


def abstention_sweep(
    results: Sequence[QuestionResult], thresholds: Sequence[float] = SWEEP_THRESHOLDS
) -> tuple[AbstentionRow, ...]:
    """Refusal rate vs share of not-supported sentences in kept answers, per threshold.

    A question is refused at threshold t when its best raw cosine is below t (as
    :func:`verifai_desktop.verify.abstention.should_abstain` decides).
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


HELD_OUT_RULES = ("retrieval", "retrieval + evidence", "retrieval + evidence (best guess)")
"""The abstention rules :func:`held_out_sweep` compares: by retrieval alone; with abstention
by evidence (no sentence supported); and with its best-guess form (``verify.
abstain_best_guess``: nor any unsure sentence whose best guess is SUPPORT)."""


def held_out_sweep(
    results: Sequence[QuestionResult], thresholds: Sequence[float] = SWEEP_THRESHOLDS
) -> tuple[HeldOutRow, ...]:
    """Refusal rates on the held-out and kept halves, and the not-supported share of the
    answers kept, for each rule of :data:`HELD_OUT_RULES` at every retrieval threshold."""
    held = [r for r in results if r.held_out]
    kept_half = [r for r in results if not r.held_out]
    rows = []
    for rule in HELD_OUT_RULES:
        for t in thresholds:

            def refused(r: QuestionResult, t: float = t, rule: str = rule) -> bool:
                by_retrieval = r.best_cosine is not None and r.best_cosine < t
                if rule == "retrieval + evidence":
                    return by_retrieval or r.evidence_refused
                if rule == "retrieval + evidence (best guess)":
                    return by_retrieval or r.best_guess_refused
                return by_retrieval

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
