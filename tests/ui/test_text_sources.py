"""A TXT or Markdown source opens whole, scrollable, at the passage with its evidence highlighted,
and the Sources rows give its line (issue 42, item 10). Real files of docs/clean, parsed as an
ingest parses them: the pandoc manual (8,000 lines of text) and a Markdown file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import ChunkId, DocId, Passage
from verifai_desktop.ingest.parse import parse_file
from verifai_desktop.ui.document_view import DocumentView
from verifai_desktop.ui.sources_panel import SourcesPanel

MANUAL = DOCS_CLEAN / "pandoc_MANUAL.txt"
MARKDOWN = DOCS_CLEAN / "deep_rules_03_when_to_use_dl.md"


def _passage(path: Path, at: float) -> Passage:
    """A passage of ``path``'s parsed text: the paragraph ``at`` of the way through it."""
    document = parse_file(path)
    paragraphs = [p for p in document.text.split("\n") if len(p) > 120]
    text = paragraphs[int(len(paragraphs) * at)]
    start = document.text.index(text)
    first_stop = text.find(". ") + 1 or len(text)
    section = next(s for s in document.sections if s.char_start <= start < s.char_end)
    return Passage(
        ChunkId(1),
        DocId(1),
        path,
        document.title,
        text,
        start,
        start + len(text),
        section.location,
        ((0, first_stop),),
    )


@pytest.mark.parametrize(("path", "at"), [(MANUAL, 0.8), (MARKDOWN, 0.5)])
def test_a_text_source_opens_whole_at_its_passage(
    qtbot: QtBot, shared_data: Path, path: Path, at: float
) -> None:
    passage = _passage(path, at)
    view = DocumentView()
    qtbot.addWidget(view)
    view.resize(600, 500)
    view.show()
    qtbot.waitExposed(view)
    evidence = (0, passage.sentence_spans[0][1])
    view.show_passage(passage, evidence)
    written = path.read_text(encoding="utf-8")
    whole = written.replace("\r\n", "\n").replace("\u00a0", " ")
    assert view.text.toPlainText() == whole  # the whole file (no-break spaces read as spaces)
    at_span = view.source_span
    assert at_span is not None and view.highlight_count == 1
    (highlight,) = view.text.extraSelections()
    shown = highlight.cursor.selectedText().replace("\u2029", "\n")
    assert shown == written[at_span.start : at_span.end]

    # The highlight is the evidence sentence as written (letters and digits the same).
    def letters(t: str) -> str:
        return "".join(c.lower() for c in t if c.isalnum())

    assert letters(shown) == letters(passage.text[evidence[0] : evidence[1]])
    line = written.count("\n", 0, at_span.start) + 1
    assert at_span.line == line and f"line {line}" in view.header.text()
    if path == MANUAL:  # far down a long file: scrolled to it, and the rest can be scrolled to
        qtbot.waitUntil(lambda: view.text.verticalScrollBar().value() > 0, timeout=2000)
        top = view.text.cursorRect(highlight.cursor).top()
        assert 0 <= top < view.text.viewport().height()
        assert view.text.verticalScrollBar().maximum() > view.text.verticalScrollBar().value()

    panel = SourcesPanel()
    qtbot.addWidget(panel)
    panel.set_passages((passage,))
    assert f"line {line}" in panel.row_texts()[0][1]
