"""A claim checked against a whole collection (:class:`~verifai_desktop.domain.
CheckResult`) as rich text for the answer area: the claim, what each document says about it,
then the supporting and the contradicting passages with their evidence highlighted.

Every source in it is a link (:func:`evidence_href`) that the answer view resolves back to its
:class:`~verifai_desktop.domain.Evidence` (:func:`evidence_for_href`) to open the document at
that passage. A source from a reference library is named author-year ("Cohan et al., 2020,
p. 3") as answers name it, others by file name and location (:mod:`verifai_desktop.citations`).
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable

from verifai_desktop.check_view import check_passages
from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.citations import passage_labeler
from verifai_desktop.domain import CheckResult, Evidence, Passage, SentenceLabel
from verifai_desktop.errors import VerifaiError
from verifai_desktop.presentation import (
    CHECK_VERDICT_LABEL,
    CHECK_VERDICT_TEXT,
    LABEL_STYLES,
    document_verdict_note,
    verdict_summary,
)
from verifai_desktop.ui.evidence_popup import evidence_span, excerpt_with_evidence, flags_html

log = logging.getLogger(__name__)

BACK_HREF = "back:answer"
"""Link back from a sentence's check to the answer it came from."""

_KINDS = {"s": "supporting", "c": "contradicting", "d": "documents"}


def evidence_href(kind: str, index: int) -> str:
    """``"evidence:s:0"``: the link to entry ``index`` of the result's ``supporting`` (``s``),
    ``contradicting`` (``c``) or ``documents`` (``d``)."""
    if kind not in _KINDS:
        raise ValueError(f"unknown evidence kind {kind!r}")
    return f"evidence:{kind}:{index}"


def evidence_for_href(result: CheckResult, href: str) -> Evidence | None:
    """The evidence a link of :func:`build_check_html` names; ``None`` for any other link."""
    parts = href.split(":")
    if len(parts) != 3 or parts[0] != "evidence" or parts[1] not in _KINDS:
        return None
    if not parts[2].isdigit():
        return None
    i = int(parts[2])
    if parts[1] == "d":
        return result.documents[i].evidence if i < len(result.documents) else None
    found = result.supporting if parts[1] == "s" else result.contradicting
    return found[i] if i < len(found) else None


def _heading(label: SentenceLabel, text: str) -> str:
    style = LABEL_STYLES[label]
    return (
        f"<p style='margin:14px 0 2px 0'><b style='color:{style.color_hex}'>{style.glyph} "
        f"{html.escape(text)}</b></p>"
    )


def check_labeler(
    result: CheckResult, citations: CitationSettings | None
) -> Callable[[Passage], str]:
    """How the check's passages are named: author-year where a passage's document has a
    reference-manager entry and ``citations`` (``None``: the defaults) says author-year, else
    file name and location; file names only when the CSL style cannot be loaded (logged: the
    check is shown rather than not at all, as :func:`~verifai_desktop.ui.answer_render.
    citer_for` does for answers)."""
    try:
        return passage_labeler(check_passages(result), citations)
    except VerifaiError as exc:
        log.warning("citations: %s; sources named by file", exc)
        return Passage.source_label


def _passage_html(evidence: Evidence, href: str, name_of: Callable[[Passage], str]) -> str:
    passage, verdict = evidence.passage, evidence.verdict
    body = excerpt_with_evidence(passage.text, evidence_span(passage, verdict))
    return (
        f"<p style='margin:8px 0 2px 0'><a href='{href}'><b>"
        f"{html.escape(name_of(passage))}</b></a> — {html.escape(passage.title)}"
        f"<br><span style='color:#333'>{html.escape(verdict_summary(verdict))}</span></p>"
        f"{flags_html(verdict)}<p style='margin:0 0 4px 12px'>{body}</p>"
    )


def build_check_html(
    result: CheckResult, *, back: bool = False, citations: CitationSettings | None = None
) -> str:
    """Rich text of a claim check.

    Args:
        result: the check.
        back: start with a link (:data:`BACK_HREF`) back to the answer the claim came from.
        citations: the ``[citations]`` settings (``None``: the defaults, author-year with
            APA): how sources with a reference-manager entry are named (:func:`check_labeler`).

    Returns:
        HTML for a ``QTextBrowser``: the claim; one line per document with its verdict
        (supports, contradicts, no evidence, unsure) in the colour and glyph of the matching
        sentence label, its probability (an unsure document's best guess instead) and the
        checks that held its passage's verdict back; then the supporting and the
        contradicting passages, each with its source (a link: "Cohan et al., 2020, p. 3", or
        file and location), title, the verifier's probabilities, its checks and the passage
        with its evidence window highlighted.
    """
    e = html.escape
    name_of = check_labeler(result, citations)
    parts: list[str] = []
    if back:
        parts.append(
            f"<p style='margin:0 0 8px 0'><a href='{BACK_HREF}'>← Back to the answer</a></p>"
        )
    parts.append(
        "<p style='margin:0 0 2px 0;color:#555'>Claim checked across your documents</p>"
        f"<p style='margin:0 0 4px 0;font-size:large'><b>“{e(result.claim)}”</b></p>"
    )
    n_docs = len(result.documents)
    parts.append(
        f"<p style='margin:0;color:#555'>{result.candidates} "
        f"{'passage' if result.candidates == 1 else 'passages'} checked in {n_docs} "
        f"{'document' if n_docs == 1 else 'documents'}.</p>"
    )
    parts.append("<p style='margin:14px 0 2px 0'><b>What each document says</b></p>")
    if not result.documents:
        parts.append("<p>No passage in your documents is close to this claim.</p>")
    else:
        rows = []
        for i, doc in enumerate(result.documents):
            style = LABEL_STYLES[CHECK_VERDICT_LABEL[doc.label]]
            where = name_of(doc.evidence.passage)
            rows.append(
                f"<tr><td style='color:{style.color_hex};font-weight:600' width='130'>"
                f"{style.glyph} {e(CHECK_VERDICT_TEXT[doc.label])}</td>"
                f"<td>{e(doc.title)}<br><a href='{evidence_href('d', i)}'>{e(where)}</a>"
                f"<span style='color:#555'> · {e(document_verdict_note(doc))}</span>"
                f"{flags_html(doc.evidence.verdict)}</td></tr>"
            )
        parts.append("<table cellspacing='0' cellpadding='3'>" + "".join(rows) + "</table>")
    sections = (
        ("s", SentenceLabel.SUPPORTED, "Supporting passages", result.supporting, "supports"),
        (
            "c",
            SentenceLabel.CONTRADICTED,
            "Contradicting passages",
            result.contradicting,
            "contradicts",
        ),
    )
    for kind, label, title, found, verb in sections:
        parts.append(_heading(label, f"{title} ({len(found)})"))
        if not found:
            parts.append(
                f"<p style='margin:0 0 4px 12px;color:#555'>No passage {verb} the claim.</p>"
            )
        parts += [_passage_html(ev, evidence_href(kind, i), name_of) for i, ev in enumerate(found)]
    return "".join(parts)
