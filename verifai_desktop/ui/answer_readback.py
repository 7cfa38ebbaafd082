"""Reading an answer back from the answer view's document: sentences, their labels and where
they are, from the character-format properties :mod:`verifai_desktop.ui.answer_render` wrote.

A hover or a test reads the label of a sentence from the document itself rather than from the
answer that was handed in; the widget is :class:`~verifai_desktop.ui.answer_view.AnswerView`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QTextCharFormat, QTextDocument

from verifai_desktop.domain import SentenceLabel
from verifai_desktop.ui.answer_render import (
    PROP_CITATION,
    PROP_CONFLICT,
    PROP_LABEL,
    PROP_MARKER,
    PROP_RECITED,
    PROP_SENTENCE,
)


@dataclass(frozen=True, slots=True)
class RenderedSentence:
    """A sentence as read back from the rendered document.

    Attributes:
        index: sentence index stored in the format.
        text: concatenated text of the sentence's fragments (marker glyph excluded).
        label: label stored in the format.
        color_hex: foreground colour of the sentence's first fragment.
        underline: Qt underline style of its first fragment.
        marker: the glyph rendered after the sentence ("" if none).
        recited: the re-cited sign (:data:`~verifai_desktop.ui.answer_render.RECITED_SIGN`)
            follows the sentence's citations.
        conflict: the conflict marker (:data:`~verifai_desktop.presentation.CONFLICT_GLYPH`)
            follows the label glyph.
    """

    index: int
    text: str
    label: SentenceLabel
    color_hex: str
    underline: QTextCharFormat.UnderlineStyle
    marker: str
    recited: bool = False
    conflict: bool = False


def fragments(document: QTextDocument) -> list[tuple[int, str, QTextCharFormat]]:
    """``[(position, text, format)]`` of every text fragment of ``document``, in order."""
    out: list[tuple[int, str, QTextCharFormat]] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid():
                out.append((frag.position(), frag.text(), frag.charFormat()))
            it += 1
        block = block.next()
    return out


def rendered_sentences(document: QTextDocument) -> list[RenderedSentence]:
    """Sentences as rendered, read back from the document's character formats, in order."""
    texts: dict[int, list[str]] = {}
    first: dict[int, QTextCharFormat] = {}
    markers: dict[int, str] = {}
    labels: dict[int, SentenceLabel] = {}
    recited: set[int] = set()
    conflict: set[int] = set()
    for _pos, text, fmt in fragments(document):
        if not fmt.hasProperty(PROP_SENTENCE):
            continue
        i = int(fmt.property(PROP_SENTENCE))
        labels.setdefault(i, SentenceLabel(str(fmt.property(PROP_LABEL))))
        if fmt.boolProperty(PROP_RECITED):
            recited.add(i)
            continue
        if fmt.boolProperty(PROP_CONFLICT):
            conflict.add(i)
            continue
        if fmt.boolProperty(PROP_MARKER):
            markers[i] = markers.get(i, "") + text.strip()
            continue
        texts.setdefault(i, []).append(text)
        if i not in first and not fmt.hasProperty(PROP_CITATION) and fmt.isAnchor():
            first[i] = fmt
    out = []
    for i in sorted(texts):
        fmt = first.get(i, QTextCharFormat())
        out.append(
            RenderedSentence(
                index=i,
                text="".join(texts[i]),
                label=labels[i],
                color_hex=fmt.foreground().color().name(),
                underline=fmt.underlineStyle(),
                marker=markers.get(i, ""),
                recited=i in recited,
                conflict=i in conflict,
            )
        )
    return out


def sentence_at(document: QTextDocument, position: int) -> int:
    """Index of the sentence covering document ``position``, -1 when none."""
    for start, text, fmt in fragments(document):
        if start <= position < start + len(text):
            return int(fmt.property(PROP_SENTENCE)) if fmt.hasProperty(PROP_SENTENCE) else -1
    return -1


def sentence_span(document: QTextDocument, index: int) -> tuple[int, int]:
    """Half-open document positions covered by sentence ``index`` (marker included).

    Raises:
        IndexError: no sentence ``index`` is rendered in ``document``.
    """
    positions = [
        (start, start + len(text))
        for start, text, fmt in fragments(document)
        if fmt.hasProperty(PROP_SENTENCE) and int(fmt.property(PROP_SENTENCE)) == index
    ]
    if not positions:
        raise IndexError(f"no rendered sentence {index}")
    return positions[0][0], positions[-1][1]
