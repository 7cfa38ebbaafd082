"""How answers and claim checks read and look: the labels' wording, colours, underline styles
and glyphs, Markdown and HTML renderings, and the export formats; no Qt. Used by ``ui/`` and
``cli/`` only (layer: presentation, above the use cases).

The label style table is shared by the desktop answer view and the HTML export, so both show the
same scheme: the VerifAI paper's colours (supported dark green, partially supported dark
yellow/orange, contradicted red, unreferenced dark grey; Bojic et al., VerifAI, 2024) plus a
distinct style for "no evidence" and a neutral one for "unsure" (never green or red: the
verifier cannot tell, and its best guess is given in words, :func:`best_guess`), and for
colour-blind readers a different underline style and a marker glyph per label. Wherever a
verdict is shown, the checks that held it back are shown with it (:func:`flag_lines`). The JSON
side of an answer is :mod:`verifai_desktop.codec`.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal

from verifai_desktop.domain import (
    Answer,
    AnswerSentence,
    CheckLabel,
    DocumentVerdict,
    Evidence,
    NliLabel,
    Passage,
    SentenceLabel,
    ShownLabel,
    Verdict,
    label_probability,
)
from verifai_desktop.verify.parts import PART_REASON_PREFIX

CONFLICT_GLYPH = "\u21c4"  # ⇄ after a sentence with conflicting evidence
CONFLICT_TITLE = "Conflicting evidence in your documents"
CONFLICT_COLOR = "#ad1457"  # the conflict marker: a hue none of the sentence labels uses

UnderlineStyle = Literal["solid", "dashed", "wavy", "dotted", "double", "none"]


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
    SentenceLabel.UNSURE: LabelStyle(
        SentenceLabel.UNSURE,
        "Unsure",
        "#3f6e8c",
        "double",
        "≈",
        "the verifier cannot tell; its best guess is in the hover card",
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
"""Headline of an answer refused by evidence (:attr:`Answer.refused_by_evidence`)."""


def refusal_text(answer: Answer) -> str:
    """The headline of an abstained answer, without a final full stop."""
    return UNSUPPORTED_TEXT if answer.refused_by_evidence else NOT_FOUND_TEXT


def passages_given_text(answer: Answer) -> str:
    """How many passages the generator was given, and why fewer than retrieved:
    ``"6 of 10 passages given (reading budget)"`` when the reading budget cut them
    (:attr:`Answer.passages_left_out`), ``"10 passages given"`` otherwise, ``""`` when nothing
    was generated (an answer not found in the documents)."""
    n, left_out = len(answer.passages), answer.passages_left_out
    if answer.not_found:
        return ""
    if left_out:
        return f"{n} of {n + left_out} passages given (reading budget)"
    return f"{n} passage{'s' if n != 1 else ''} given"


def instructions_note(passage: Passage) -> str:
    """``This passage reads as instructions to an AI (“<first cue>”)`` for a passage flagged
    as prompt injection (:attr:`Passage.instruction_cues`); ``""`` for an ordinary passage."""
    if not passage.instruction_cues:
        return ""
    return (
        f"This passage reads as instructions to an AI (\u201c{passage.instruction_cues[0]}\u201d)"
    )


def injection_warning(passage: Passage) -> str:
    """The warning shown next to a passage of an answer that reads as instructions to an AI
    (prompt injection), naming the first cue; ``""`` for an ordinary passage."""
    if not passage.instruction_cues:
        return ""
    return f"{instructions_note(passage)}; it was given to the model as text only."


def instructed_support(answer: Answer, sentence: AnswerSentence) -> tuple[int, ...]:
    """The 1-based numbers of the passages flagged as instructions to an AI that a sentence
    shown supported or partially supported (green) cites in its verdicts; ``()`` for any other
    sentence. Such a sentence may repeat what a document told the model to say."""
    if sentence.label not in (SentenceLabel.SUPPORTED, SentenceLabel.PARTIALLY_SUPPORTED):
        return ()
    numbers = dict.fromkeys(v.passage_number for v in sentence.verdicts)
    return tuple(
        n
        for n in numbers
        if 1 <= n <= len(answer.passages) and answer.passages[n - 1].instruction_cues
    )


def instructed_support_note(answer: Answer, sentence: AnswerSentence) -> str:
    """Why a green sentence resting on a passage flagged as instructions to an AI must be read
    with care (:func:`instructed_support`); ``""`` when it rests on none."""
    numbers = instructed_support(answer, sentence)
    if not numbers:
        return ""
    cue = answer.passages[numbers[0] - 1].instruction_cues[0]
    cited = ", ".join(f"[{n}]" for n in numbers)
    return (
        f"Shown {LABEL_STYLES[sentence.label].title.lower()} by passage {cited}, which reads "
        f"as instructions to an AI (\u201c{cue}\u201d): the document may be telling the model "
        "what to say; read it before trusting this sentence."
    )


def ocr_note(passage: Passage) -> str:
    """``"recognised text (OCR, tesseract, mean confidence 91%)"`` beside a passage read from
    a page image by OCR (``Passage.ocr``); ``""`` for a passage from a text layer."""
    if passage.ocr is None:
        return ""
    ocr = passage.ocr
    return f"recognised text (OCR, {ocr.engine}, mean confidence {ocr.mean_confidence:.0%})"


_HYPHEN_BREAK = re.compile(r"(\S*)-[ \t]*\r?\n[ \t]*(\S*)")
_LINE_BREAK = re.compile(r"[ \t]*(?:\r\n|\r|\n)\s*")
_WORD_END = re.compile(r"[^\W\d_]+$")
_WORD_START = re.compile(r"^[^\W\d_]+")


def joined_lines(text: str) -> str:
    """``text`` (a quoted passage) with the line breaks of its PDF page joined, for an export
    where a line break would cut the quote: a word split by a line-end hyphen is joined
    without it ("evi-\\ndence" -> "evidence"), every other line break becomes one space.

    The hyphen is taken for a line-break artefact only between two lower-case letters, in a
    word without another hyphen, and when the text does not spell the word with a hyphen
    elsewhere; otherwise it is kept ("state-of-the-\\nart" -> "state-of-the-art",
    "COVID-\\n19" -> "COVID-19", "well-\\nknown" beside "well-known" -> "well-known").
    """

    def join(m: re.Match[str]) -> str:
        head, tail = m.group(1), m.group(2)
        before, after = _WORD_END.search(head), _WORD_START.search(tail)
        artefact = (
            before is not None
            and after is not None
            and head[-1].islower()
            and tail[0].islower()
            and "-" not in head
            and f"{before.group(0)}-{after.group(0)}" not in text
        )
        return f"{head}{tail}" if artefact else f"{head}-{tail}"

    return _LINE_BREAK.sub(" ", _HYPHEN_BREAK.sub(join, text)).strip()


def verdict_summary(verdict: Verdict) -> str:
    """``"support 0.93 · contradict 0.02 · no evidence 0.05"``: the verifier's three
    probabilities for one (sentence, cited passage) pair."""
    return (
        f"support {verdict.p_support:.2f} · contradict {verdict.p_contradict:.2f} · "
        f"no evidence {verdict.p_no_evidence:.2f}"
    )


GUESS_TEXT: dict[NliLabel, str] = {
    NliLabel.SUPPORT: "supported",
    NliLabel.CONTRADICT: "contradicted",
    NliLabel.NO_EVIDENCE: "no evidence",
}
"""How the verifier's best guess is named for an unsure sentence (:func:`best_guess`)."""

HELD_BACK = "Held back"
"""What leads each flag of a verdict (:func:`flag_lines`)."""


def best_guess(verdict: Verdict) -> str:
    """``"best guess: supported, p 0.72"``: the verifier's own label for a pair (its argmax,
    :attr:`Verdict.label`) and that label's probability, as an unsure sentence states it."""
    return f"best guess: {GUESS_TEXT[verdict.label]}, p {verdict.probability:.2f}"


REASON_LEADS: dict[ShownLabel, str] = {
    ShownLabel.CONTRADICT: "Contradicted",
    ShownLabel.SUPPORT: "Checked",
}
"""What leads a reason of a verdict shown red or green (:func:`flag_lines`): a rule of
:mod:`verifai_desktop.verify.rules` that shows a sentence red names why ("Contradicted: the
figure 48 hours: the passage gives 4 hours here ..."). Any other verdict's reasons held it
back."""


def flag_lines(verdict: Verdict) -> tuple[str, ...]:
    """One line per reason of ``verdict`` (:attr:`Verdict.flags`): ``"Held back: the figure 12%
    is not stated for the same subject in the evidence"``, or, for a verdict shown red or green
    with reasons, led by :data:`REASON_LEADS` (``"Contradicted: the passage negates it:
    ..."``); a claim part's line stands without a lead (``'Part 1 of 2, "...": supported'``);
    ``()`` without reasons."""
    lead = HELD_BACK if verdict.shown is None else REASON_LEADS.get(verdict.shown, HELD_BACK)
    return tuple(
        f"P{flag[1:]}" if flag.startswith(PART_REASON_PREFIX) else f"{lead}: {flag}"
        for flag in verdict.flags
    )


def deciding_verdict(sentence: AnswerSentence) -> Verdict | None:
    """The verdict an unsure sentence's best guess comes from: its strongest (highest
    ``max(P(SUPPORT), P(CONTRADICT))``, the rule of
    :func:`verifai_desktop.domain.label_probability`); ``None`` without verdicts."""
    return max(sentence.verdicts, key=lambda v: max(v.p_support, v.p_contradict), default=None)


def unsure_guess(sentence: AnswerSentence) -> str:
    """For an unsure sentence, its deciding verdict's :func:`best_guess`; ``""`` for any other
    label or a sentence without verdicts."""
    verdict = deciding_verdict(sentence)
    if sentence.label is not SentenceLabel.UNSURE or verdict is None:
        return ""
    return best_guess(verdict)


def verdict_phrase(verdict: Verdict) -> str:
    """What a passage does to a sentence, with the deciding probability:
    ``"contradicts it (contradict 0.88)"``."""
    if verdict.label is NliLabel.CONTRADICT:
        return f"contradicts it (contradict {verdict.p_contradict:.2f})"
    if verdict.label is NliLabel.SUPPORT:
        return f"comes closest to supporting it (support {verdict.p_support:.2f})"
    return f"neither supports nor contradicts it (no evidence {verdict.p_no_evidence:.2f})"


def sentence_probability(sentence: AnswerSentence) -> float | None:
    """Probability shown for a sentence label (the rule of
    :func:`verifai_desktop.domain.label_probability`: e.g. the weakest P(SUPPORT)
    of a supported sentence, the strongest P(CONTRADICT) of a contradicted one).

    Returns ``None`` for a sentence without verdicts (unreferenced), and for one a rule showed
    red (:mod:`verifai_desktop.verify.rules`: no verdict shown CONTRADICT has CONTRADICT as the
    verifier's best guess): the verifier's P(CONTRADICT) does not back that label, the reasons
    do.
    """
    if not sentence.verdicts:
        return None
    red = [v for v in sentence.verdicts if v.shown is ShownLabel.CONTRADICT]
    rule_red = red and all(v.label is not NliLabel.CONTRADICT for v in red)
    if sentence.label is SentenceLabel.CONTRADICTED and rule_red:
        return None
    return label_probability(sentence.label, sentence.verdicts)


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
    if answer.not_found:
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
            if unsure_guess(s):
                prob = f" — {unsure_guess(s)}"
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
                ev = f': "{joined_lines(v.evidence)}"' if v.evidence else ""
                out.append(f"   - [{v.passage_number}] {where} — {verdict_summary(v)}{ev}")
                out += [f"     - {line}" for line in flag_lines(v)]
            if s.conflicts:
                out.append(f"   - {CONFLICT_GLYPH} {CONFLICT_TITLE}:")
                for c in s.conflicts:
                    out.append(f"     - {conflict_note(c)}")
                    out += [f"       - {line}" for line in flag_lines(c.verdict)]
        out.append("")
    out += ["## Sources", ""]
    for n, ps in enumerate(answer.passages, start=1):
        out.append(
            f"[{n}] {ps.title} — {ps.source_label()} — lexical {ps.lexical_score:.2f}, "
            f"semantic {ps.semantic_score:.2f}, fused {ps.fused_score:.3f}"
            + ("" if ps.evidence is None else f", evidence {ps.evidence:.2f} (reranked)")
        )
        if ps.ocr is not None:
            out.append(f"    {ocr_note(ps)}")
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
    if answer.not_found:
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
            if unsure_guess(s):
                prob = f" — {unsure_guess(s)}"
            parts.append(
                f'<span class="sentence {s.label.value}" style="{sentence_css(s.label)}" '
                f'title="{e(st.title)}{prob}">{e(s.text)}</span>'
                f'<sup title="{e(st.title)}">{st.glyph}</sup>{conflict_sup if s.conflicts else ""} '
            )
        parts.append("</p><h2>Evidence</h2><ol>")
        for s in answer.sentences:
            st = LABEL_STYLES[s.label]
            guess = f" ({e(unsure_guess(s))})" if unsure_guess(s) else ""
            parts.append(
                f'<li><span style="{sentence_css(s.label)}">{e(s.text)}</span> '
                f"— {st.glyph} {e(st.title)}{guess}<ul>"
            )
            if s.recited:
                parts.append(f"<li><em>{e(recitation_note(s))}</em></li>")
            for v in s.verdicts:
                passage = _passage_for(answer, v.passage_number)
                where = passage.source_label() if passage else "unknown source"
                body = highlight_evidence_html(passage.text, v.evidence_span) if passage else ""
                parts.append(
                    f"<li>[{v.passage_number}] {e(where)} — {e(verdict_summary(v))}"
                    f"{_flags_html(v)}<blockquote>{body}</blockquote></li>"
                )
            if s.conflicts:
                parts.append(f"<li>{CONFLICT_GLYPH} {e(CONFLICT_TITLE)}<ul>")
                for c in s.conflicts:
                    body = highlight_evidence_html(c.passage.text, c.verdict.evidence_span)
                    parts.append(
                        f"<li>{e(c.passage.source_label())} — {e(verdict_summary(c.verdict))}"
                        f"{_flags_html(c.verdict)}<blockquote>{body}</blockquote></li>"
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
        if ps.ocr is not None:
            warn = f"<br><small>{e(ocr_note(ps))}</small>{warn}"
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


def _flags_html(verdict: Verdict) -> str:
    """The verdict's :func:`flag_lines`, each on its own line (escaped), or ``""``."""
    return "".join(f"<br><em>{html.escape(line)}</em>" for line in flag_lines(verdict))


def conflict_note(evidence: Evidence) -> str:
    """``"file.pdf, p. 4: “the contradicting sentence” (contradict 0.91)"``."""
    v = evidence.verdict
    return (
        f"{evidence.passage.source_label()}: “{joined_lines(v.evidence)}” "
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


CHECK_VERDICT_TEXT: dict[CheckLabel, str] = {
    "SUPPORT": "supports",
    "CONTRADICT": "contradicts",
    "NO_EVIDENCE": "no evidence",
    "UNSURE": "unsure",
}
"""How a document's verdict on a claim is worded (``"report.pdf supports"``)."""

CHECK_VERDICT_LABEL: dict[CheckLabel, SentenceLabel] = {
    "SUPPORT": SentenceLabel.SUPPORTED,
    "CONTRADICT": SentenceLabel.CONTRADICTED,
    "NO_EVIDENCE": SentenceLabel.NO_EVIDENCE,
    "UNSURE": SentenceLabel.UNSURE,
}
"""The sentence label whose style (:data:`LABEL_STYLES`) shows a document verdict."""


def document_verdict_note(document: DocumentVerdict) -> str:
    """What backs a document's verdict on a claim: ``"probability 0.91"``, or for an
    ``UNSURE`` document its strongest passage's :func:`best_guess` (``"best guess:
    supported, p 0.72"``)."""
    if document.label == "UNSURE":
        return best_guess(document.evidence.verdict)
    return f"probability {document.probability:.2f}"
