"""How the answer view writes an :class:`~verifai_desktop.domain.Answer` into its document.

Each rendered sentence carries its index and label in its ``QTextCharFormat`` properties
(:data:`PROP_SENTENCE`, :data:`PROP_LABEL`, ...), so :mod:`verifai_desktop.ui.answer_readback`
reads sentences back from the document itself rather than from the answer handed in. Styles
come from :data:`verifai_desktop.presentation.LABEL_STYLES`: colour plus an underline style
plus a marker glyph, so labels read without colour. A sentence that passages elsewhere in the
documents contradict gets the conflict marker
(:data:`~verifai_desktop.presentation.CONFLICT_GLYPH`) after its glyph.

An answer refused by evidence (:attr:`Answer.refused_by_evidence`) opens on
:data:`~verifai_desktop.presentation.UNSUPPORTED_TEXT` and the closest evidence for each of its
sentences, with a link (:data:`SHOW_GENERATED_HREF`) to the generated answer; rendered with its
generated text, it has a link (:data:`HIDE_GENERATED_HREF`) back. The widget is
:class:`~verifai_desktop.ui.answer_view.AnswerView`.

Where passages come from a reference library and the ``[citations]`` style is author-year, a
:class:`~verifai_desktop.citations.Citer` writes the markers as "(Cohan et al., 2020, p. 3)",
each name a link to its passage as the numbers are, and the answer ends with the references
cited (issue 43).
"""

from __future__ import annotations

import logging
import re

from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextFormat

from verifai_desktop.citation_settings import CitationSettings
from verifai_desktop.citations import Citer, cited_passages
from verifai_desktop.domain import CITATION_RE, Answer, SentenceLabel
from verifai_desktop.errors import VerifaiError
from verifai_desktop.presentation import (
    CONFLICT_COLOR,
    CONFLICT_GLYPH,
    CONFLICT_TITLE,
    LABEL_STYLES,
    NOT_FOUND_TEXT,
    UNSUPPORTED_TEXT,
    LabelStyle,
    flag_lines,
    recitation_note,
    unsure_guess,
    verdict_phrase,
)

log = logging.getLogger(__name__)

PROP_SENTENCE = int(QTextFormat.Property.UserProperty) + 1  # int: sentence index
PROP_LABEL = int(QTextFormat.Property.UserProperty) + 2  # str: SentenceLabel value
PROP_MARKER = int(QTextFormat.Property.UserProperty) + 3  # bool: the glyph after a sentence
PROP_CITATION = int(QTextFormat.Property.UserProperty) + 4  # int: cited passage number
PROP_RECITED = int(QTextFormat.Property.UserProperty) + 5  # bool: the re-cited sign
PROP_CONFLICT = int(QTextFormat.Property.UserProperty) + 6  # bool: the conflict marker
RECITED_SIGN = "\u21bb"  # ↻ after the corrected citations of a re-cited sentence
SHOW_GENERATED_HREF = "generated:show"
HIDE_GENERATED_HREF = "generated:hide"
SHOW_GENERATED_TEXT = "Show the generated answer"
HIDE_GENERATED_TEXT = "Hide the generated answer"
UNSUPPORTED_NOTE = (
    "An answer was written from the passages, but the verifier found no sentence of it that "
    "the passages support, so it is not given as an answer. The closest evidence:"
)
GENERATED_NOTE = (
    "The generated answer, shown as verified: none of its sentences is supported by the "
    "passages given."
)
NO_VERDICT_NOTE = "No passage given supports it."
EVIDENCE_SENTENCES = 4  # sentences whose closest evidence an unsupported answer lists
CLOSEST_PASSAGES = 3
"""Passages listed, folded, when there is no verdict to show (nothing close enough, or no
sentence with a verdict): the nearest few; the rest of a "not found" search is unrelated
text (issue 42)."""
SHOW_PASSAGES_HREF = "passages:show"
HIDE_PASSAGES_HREF = "passages:hide"
HIDE_PASSAGES_TEXT = "\u25be Hide the nearest passages"
NOT_CLOSE_TEXT = "No passage in this collection is close enough to the question to answer it."


def show_passages_text(n: int) -> str:
    """The link that unfolds the ``n`` nearest passages of an answer without verdicts."""
    return "\u25b8 Show the nearest passage" if n == 1 else f"\u25b8 Show the {n} nearest passages"


_UNDERLINES: dict[str, QTextCharFormat.UnderlineStyle] = {
    "solid": QTextCharFormat.UnderlineStyle.SingleUnderline,
    "dashed": QTextCharFormat.UnderlineStyle.DashUnderline,
    "wavy": QTextCharFormat.UnderlineStyle.WaveUnderline,
    "dotted": QTextCharFormat.UnderlineStyle.DotLine,
    # Qt draws no double underline; dash-dot is the line no other label uses.
    "double": QTextCharFormat.UnderlineStyle.DashDotLine,
    "none": QTextCharFormat.UnderlineStyle.NoUnderline,
}
CITATION_COLOR = "#1a4f9c"


def qt_underline(style: LabelStyle) -> QTextCharFormat.UnderlineStyle:
    """The Qt underline style used for a label style."""
    return _UNDERLINES[style.underline]


def sentence_char_format(label: SentenceLabel) -> QTextCharFormat:
    """Colour and underline of a sentence with ``label`` (no index properties)."""
    style = LABEL_STYLES[label]
    fmt = QTextCharFormat()
    color = QColor(style.color_hex)
    fmt.setForeground(color)
    fmt.setUnderlineStyle(qt_underline(style))
    fmt.setUnderlineColor(color)
    if label is SentenceLabel.CONTRADICTED:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    if label is SentenceLabel.NO_EVIDENCE:
        fmt.setFontItalic(True)
    return fmt


def render_answer(
    cursor: QTextCursor,
    answer: Answer,
    *,
    show_generated: bool,
    point_size: float,
    citer: Citer | None = None,
    show_passages: bool = False,
) -> None:
    """Write ``answer`` at ``cursor``: labelled sentences, or the abstention text with the
    closest passages (nothing retrieved was close enough) or the closest evidence (no sentence
    supported).

    Args:
        cursor: where to write, in an empty document.
        answer: the answer.
        show_generated: for an answer refused by evidence, render its generated sentences (as
            a normal answer, under the refusal) instead of the closest evidence.
        point_size: the view's font size in points; the headline is a quarter larger.
        citer: names the passages (author-year where they have entries); ``None``: numbers
            and file names.
        show_passages: unfold the nearest passages (at most :data:`CLOSEST_PASSAGES`) listed
            when there is no verdict to show; folded, a link (:data:`SHOW_PASSAGES_HREF`)
            unfolds them.
    """
    if citer is not None and not citer.author_year:
        citer = None
    if answer.refused_by_evidence:
        if show_generated:
            _render_generated(cursor, answer, point_size, citer)
        else:
            _render_unsupported(cursor, answer, point_size, citer, show_passages)
    elif answer.abstained:
        _render_abstention(cursor, answer, point_size, citer, show_passages)
    else:
        _render_sentences(cursor, answer, citer)
        _render_references(cursor, answer, citer)


REFERENCES_TITLE = "References"


def citer_for(answer: Answer, settings: CitationSettings) -> Citer | None:
    """The citer of ``answer``'s passages in the ``[citations]`` style; ``None`` when no
    passage has an entry, the style is numeric, or the CSL style cannot be loaded (logged:
    the answer is shown with numbers rather than not at all)."""
    try:
        citer = Citer(answer.passages, settings)
    except VerifaiError as exc:
        log.warning("citations: %s; numbered citations shown", exc)
        return None
    return citer if citer.author_year else None


def _render_references(cursor: QTextCursor, answer: Answer, citer: Citer | None) -> None:
    """The formatted references of the entries the answer cites (none without a citer)."""
    refs = citer.bibliography(cited_passages(answer), "text") if citer is not None else []
    if not refs:
        return
    spaced = QTextBlockFormat()
    spaced.setTopMargin(14)
    cursor.insertBlock(spaced)
    head = QTextCharFormat()
    head.setFontWeight(QFont.Weight.Bold)
    cursor.insertText(REFERENCES_TITLE, head)
    hanging = QTextBlockFormat()
    hanging.setTopMargin(4)
    hanging.setLeftMargin(24)
    hanging.setTextIndent(-24)
    for entry in refs:
        cursor.insertBlock(hanging)
        cursor.insertText(entry, QTextCharFormat())


def _source(answer: Answer, n: int, citer: Citer | None) -> str:
    """How passage ``n`` (1-based) is named: ``"[3] acl2020_specter.pdf, p. 3"``, or
    ``"(Cohan et al., 2020, p. 3)"`` author-year."""
    passage = answer.passages[n - 1]
    if citer is None:
        return f"[{n}] {passage.source_label()}"
    return f"({citer.label(passage)})"


def _insert_headline(cursor: QTextCursor, text: str, point_size: float) -> None:
    head = QTextCharFormat()
    head.setFontWeight(QFont.Weight.Bold)
    head.setFontPointSize(point_size * 1.25)
    cursor.insertText(text, head)


def _insert_link(cursor: QTextCursor, text: str, href: str) -> None:
    link = QTextCharFormat()
    link.setAnchor(True)
    link.setAnchorHref(href)
    link.setForeground(QColor(CITATION_COLOR))
    link.setFontWeight(QFont.Weight.DemiBold)
    cursor.insertText(text, link)


def _insert_closest_passages(
    cursor: QTextCursor, answer: Answer, citer: Citer | None, shown: bool
) -> None:
    """The nearest :data:`CLOSEST_PASSAGES` passages, each with the start of its text, after a
    link that folds them; folded, only the link that unfolds them."""
    nearest = answer.passages[:CLOSEST_PASSAGES]
    if not nearest:
        return
    cursor.insertBlock(QTextBlockFormat())
    if not shown:
        _insert_link(cursor, show_passages_text(len(nearest)), SHOW_PASSAGES_HREF)
        return
    _insert_link(cursor, HIDE_PASSAGES_TEXT, HIDE_PASSAGES_HREF)
    for n, passage in enumerate(nearest, start=1):
        cursor.insertBlock(QTextBlockFormat())
        _insert_link(cursor, _source(answer, n, citer), f"cite:{n}")
        snippet = passage.text[:240] + ("…" if len(passage.text) > 240 else "")
        cursor.insertText(f" — {snippet}", QTextCharFormat())


def _render_abstention(
    cursor: QTextCursor,
    answer: Answer,
    point_size: float,
    citer: Citer | None,
    show_passages: bool,
) -> None:
    _insert_headline(cursor, NOT_FOUND_TEXT, point_size)
    cursor.insertBlock()
    cursor.insertText(NOT_CLOSE_TEXT, QTextCharFormat())
    _insert_closest_passages(cursor, answer, citer, show_passages)


def _render_unsupported(
    cursor: QTextCursor,
    answer: Answer,
    point_size: float,
    citer: Citer | None,
    show_passages: bool,
) -> None:
    """The refusal, then per sentence (the first :data:`EVIDENCE_SENTENCES`) its strongest
    verdict's passage, deciding window and the checks that held it back, then the link to
    the answer."""
    _insert_headline(cursor, UNSUPPORTED_TEXT, point_size)
    cursor.insertBlock()
    cursor.insertText(UNSUPPORTED_NOTE, QTextCharFormat())
    quote = QTextCharFormat()
    quote.setFontItalic(True)
    indent = QTextBlockFormat()
    indent.setIndent(1)
    spaced = QTextBlockFormat()
    spaced.setTopMargin(6)
    shown = answer.sentences[:EVIDENCE_SENTENCES]
    if not any(answer.closest_verdict(s) for s in shown):
        _insert_closest_passages(cursor, answer, citer, show_passages)
    else:
        for sentence in shown:
            cursor.insertBlock(spaced)
            cursor.insertText(f"\u201c{sentence.claim}\u201d", quote)
            cursor.insertBlock(indent)
            verdict = answer.closest_verdict(sentence)
            if verdict is None:
                cursor.insertText(NO_VERDICT_NOTE, QTextCharFormat())
                continue
            n = verdict.passage_number
            _insert_link(cursor, _source(answer, n, citer), f"cite:{n}")
            said = f" {verdict_phrase(verdict)}"
            if verdict.evidence.strip():
                said += f": \u201c{verdict.evidence.strip()}\u201d"
            cursor.insertText(said, QTextCharFormat())
            for line in flag_lines(verdict):
                cursor.insertBlock(indent)
                cursor.insertText(line, QTextCharFormat())
        more = len(answer.sentences) - len(shown)
        if more > 0:
            cursor.insertBlock(spaced)
            cursor.insertText(
                f"and {more} more {'sentence' if more == 1 else 'sentences'}.",
                QTextCharFormat(),
            )
    link_block = QTextBlockFormat()
    link_block.setTopMargin(12)
    cursor.insertBlock(link_block)
    _insert_link(cursor, SHOW_GENERATED_TEXT, SHOW_GENERATED_HREF)


def _render_generated(
    cursor: QTextCursor, answer: Answer, point_size: float, citer: Citer | None
) -> None:
    """The refusal, the link back to the closest evidence, then the generated answer."""
    _insert_headline(cursor, UNSUPPORTED_TEXT, point_size)
    cursor.insertBlock()
    cursor.insertText(GENERATED_NOTE, QTextCharFormat())
    cursor.insertBlock(QTextBlockFormat())
    _insert_link(cursor, HIDE_GENERATED_TEXT, HIDE_GENERATED_HREF)
    sentences = QTextBlockFormat()
    sentences.setTopMargin(10)
    cursor.insertBlock(sentences)
    _render_sentences(cursor, answer, citer)


def _sign_format(index: int, label: SentenceLabel, prop: int, color_hex: str) -> QTextCharFormat:
    """A sign after sentence ``index`` (its glyph, the re-cited or the conflict sign): in
    ``color_hex``, tagged with the sentence and with ``prop`` (what the sign is)."""
    sign = QTextCharFormat()
    sign.setForeground(QColor(color_hex))
    sign.setProperty(PROP_SENTENCE, index)
    sign.setProperty(PROP_LABEL, label.value)
    sign.setProperty(prop, True)
    return sign


def _render_sentences(cursor: QTextCursor, answer: Answer, citer: Citer | None) -> None:
    block = cursor.blockFormat()  # keeps the margins of a block made for the sentences
    block.setLineHeight(150.0, int(QTextBlockFormat.LineHeightTypes.ProportionalHeight.value))
    cursor.setBlockFormat(block)
    prev_end = 0
    for i, sentence in enumerate(answer.sentences):
        gap = (
            answer.text[prev_end : sentence.char_start] if sentence.char_start >= prev_end else " "
        )
        if gap:
            cursor.insertText(gap, QTextCharFormat())
        base = sentence_char_format(sentence.label)
        base.setProperty(PROP_SENTENCE, i)
        base.setProperty(PROP_LABEL, sentence.label.value)
        base.setAnchor(True)
        first = sentence.citations[0] if sentence.citations else 0
        base.setAnchorHref(f"sent:{i}:{first}")
        pos = 0
        for m in CITATION_RE.finditer(sentence.text):
            cursor.insertText(sentence.text[pos : m.start()], base)
            _insert_citation(cursor, base, m.group(0), citer)
            pos = m.end()
        cursor.insertText(sentence.text[pos:], base)
        if sentence.recited:
            sign = _sign_format(i, sentence.label, PROP_RECITED, CITATION_COLOR)
            sign.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
            sign.setToolTip(recitation_note(sentence))
            cursor.insertText(RECITED_SIGN, sign)
        style = LABEL_STYLES[sentence.label]
        marker = _sign_format(i, sentence.label, PROP_MARKER, style.color_hex)
        marker.setFontWeight(QFont.Weight.Bold)
        guess = unsure_guess(sentence)
        marker.setToolTip(f"{style.title} — {guess}" if guess else style.title)
        cursor.insertText("\u2009" + style.glyph, marker)
        if sentence.conflicts:
            flag = _sign_format(i, sentence.label, PROP_CONFLICT, CONFLICT_COLOR)
            flag.setFontWeight(QFont.Weight.Bold)
            flag.setToolTip(CONFLICT_TITLE)
            cursor.insertText("\u2009" + CONFLICT_GLYPH, flag)
        prev_end = max(prev_end, sentence.char_end)
    tail = answer.text[prev_end:]
    if tail.strip():
        cursor.insertText(tail, QTextCharFormat())


def _insert_citation(
    cursor: QTextCursor, base: QTextCharFormat, marker: str, citer: Citer | None
) -> None:
    """Insert ``[1, 2]`` with each number a link to its passage, inside the sentence; with a
    ``citer``, ``(Cohan et al., 2020, p. 3; Lo et al., 2020, p. 1)`` with each name a link."""
    plain = QTextCharFormat(base)
    plain.setAnchor(False)
    plain.setAnchorHref("")
    plain.setUnderlineStyle(QTextCharFormat.UnderlineStyle.NoUnderline)
    plain.setForeground(QColor(CITATION_COLOR))
    if citer is not None:
        _insert_author_year(cursor, plain, marker, citer)
        return
    for piece in re.split(r"(\d+)", marker):
        if not piece:
            continue
        if piece.isdigit():
            link = QTextCharFormat(plain)
            link.setAnchor(True)
            link.setAnchorHref(f"cite:{int(piece)}")
            link.setProperty(PROP_CITATION, int(piece))
            link.setFontWeight(QFont.Weight.DemiBold)
            cursor.insertText(piece, link)
        else:
            cursor.insertText(piece, plain)


def _insert_author_year(
    cursor: QTextCursor, plain: QTextCharFormat, marker: str, citer: Citer
) -> None:
    """``[1, 3]`` as ``(Cohan et al., 2020, p. 3; Lo et al., 2020, p. 1)``: each name a link
    to (the first of) its passages; a passage cited twice at one place is named once."""
    named: dict[str, int] = {}
    for piece in re.findall(r"\d+", marker):
        n = int(piece)
        label = citer.label(citer.passages[n - 1]) if 1 <= n <= len(citer.passages) else f"[{n}]"
        named.setdefault(label, n)
    cursor.insertText("(", plain)
    for i, (label, n) in enumerate(named.items()):
        if i:
            cursor.insertText("; ", plain)
        link = QTextCharFormat(plain)
        link.setAnchor(True)
        link.setAnchorHref(f"cite:{n}")
        link.setProperty(PROP_CITATION, n)
        link.setFontWeight(QFont.Weight.DemiBold)
        cursor.insertText(label, link)
    cursor.insertText(")", plain)
