"""A claim check (:class:`~verifai_desktop.domain.CheckResult`) as a person reads it outside the
app's answer pane: a one-line summary, Markdown and a standalone HTML page in the answer's label
colours and glyphs, and the export that writes one of them (or its JSON) to a file. The
answer's counterparts are in :mod:`verifai_desktop.presentation`; the check's JSON is
:mod:`verifai_desktop.codec`'s.

Layer: presentation (used by ``cli/`` and ``ui/``).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from verifai_desktop.answer_files import ExportFormat, format_for_path
from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.citations import passage_labeler
from verifai_desktop.codec import check_to_json
from verifai_desktop.domain import CheckResult, Evidence, Passage, SentenceLabel
from verifai_desktop.presentation import (
    CHECK_VERDICT_LABEL,
    CHECK_VERDICT_TEXT,
    LABEL_STYLES,
    document_verdict_note,
    flag_lines,
    highlight_evidence_html,
    joined_lines,
    sentence_css,
    verdict_summary,
)
from verifai_desktop.private import export_private_texts, export_target

CHECK_TITLE = "Claim checked across your documents"
"""The line above a claim check's claim."""

_SECTIONS = (
    ("Supporting passages", SentenceLabel.SUPPORTED, "supports"),
    ("Contradicting passages", SentenceLabel.CONTRADICTED, "contradicts"),
)


def check_summary(result: CheckResult) -> str:
    """``"1 document supports, 2 contradict, 1 without evidence, 1 unsure · 30 passages
    checked"``."""
    singular = {"SUPPORT": "supports", "CONTRADICT": "contradicts", "UNSURE": "unsure"}
    plural = {"SUPPORT": "support", "CONTRADICT": "contradict", "UNSURE": "unsure"}
    counts = {label: 0 for label in CHECK_VERDICT_TEXT}
    for doc in result.documents:
        counts[doc.label] += 1
    parts: list[str] = []
    for label, n in counts.items():
        if not n:
            continue
        verb = (singular if n == 1 else plural).get(label, "without evidence")
        noun = "" if parts else (" document" if n == 1 else " documents")
        parts.append(f"{n}{noun} {verb}")
    return " · ".join(x for x in (", ".join(parts), _checked(result)) if x)


def _checked(result: CheckResult) -> str:
    return f"{result.candidates} {'passage' if result.candidates == 1 else 'passages'} checked"


def check_passages(result: CheckResult) -> list[Passage]:
    """Every passage a claim check shows (documents' evidence, supporting, contradicting)."""
    found = [d.evidence for d in result.documents] + [*result.supporting, *result.contradicting]
    return [ev.passage for ev in found]


def check_to_markdown(result: CheckResult, citations: CitationSettings | None = None) -> str:
    """A claim check as Markdown: the claim, each document's verdict, then the supporting and
    the contradicting passages with their evidence quoted (line breaks of the PDF joined,
    :func:`~verifai_desktop.presentation.joined_lines`) and the checks that held each back.
    Passages are named author-year where their source has an entry (``citations``: the
    ``[citations]`` settings, ``None`` the defaults), else by file name and location.

    Returns:
        A Markdown document (str) ending with a newline.
    """
    name_of = passage_labeler(check_passages(result), citations)
    out = [f"# {CHECK_TITLE}", "", f"**“{result.claim}”**", "", f"{check_summary(result)}.", ""]
    out += ["## What each document says", ""]
    if not result.documents:
        out += ["No passage in your documents is close to this claim.", ""]
    for doc in result.documents:
        style = LABEL_STYLES[CHECK_VERDICT_LABEL[doc.label]]
        out.append(
            f"- **{style.glyph} {CHECK_VERDICT_TEXT[doc.label]}** — {doc.title} — "
            f"{name_of(doc.evidence.passage)} — {document_verdict_note(doc)}"
        )
        out += [f"  - {line}" for line in flag_lines(doc.evidence.verdict)]
    for (title, label, verb), found in zip(
        _SECTIONS, (result.supporting, result.contradicting), strict=True
    ):
        style = LABEL_STYLES[label]
        out += ["", f"## {style.glyph} {title} ({len(found)})", ""]
        if not found:
            out.append(f"No passage {verb} the claim.")
        for i, ev in enumerate(found, start=1):
            v = ev.verdict
            quote = f': "{joined_lines(v.evidence)}"' if v.evidence.strip() else ""
            out.append(
                f"{i}. {name_of(ev.passage)} — {ev.passage.title} — {verdict_summary(v)}{quote}"
            )
            out += [f"   - {line}" for line in flag_lines(v)]
    out += ["", "Legend: " + "; ".join(f"{s.glyph} {s.title}" for s in LABEL_STYLES.values()), ""]
    return "\n".join(out)


def _passage_html(ev: Evidence, name_of: Callable[[Passage], str]) -> str:
    e = html.escape
    flags = "".join(f"<br><em>{e(line)}</em>" for line in flag_lines(ev.verdict))
    body = highlight_evidence_html(ev.passage.text, ev.verdict.evidence_span)
    return (
        f"<li><b>{e(name_of(ev.passage))}</b> — {e(ev.passage.title)}<br>"
        f"{e(verdict_summary(ev.verdict))}{flags}<blockquote>{body}</blockquote></li>"
    )


def check_to_html(result: CheckResult, citations: CitationSettings | None = None) -> str:
    """A claim check as a standalone HTML page in the app's label colours and glyphs: the
    claim, each document's verdict, then the supporting and the contradicting passages with
    their evidence marked; passages named as in :func:`check_to_markdown`.

    Returns:
        An HTML5 document (str), styles inline so it survives copy and paste.
    """
    e = html.escape
    name_of = passage_labeler(check_passages(result), citations)
    parts = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{e(result.claim)}</title></head><body>",
        f"<p>{e(CHECK_TITLE)}</p><h1>“{e(result.claim)}”</h1>",
        f"<p>{e(check_summary(result))}.</p>",
        "<h2>What each document says</h2>",
    ]
    if not result.documents:
        parts.append("<p>No passage in your documents is close to this claim.</p>")
    else:
        parts.append('<table border="1" cellpadding="4">')
        for doc in result.documents:
            label = CHECK_VERDICT_LABEL[doc.label]
            flags = "".join(f"<br><em>{e(line)}</em>" for line in flag_lines(doc.evidence.verdict))
            parts.append(
                f'<tr><td style="{sentence_css(label)}">{LABEL_STYLES[label].glyph} '
                f"{e(CHECK_VERDICT_TEXT[doc.label])}</td><td>{e(doc.title)}<br><small>"
                f"{e(name_of(doc.evidence.passage))} · {e(document_verdict_note(doc))}"
                f"</small>{flags}</td></tr>"
            )
        parts.append("</table>")
    for (title, label, verb), found in zip(
        _SECTIONS, (result.supporting, result.contradicting), strict=True
    ):
        style = LABEL_STYLES[label]
        parts.append(
            f'<h2 style="color:{style.color_hex}">{style.glyph} {e(title)} ({len(found)})</h2>'
        )
        if not found:
            parts.append(f"<p>No passage {verb} the claim.</p>")
        else:
            parts.append("<ol>" + "".join(_passage_html(ev, name_of) for ev in found) + "</ol>")
    parts.append("</body></html>")
    return "\n".join(parts)


CHECK_RENDERERS: dict[str, Callable[[CheckResult, CitationSettings | None], str]] = {
    "markdown": check_to_markdown,
    "html": check_to_html,
    "json": lambda result, _citations: check_to_json(result),
}
"""How a claim check is written in each export format, by the format's name
(:data:`~verifai_desktop.answer_files.EXPORT_FORMATS`)."""


def write_check(
    result: CheckResult,
    path: Path | str,
    *,
    fmt: ExportFormat | None = None,
    citations: CitationSettings | None = None,
) -> Path:
    """Write ``result`` to ``path`` as UTF-8 in ``fmt`` (by default the format its suffix
    names), like :func:`~verifai_desktop.answer_files.write_answer`: user-only (mode 0600; it
    quotes the documents), whole or not at all; passages named as ``citations`` says.

    Returns:
        The path written.

    Raises:
        UnsupportedExportFormat: ``fmt`` is None and the suffix names no export format.
        ExportFailed: the file cannot be written; nothing was changed.
    """
    target = export_target(path, "claim check")
    fmt = fmt or format_for_path(target)
    export_private_texts(
        [(target, CHECK_RENDERERS[fmt.name](result, citations))], what="claim check"
    )
    return target
