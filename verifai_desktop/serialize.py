"""An :class:`~verifai_desktop.domain.Answer` or :class:`~verifai_desktop.domain.Passage` as
data and text: JSON (schema ``verifai.answer/3``, read back by :func:`answer_from_dict`), Markdown
and HTML; no Qt.

One schema: a passage is the same object in ``verifai ask --json`` and ``verifai search --json``
(:func:`passage_to_dict`). Export formats are picked by file suffix (:func:`format_for_path`).

Also holds the label style table (colour, underline style, marker glyph) shared by the desktop
answer view and the HTML export, so both show the same scheme: the VerifAI paper's colours
(supported dark green, partially supported dark yellow/orange, contradicted red, unreferenced
dark grey; Bojic et al., VerifAI, 2024) plus a distinct style for "no evidence", and for
colour-blind readers a different underline style and a marker glyph per label.
"""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    ChunkId,
    DocId,
    Evidence,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    SentenceLabel,
    Verdict,
)
from verifai_desktop.errors import BadRecord, UnsupportedExportFormat
from verifai_desktop.settings import Settings
from verifai_desktop.verify import labels
from verifai_desktop.verify.claims import strip_citations
from verifai_desktop.verify.conflicts import CheckResult, DocumentVerdict, Overall

CONFLICT_GLYPH = "\u21c4"  # ⇄ after a sentence with conflicting evidence
CONFLICT_TITLE = "Conflicting evidence in your documents"
CONFLICT_COLOR = "#ad1457"  # the conflict marker: a hue none of the sentence labels uses

ANSWER_SCHEMA = "verifai.answer/3"
"""Schema name written into every JSON answer (2: re-citation; ``answer`` and ``citations``
are the corrected ones, ``generated_answer`` and ``cited_by_generator`` as generated; 3:
passages keep their ``sentence_spans``, so an answer read back (:func:`answer_from_dict`) is
the answer that was verified)."""

READABLE_SCHEMAS = ("verifai.answer/2", ANSWER_SCHEMA)
"""Schemas :func:`answer_from_dict` reads (a ``/2`` passage has no sentence spans)."""

UnderlineStyle = Literal["solid", "dashed", "wavy", "dotted", "none"]


@dataclass(frozen=True, slots=True)
class LabelStyle:
    """How one sentence label is shown.

    Attributes:
        label: the sentence label.
        title: human name ("Supported").
        color_hex: text colour, ``#rrggbb``.
        underline: underline style (CSS ``text-decoration-style`` names).
        glyph: marker shown after the sentence, readable without colour.
        description: one-line explanation for the legend.
    """

    label: SentenceLabel
    title: str
    color_hex: str
    underline: UnderlineStyle
    glyph: str
    description: str


LABEL_STYLES: dict[SentenceLabel, LabelStyle] = {
    SentenceLabel.SUPPORTED: LabelStyle(
        SentenceLabel.SUPPORTED,
        "Supported",
        "#1b6e20",
        "solid",
        "✓",
        "every cited passage supports the sentence",
    ),
    SentenceLabel.PARTIALLY_SUPPORTED: LabelStyle(
        SentenceLabel.PARTIALLY_SUPPORTED,
        "Partially supported",
        "#b45f06",
        "dashed",
        "◐",
        "some cited passages support it, others do not",
    ),
    SentenceLabel.CONTRADICTED: LabelStyle(
        SentenceLabel.CONTRADICTED,
        "Contradicted",
        "#c62828",
        "wavy",
        "✗",
        "a cited passage contradicts the sentence",
    ),
    SentenceLabel.NO_EVIDENCE: LabelStyle(
        SentenceLabel.NO_EVIDENCE,
        "No evidence",
        "#6a1b9a",
        "dotted",
        "?",
        "the cited passages neither support nor contradict it",
    ),
    SentenceLabel.UNREFERENCED: LabelStyle(
        SentenceLabel.UNREFERENCED,
        "Unreferenced",
        "#555555",
        "none",
        "○",
        "the sentence cites no passage",
    ),
}

NOT_FOUND_TEXT = "Not found in your documents"
UNSUPPORTED_TEXT = "Your documents do not support an answer"
"""Headline of an answer refused by evidence (``Answer.abstain_reason == "unsupported"``)."""


def refusal_text(answer: Answer) -> str:
    """The headline of an abstained answer, without a final full stop."""
    return UNSUPPORTED_TEXT if answer.abstain_reason == "unsupported" else NOT_FOUND_TEXT


def injection_warning(passage: Passage) -> str:
    """The warning shown next to a passage that reads as instructions to an AI (prompt
    injection), naming the first cue; ``""`` for an ordinary passage."""
    if not passage.instruction_cues:
        return ""
    return (
        "This passage reads as instructions to an AI "
        f"(\u201c{passage.instruction_cues[0]}\u201d); it was given to the model as text only."
    )


def verdict_summary(verdict: Verdict) -> str:
    """``"support 0.93 · contradict 0.02 · no evidence 0.05"``: the verifier's three
    probabilities for one (sentence, cited passage) pair."""
    return (
        f"support {verdict.p_support:.2f} · contradict {verdict.p_contradict:.2f} · "
        f"no evidence {verdict.p_no_evidence:.2f}"
    )


def sentence_probability(sentence: AnswerSentence) -> float | None:
    """Probability shown for a sentence label (the rule of
    :func:`verifai_desktop.verify.labels.sentence_probability`: e.g. the weakest P(SUPPORT)
    of a supported sentence, the strongest P(CONTRADICT) of a contradicted one).

    Returns ``None`` for a sentence without verdicts (unreferenced).
    """
    if not sentence.verdicts:
        return None
    return labels.sentence_probability(sentence.label, sentence.verdicts)


def recitation_note(sentence: AnswerSentence) -> str:
    """``"Re-cited: the generator cited [3] (no evidence); the evidence is in [4]."``, or
    ``""`` for a sentence whose citations are the generator's."""
    if not sentence.recited:
        return ""
    named = "".join(f"[{n}]" for n in sentence.generator_citations)
    was = sentence.generator_label
    held = "".join(f"[{n}]" for n in sentence.citations)
    if not named:
        return f"Re-cited: the generator cited no passage; the evidence is in {held}."
    why = f" ({LABEL_STYLES[was].title.lower()})" if was is not None else ""
    return f"Re-cited: the generator cited {named}{why}; the evidence is in {held}."


def _passage_for(answer: Answer, number: int) -> Passage | None:
    return answer.passages[number - 1] if 1 <= number <= len(answer.passages) else None


def answer_to_markdown(answer: Answer) -> str:
    """Render an answer as Markdown: labelled sentences, evidence per citation, sources.

    Args:
        answer: the verified answer.

    Returns:
        A Markdown document (str) ending with a newline.
    """
    out: list[str] = [f"# {answer.question}", ""]
    if answer.abstained and answer.abstain_reason != "unsupported":
        out += [f"**{NOT_FOUND_TEXT}.** Closest passages:", ""]
    else:
        if answer.abstained:
            out += [
                f"**{UNSUPPORTED_TEXT}.** No sentence of the generated answer is supported by "
                "the passages; it is shown below with its evidence.",
                "",
            ]
        out += ["## Answer", ""]
        for s in answer.sentences:
            st = LABEL_STYLES[s.label]
            p = sentence_probability(s)
            prob = f", {p:.2f}" if p is not None else ""
            flag = f" {CONFLICT_GLYPH} *{CONFLICT_TITLE.lower()}*" if s.conflicts else ""
            out.append(f"{s.text} **[{st.glyph} {st.title}{prob}]**{flag}")
            out.append("")
        out += ["## Evidence", ""]
        for i, s in enumerate(answer.sentences, start=1):
            st = LABEL_STYLES[s.label]
            out.append(f"{i}. *{s.text}* — {st.glyph} {st.title}")
            if s.recited:
                out.append(f"   - {recitation_note(s)}")
            for v in s.verdicts:
                passage = _passage_for(answer, v.passage_number)
                where = passage.source_label() if passage else "unknown source"
                ev = f': "{v.evidence}"' if v.evidence else ""
                out.append(f"   - [{v.passage_number}] {where} — {verdict_summary(v)}{ev}")
            if s.conflicts:
                out.append(f"   - {CONFLICT_GLYPH} {CONFLICT_TITLE}:")
                out += [f"     - {conflict_note(c)}" for c in s.conflicts]
        out.append("")
    out += ["## Sources", ""]
    for n, ps in enumerate(answer.passages, start=1):
        out.append(
            f"[{n}] {ps.title} — {ps.source_label()} — lexical {ps.lexical_score:.2f}, "
            f"semantic {ps.semantic_score:.2f}, fused {ps.fused_score:.3f}"
        )
        if ps.instruction_cues:
            out.append(f"    ⚠ {injection_warning(ps)}")
    out += ["", "Legend: " + "; ".join(f"{s.glyph} {s.title}" for s in LABEL_STYLES.values()), ""]
    return "\n".join(out)


def sentence_css(label: SentenceLabel) -> str:
    """Inline CSS for a sentence with this label (colour plus underline style)."""
    st = LABEL_STYLES[label]
    if st.underline == "none":
        return f"color:{st.color_hex}"
    return (
        f"color:{st.color_hex};text-decoration:underline {st.underline} {st.color_hex};"
        "text-underline-offset:3px"
    )


def highlight_evidence_html(passage_text: str, span: tuple[int, int]) -> str:
    """Escape ``passage_text`` and wrap ``passage_text[span[0]:span[1]]`` in ``<mark>``.

    Args:
        passage_text: the passage (chunk) text.
        span: half-open offsets of the evidence (the premise window that decided the verdict)
            into ``passage_text``; an empty or out-of-range span highlights nothing.
    """
    start, end = span
    if not (0 <= start < end <= len(passage_text)):
        return html.escape(passage_text)
    return (
        html.escape(passage_text[:start])
        + "<mark>"
        + html.escape(passage_text[start:end])
        + "</mark>"
        + html.escape(passage_text[end:])
    )


def answer_to_html(answer: Answer) -> str:
    """Render an answer as a standalone HTML page with the same scheme as the app.

    Returns:
        An HTML5 document (str), styles inline so it survives copy and paste.
    """
    e = html.escape
    parts: list[str] = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{e(answer.question)}</title></head><body>",
        f"<h1>{e(answer.question)}</h1>",
    ]
    if answer.abstained and answer.abstain_reason != "unsupported":
        parts.append(
            f"<p><strong>{NOT_FOUND_TEXT}.</strong> Closest passages are listed below.</p>"
        )
    else:
        if answer.abstained:
            parts.append(
                f"<p><strong>{UNSUPPORTED_TEXT}.</strong> No sentence of the generated answer is "
                "supported by the passages; it is shown below with its evidence.</p>"
            )
        parts.append("<h2>Answer</h2><p>")
        conflict_sup = f'<sup title="{e(CONFLICT_TITLE)}">{CONFLICT_GLYPH}</sup>'
        for s in answer.sentences:
            st = LABEL_STYLES[s.label]
            p = sentence_probability(s)
            prob = f" {p:.2f}" if p is not None else ""
            parts.append(
                f'<span class="sentence {s.label.value}" style="{sentence_css(s.label)}" '
                f'title="{e(st.title)}{prob}">{e(s.text)}</span>'
                f'<sup title="{e(st.title)}">{st.glyph}</sup>{conflict_sup if s.conflicts else ""} '
            )
        parts.append("</p><h2>Evidence</h2><ol>")
        for s in answer.sentences:
            st = LABEL_STYLES[s.label]
            parts.append(
                f'<li><span style="{sentence_css(s.label)}">{e(s.text)}</span> '
                f"— {st.glyph} {e(st.title)}<ul>"
            )
            if s.recited:
                parts.append(f"<li><em>{e(recitation_note(s))}</em></li>")
            for v in s.verdicts:
                passage = _passage_for(answer, v.passage_number)
                where = passage.source_label() if passage else "unknown source"
                body = highlight_evidence_html(passage.text, v.evidence_span) if passage else ""
                parts.append(
                    f"<li>[{v.passage_number}] {e(where)} — {e(verdict_summary(v))}"
                    f"<blockquote>{body}</blockquote></li>"
                )
            if s.conflicts:
                parts.append(f"<li>{CONFLICT_GLYPH} {e(CONFLICT_TITLE)}<ul>")
                for c in s.conflicts:
                    body = highlight_evidence_html(c.passage.text, c.verdict.evidence_span)
                    parts.append(
                        f"<li>{e(c.passage.source_label())} — {e(verdict_summary(c.verdict))}"
                        f"<blockquote>{body}</blockquote></li>"
                    )
                parts.append("</ul></li>")
            parts.append("</ul></li>")
        parts.append("</ol>")
    parts.append('<h2>Sources</h2><table border="1" cellpadding="4">')
    parts.append(
        "<tr><th>#</th><th>Source</th><th>Lexical</th><th>Semantic</th><th>Fused</th></tr>"
    )
    for n, ps in enumerate(answer.passages, start=1):
        warn = f"<br><small>⚠ {e(injection_warning(ps))}</small>" if ps.instruction_cues else ""
        parts.append(
            f"<tr><td>{n}</td><td>{e(ps.title)}<br><small>{e(ps.source_label())}</small>{warn}</td>"
            f"<td>{ps.lexical_score:.2f}</td><td>{ps.semantic_score:.2f}</td>"
            f"<td>{ps.fused_score:.3f}</td></tr>"
        )
    parts.append("</table><p>Legend: ")
    parts.append(
        " · ".join(
            f'<span style="{sentence_css(s.label)}">{s.glyph} {e(s.title)}</span>'
            for s in LABEL_STYLES.values()
        )
    )
    parts.append("</p></body></html>")
    return "\n".join(parts)


# -- JSON ----------------------------------------------------------------------------------


def verdict_to_dict(verdict: Verdict) -> dict[str, object]:
    """One verdict: label, probabilities, and the deciding premise window as ``evidence`` with
    its offsets into the cited passage's ``text``."""
    return {
        "passage": verdict.passage_number,
        "label": verdict.label.value,
        "probability": verdict.probability,
        "p_support": verdict.p_support,
        "p_contradict": verdict.p_contradict,
        "p_no_evidence": verdict.p_no_evidence,
        "evidence": verdict.evidence,
        "evidence_char_start": verdict.evidence_span[0],
        "evidence_char_end": verdict.evidence_span[1],
    }


def evidence_to_dict(evidence: Evidence) -> dict[str, object]:
    """One passage of the collection and its verdict on a claim (a sentence's ``conflicts``,
    ``verifai check``): the passage as in :func:`passage_to_dict` (``number`` is its citation
    number in the answer, 0 when it was not given to the generator) plus ``verdict``."""
    out = passage_to_dict(evidence.passage, evidence.verdict.passage_number)
    out["verdict"] = verdict_to_dict(evidence.verdict)
    return out


def conflict_note(evidence: Evidence) -> str:
    """``"file.pdf, p. 4: “the contradicting sentence” (contradict 0.91)"``."""
    v = evidence.verdict
    return (
        f"{evidence.passage.source_label()}: “{v.evidence.strip()}” "
        f"(contradict {v.p_contradict:.2f})"
    )


@dataclass(frozen=True, slots=True)
class CollectionConflict:
    """A passage elsewhere in the collection that contradicts sentences of an answer.

    Attributes:
        evidence: the passage and its strongest contradicting verdict (``passage_number`` 0:
            it was not given to the generator).
        sentences: indexes into ``Answer.sentences`` of the sentences it contradicts, in order.
    """

    evidence: Evidence
    sentences: tuple[int, ...]


def collection_conflicts(answer: Answer) -> tuple[CollectionConflict, ...]:
    """The passages outside ``answer.passages`` that contradict its sentences (the sources
    panel's conflict list): one per chunk, strongest P(CONTRADICT) first.

    Conflicts among the passages given (``passage_number`` above 0) are left out: the
    passage is already listed as a source.
    """
    best: dict[int, Evidence] = {}
    where: dict[int, list[int]] = {}
    for i, sentence in enumerate(answer.sentences):
        for ev in sentence.conflicts:
            if ev.verdict.passage_number != 0:
                continue
            key = int(ev.passage.chunk_id)
            held = best.get(key)
            if held is None or ev.verdict.p_contradict > held.verdict.p_contradict:
                best[key] = ev
            if i not in where.setdefault(key, []):
                where[key].append(i)
    order = sorted(best, key=lambda k: -best[k].verdict.p_contradict)
    return tuple(CollectionConflict(best[k], tuple(where[k])) for k in order)


def claim_text(sentence: AnswerSentence) -> str:
    """The claim an answer sentence makes: its text without citation markers."""
    return strip_citations(sentence.text)


CHECK_VERDICT_TEXT: dict[Overall, str] = {
    "SUPPORT": "supports",
    "CONTRADICT": "contradicts",
    "NO_EVIDENCE": "no evidence",
}
"""How a document's verdict on a claim is worded (``"report.pdf supports"``)."""

CHECK_VERDICT_LABEL: dict[Overall, SentenceLabel] = {
    "SUPPORT": SentenceLabel.SUPPORTED,
    "CONTRADICT": SentenceLabel.CONTRADICTED,
    "NO_EVIDENCE": SentenceLabel.NO_EVIDENCE,
}
"""The sentence label whose style (:data:`LABEL_STYLES`) shows a document verdict."""


def document_probability(document: DocumentVerdict) -> float:
    """The probability of a document verdict's label, from its strongest passage."""
    v = document.evidence.verdict
    if document.label == "SUPPORT":
        return v.p_support
    if document.label == "CONTRADICT":
        return v.p_contradict
    return v.p_no_evidence


CHECK_SCHEMA = "verifai.check/1"
"""Schema name written into every ``verifai check --json`` result."""


def check_to_dict(result: CheckResult) -> dict[str, object]:
    """A claim check as JSON-ready data (``verifai check --json``; schema
    :data:`CHECK_SCHEMA`): ``supporting`` and ``contradicting`` passages (as in
    :func:`evidence_to_dict`, strongest first) and one verdict per ``documents`` entry."""
    return {
        "schema": CHECK_SCHEMA,
        "claim": result.claim,
        "candidates": result.candidates,
        "documents": [
            {
                "doc_id": int(d.doc_id),
                "path": str(d.path),
                "file": d.path.name,
                "title": d.title,
                "label": d.label,
                "probability": document_probability(d),
                "evidence": evidence_to_dict(d.evidence),
            }
            for d in result.documents
        ],
        "supporting": [evidence_to_dict(e) for e in result.supporting],
        "contradicting": [evidence_to_dict(e) for e in result.contradicting],
    }


def passage_to_dict(passage: Passage, number: int) -> dict[str, object]:
    """One passage as in ``verifai.answer/3`` (and ``verifai search --json``).

    Args:
        passage: the passage.
        number: its 1-based number (citation ``[number]`` in an answer, rank in a search).

    Returns:
        JSON-ready data; ``char_start/char_end`` index the passage's document text.
    """
    return {
        "number": number,
        "chunk_id": int(passage.chunk_id),
        "doc_id": int(passage.doc_id),
        "path": str(passage.path),
        "file": passage.path.name,
        "title": passage.title,
        "location": passage.location.as_dict(),
        "char_start": passage.char_start,
        "char_end": passage.char_end,
        "scores": {
            "fused": passage.fused_score,
            "lexical": passage.lexical_score,
            "semantic": passage.semantic_score,
            "raw_lexical": passage.raw_lexical,
            "raw_semantic": passage.raw_semantic,
        },
        "text": passage.text,
        "sentence_spans": [list(span) for span in passage.sentence_spans],
        "instruction_cues": list(passage.instruction_cues),
        "is_reference": passage.is_reference,
    }


def answer_to_dict(answer: Answer, settings: Settings | None = None) -> dict[str, object]:
    """The whole answer as JSON-ready data (``verifai ask --json``; schema :data:`ANSWER_SCHEMA`).

    Offsets: sentence ``char_start/char_end`` index ``answer``; verdict ``evidence_char_*``
    index the cited passage's ``text``; passage ``char_start/char_end`` index its document.

    Args:
        answer: the answer.
        settings: the settings it was made with (thresholds); defaults if None.
    """
    thresholds = (settings or Settings()).verify
    sentences = [
        {
            "index": i,
            "text": s.text,
            "char_start": s.char_start,
            "char_end": s.char_end,
            "citations": list(s.citations),
            "invalid_citations": list(s.invalid_citations),
            "label": s.label.value,
            "probability": labels.sentence_probability(s.label, s.verdicts, thresholds),
            "verdicts": [verdict_to_dict(v) for v in s.verdicts],
            "recited": s.recited,
            "cited_by_generator": list(s.generator_citations),
            "generator_label": (s.generator_label or s.label).value,
            "generator_verdicts": [verdict_to_dict(v) for v in s.generator_verdicts],
            "supported_by": [{"passage": n, "p_support": p} for n, p in s.supported_by],
            "conflicts": [evidence_to_dict(e) for e in s.conflicts],
        }
        for i, s in enumerate(answer.sentences)
    ]
    counts = labels.label_counts(s.label for s in answer.sentences)
    return {
        "schema": ANSWER_SCHEMA,
        "question": answer.question,
        "answer": answer.text,
        "generated_answer": answer.text if answer.generated_text is None else answer.generated_text,
        "abstained": answer.abstained,
        "abstain_reason": answer.abstain_reason,
        "sentences": sentences,
        "label_counts": {label.value: n for label, n in counts.items()},
        "passages": [passage_to_dict(p, n) for n, p in enumerate(answer.passages, start=1)],
        "timings_ms": dict(answer.timings_ms),
        "models": {role: dict(ident) for role, ident in answer.models.items()},
        "thresholds": {
            "support": thresholds.support_threshold,
            "contradict": thresholds.contradict_threshold,
            "abstain": thresholds.abstain_threshold,
            "recite": thresholds.recite,
            "conflict_search": thresholds.conflict_search,
            "conflict_budget": thresholds.conflict_budget,
        },
    }


def answer_to_json(answer: Answer, settings: Settings | None = None) -> str:
    """:func:`answer_to_dict` as indented JSON text (UTF-8 characters kept), ending in a newline."""
    return json.dumps(answer_to_dict(answer, settings), indent=2, ensure_ascii=False) + "\n"


# -- reading an answer back ------------------------------------------------------------


def _location_from_dict(data: Mapping[str, Any]) -> Location:
    number = data.get("number")
    return Location(
        LocationKind(data["kind"]), None if number is None else int(number), str(data["heading"])
    )


def _passage_from_dict(data: Mapping[str, Any]) -> Passage:
    scores = data["scores"]
    return Passage(
        chunk_id=ChunkId(int(data["chunk_id"])),
        doc_id=DocId(int(data["doc_id"])),
        path=Path(data["path"]),
        title=str(data["title"]),
        text=str(data["text"]),
        char_start=int(data["char_start"]),
        char_end=int(data["char_end"]),
        location=_location_from_dict(data["location"]),
        sentence_spans=tuple((int(a), int(b)) for a, b in data.get("sentence_spans", ())),
        lexical_score=scores["lexical"],
        semantic_score=scores["semantic"],
        fused_score=scores["fused"],
        raw_lexical=scores["raw_lexical"],
        raw_semantic=scores["raw_semantic"],
        instruction_cues=tuple(data["instruction_cues"]),
        is_reference=bool(data["is_reference"]),
    )


def verdict_from_dict(data: Mapping[str, Any]) -> Verdict:
    """The inverse of :func:`verdict_to_dict`.

    Raises:
        KeyError, ValueError, TypeError: ``data`` is not a verdict as written.
    """
    return Verdict(
        passage_number=int(data["passage"]),
        label=NliLabel(data["label"]),
        p_support=data["p_support"],
        p_contradict=data["p_contradict"],
        p_no_evidence=data["p_no_evidence"],
        evidence=str(data["evidence"]),
        evidence_span=(int(data["evidence_char_start"]), int(data["evidence_char_end"])),
    )


def _evidence_from_dict(data: Mapping[str, Any]) -> Evidence:
    return Evidence(_passage_from_dict(data), verdict_from_dict(data["verdict"]))


def _sentence_from_dict(data: Mapping[str, Any]) -> AnswerSentence:
    recited = bool(data["recited"])
    return AnswerSentence(
        text=str(data["text"]),
        char_start=int(data["char_start"]),
        char_end=int(data["char_end"]),
        citations=tuple(int(n) for n in data["citations"]),
        verdicts=tuple(verdict_from_dict(v) for v in data["verdicts"]),
        label=SentenceLabel(data["label"]),
        invalid_citations=tuple(int(n) for n in data["invalid_citations"]),
        cited_by_generator=tuple(int(n) for n in data["cited_by_generator"]) if recited else None,
        generator_verdicts=(
            tuple(verdict_from_dict(v) for v in data["generator_verdicts"]) if recited else ()
        ),
        generator_label=SentenceLabel(data["generator_label"]) if recited else None,
        supported_by=tuple((int(s["passage"]), s["p_support"]) for s in data["supported_by"]),
        conflicts=tuple(_evidence_from_dict(e) for e in data["conflicts"]),
    )


def answer_from_dict(data: Mapping[str, Any]) -> Answer:
    """An answer read back from :func:`answer_to_dict`'s data (a saved answer, an audit
    record): the same sentences, labels, verdicts, evidence and passages, so
    ``answer_to_dict(answer_from_dict(d), settings_for(d)) == d``.

    Args:
        data: parsed JSON of schema ``verifai.answer/2`` or ``/3`` (:data:`READABLE_SCHEMAS`).

    Raises:
        BadRecord: another schema, or a field missing or of the wrong type.
    """
    schema = data.get("schema")
    if schema not in READABLE_SCHEMAS:
        raise BadRecord(
            "the saved answer", f"its schema is {schema!r}, not one of {READABLE_SCHEMAS}"
        )
    try:
        text = str(data["answer"])
        generated = str(data["generated_answer"])
        return Answer(
            question=str(data["question"]),
            text=text,
            sentences=tuple(_sentence_from_dict(s) for s in data["sentences"]),
            passages=tuple(_passage_from_dict(p) for p in data["passages"]),
            abstained=bool(data["abstained"]),
            timings_ms={str(k): v for k, v in data["timings_ms"].items()},
            models={
                str(role): {str(k): str(v) for k, v in ident.items()}
                for role, ident in data["models"].items()
            },
            generated_text=None if generated == text else generated,
            abstain_reason=str(data["abstain_reason"]),
        )
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise BadRecord("the saved answer", f"{type(exc).__name__}: {exc}") from exc


def settings_for(data: Mapping[str, Any], base: Settings | None = None) -> Settings:
    """``base`` (default settings if None) with the verification thresholds an answer was
    made with (its ``thresholds``), so it is shown and written again exactly as it was.

    Raises:
        BadRecord: ``thresholds`` is missing or malformed.
    """
    base = base or Settings()
    try:
        t = data["thresholds"]
        verify = dataclasses.replace(
            base.verify,
            support_threshold=t["support"],
            contradict_threshold=t["contradict"],
            abstain_threshold=t["abstain"],
            recite=bool(t["recite"]),
            conflict_search=bool(t["conflict_search"]),
            conflict_budget=int(t["conflict_budget"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BadRecord("the saved answer's thresholds", f"{type(exc).__name__}: {exc}") from exc
    return dataclasses.replace(base, verify=verify)


# -- export formats ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """A file format an answer can be saved in.

    Attributes:
        name: ``"markdown"``, ``"html"`` or ``"json"``.
        suffix: the file suffix written (``".md"``).
        file_filter: the save dialog's filter (``"Markdown (*.md)"``).
        render: the answer as the file's text.
        other_suffixes: further suffixes read as this format (``".htm"``).
    """

    name: str
    suffix: str
    file_filter: str
    render: Callable[[Answer], str]
    other_suffixes: tuple[str, ...] = ()


EXPORT_FORMATS: dict[str, ExportFormat] = {
    "markdown": ExportFormat(
        "markdown", ".md", "Markdown (*.md)", answer_to_markdown, (".markdown",)
    ),
    "html": ExportFormat("html", ".html", "HTML (*.html)", answer_to_html, (".htm",)),
    "json": ExportFormat("json", ".json", "JSON (*.json)", answer_to_json),
}
"""Export formats by name, in the order a save dialog offers them."""


def format_for_path(path: Path | str) -> ExportFormat:
    """The export format a file name asks for, by its suffix (case-insensitive).

    Raises:
        UnsupportedExportFormat: the suffix names none of :data:`EXPORT_FORMATS`.
    """
    suffix = Path(path).suffix.lower()
    for fmt in EXPORT_FORMATS.values():
        if suffix == fmt.suffix or suffix in fmt.other_suffixes:
            return fmt
    raise UnsupportedExportFormat(path, tuple(f.suffix for f in EXPORT_FORMATS.values()))


def write_answer(answer: Answer, path: Path | str, *, fmt: ExportFormat | None = None) -> Path:
    """Write ``answer`` to ``path`` as UTF-8 in ``fmt`` (by default the format its suffix names).

    Returns:
        The path written.

    Raises:
        UnsupportedExportFormat: ``fmt`` is None and the suffix names no export format.
        OSError: the file cannot be written.
    """
    target = Path(path)
    fmt = fmt or format_for_path(target)
    target.write_text(fmt.render(answer), encoding="utf-8")
    return target
