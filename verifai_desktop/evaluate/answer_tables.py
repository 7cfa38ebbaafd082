"""Plain-text tables of `verifai eval answers`: one report, and generators side by side.

The reports are :class:`verifai_desktop.evaluate.answer_metrics.AnswersReport`; the anchors are
the TREC BioGen 2025 runs scored by BioACE (best run coverage 99.36%, support 98.33%; GEHC run
98.77% coverage, 95.39% support, 0.00% contradict).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifai_desktop.domain import TOKEN_COUNTS, SentenceLabel
from verifai_desktop.evaluate.answer_metrics import AnswersReport

ANCHORS: tuple[tuple[str, float, float, float | None], ...] = (
    ("TREC BioGen 2025 best (BioACE)", 99.36, 98.33, None),
    ("TREC BioGen 2025 GEHC (BioACE)", 98.77, 95.39, 0.00),
)


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
        "sentences shown (%): " + shown_colours(report),
        "decisions: " + ", ".join(f"{k} {v}" for k, v in report.decision_counts.items()),
        "mean time per stage (ms): "
        + ", ".join(f"{k} {v:.0f}" for k, v in report.mean_ms.items() if k not in TOKEN_COUNTS),
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


SHOWN_COLOURS: tuple[tuple[str, SentenceLabel], ...] = (
    ("green", SentenceLabel.SUPPORTED),
    ("red", SentenceLabel.CONTRADICTED),
    ("unsure", SentenceLabel.UNSURE),
)
"""The colours a reader acts on, and the sentence label each one shows."""


def shown_colours(report: AnswersReport) -> str:
    """``"green 50.0, red 16.7, unsure 8.3"``: the share of sentences shown supported,
    contradicted and unsure (%)."""
    return ", ".join(
        f"{name} {report.label_pct.get(label.value, 0.0):.1f}" for name, label in SHOWN_COLOURS
    )


def generator_name(report: AnswersReport, *, sha256: bool = True) -> str:
    """The generator a report was made with: its name and, if asked, the start of its sha256."""
    ident = report.models.get("generator", {})
    sha = ident.get("sha256", "") if sha256 else ""
    return ident.get("name", "?") + (f" (sha256 {sha[:12]})" if sha else "")


def format_comparison(reports: Sequence[AnswersReport]) -> str:
    """Generators side by side on the same questions, one row per report.

    Columns: answers, sentences per answer, own abstract cited and (sentence, passage) pairs
    supported with the generator's citations / after re-citation, sentences supported and
    sentences unsure after re-citation, yes/no/maybe agreement, and mean seconds per answer
    (retrieve + generate + verify, the decision turn not included) and of it generating.

    Args:
        reports: reports of :func:`verifai_desktop.evaluate.answers.evaluate_pubmedqa` on the
            same questions.

    Returns:
        A plain-text table.
    """
    lines = [
        "generators on the same questions (gen. = the generator's citations, "
        "re. = after re-citation)",
        f"{'generator':<36}{'n':>4}{'sent./ans.':>11}{'own cited % gen./re.':>22}"
        f"{'pairs sup. % gen./re.':>23}{'sent. sup. %':>13}{'unsure %':>9}{'agree %':>9}"
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
            f"{r.label_pct.get(SentenceLabel.UNSURE.value, 0.0):>9.1f}"
            f"{r.decision_accuracy_pct:>9.1f}{r.mean_ms.get('total', 0.0) / 1000:>10.1f}"
            f"{r.mean_ms.get('generate', 0.0) / 1000:>8.1f}"
        )
    return "\n".join(lines)
