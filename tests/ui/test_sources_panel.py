"""Sources panel rows: one line of title, one line of file and page, whatever the title's
length or the panel's width."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtGui import QFont, QFontMetrics
from pytestqt.qtbot import QtBot

from verifai_desktop.domain import Answer, Location, LocationKind
from verifai_desktop.ui.sources_panel import (
    CELL_PADDING_PX,
    EVIDENCE_COLUMN,
    ROW_PADDING_PX,
    SOURCE_COLUMN,
    SourcesPanel,
)

LONG_TITLE = (
    "Complications related to deep venous thrombosis prophylaxis in trauma: a systematic "
    "review of the literature, with a meta-analysis of bleeding, heparin-induced "
    "thrombocytopenia and vena cava filter events in 10,000 patients"
)


def _panel(qtbot: QtBot, width_px: int) -> SourcesPanel:
    panel = SourcesPanel()
    qtbot.addWidget(panel)
    panel.resize(width_px, 400)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_long_title_row_shows_file_and_page(qtbot: QtBot, hand_answer: Answer) -> None:
    md, pdf = hand_answer.passages
    long_pdf = dataclasses.replace(
        pdf,
        path=Path("/docs/dvt_review.pdf"),
        title=LONG_TITLE,
        location=Location(LocationKind.PAGE, 3),
    )
    panel = _panel(qtbot, 560)
    panel.set_passages((md, long_pdf))
    table = panel.table
    column_px = table.columnWidth(SOURCE_COLUMN)

    title, label = panel.source_cell_lines(1)
    # The file and page are shown whole; the title is cut to one line that fits the column.
    assert label == "dvt_review.pdf, p. 3"
    assert title.endswith("…") and LONG_TITLE.startswith(title[:-1])
    bold = QFont(table.font())
    bold.setBold(True)
    assert QFontMetrics(bold).horizontalAdvance(title) <= column_px - 2 * CELL_PADDING_PX
    # A short title is not cut.
    assert panel.source_cell_lines(0) == ("Deep rules: overfitting", md.source_label())
    # Every row is two lines high, and the full title is in the tooltip.
    line_px = table.fontMetrics().lineSpacing()
    assert [table.rowHeight(r) for r in range(2)] == [2 * line_px + ROW_PADDING_PX] * 2
    item = table.item(1, SOURCE_COLUMN)
    assert item is not None
    assert item.toolTip().startswith(
        f"{LONG_TITLE}\ndvt_review.pdf, p. 3\n/docs/dvt_review.pdf\n\n"
    )
    assert not table.wordWrap()


def test_narrow_panel_keeps_the_page_number(qtbot: QtBot, hand_answer: Answer) -> None:
    long_name = dataclasses.replace(
        hand_answer.passages[1],
        path=Path("/docs/bmc_trauma_2010_deep_venous_thrombosis_prophylaxis_review.pdf"),
        title=LONG_TITLE,
    )
    panel = _panel(qtbot, 330)
    panel.set_passages((long_name,))
    title, label = panel.source_cell_lines(0)
    width_px = panel.table.columnWidth(SOURCE_COLUMN) - 2 * CELL_PADDING_PX
    # Too narrow for the whole file name: cut in its middle, its start and the page kept.
    assert "…" in label and label.startswith("bmc_") and label.endswith(", p. 3")
    assert panel.table.fontMetrics().horizontalAdvance(label) <= width_px
    assert title.endswith("…")


def test_a_passage_read_by_ocr_says_so_in_its_row_and_hover_card(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    """Issue 28: recognised text is marked as such beside its location and in the card."""
    from verifai_desktop.recognition import Recognition, WordBox
    from verifai_desktop.ui.evidence_popup import build_evidence_html

    md, pdf = hand_answer.passages
    scanned = dataclasses.replace(
        pdf,
        path=Path("/docs/scan.pdf"),
        location=Location(LocationKind.PAGE, 2),
        ocr=Recognition("tesseract", 0.91, (WordBox(0, 3, 1.0, 2.0, 3.0, 4.0, 0.91),)),
    )
    panel = _panel(qtbot, 560)
    panel.set_passages((md, scanned))
    assert panel.source_cell_lines(1)[1] == "scan.pdf, p. 2 · recognised text (OCR)"
    assert panel.source_cell_lines(0)[1] == md.source_label()  # a text layer: no mark
    tip = panel.table.item(1, SOURCE_COLUMN).toolTip()
    assert "recognised text (OCR, tesseract, mean confidence 91%)" in tip
    answer = dataclasses.replace(hand_answer, passages=(md, scanned))
    cited = next(i for i, s in enumerate(answer.sentences) if 2 in s.citations)
    card = build_evidence_html(answer, cited)
    assert "recognised text (OCR, tesseract, mean confidence 91%)" in card


def test_the_evidence_column_shows_only_when_reranking_read_the_passages(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    panel = _panel(qtbot, 600)
    panel.set_passages(hand_answer.passages)
    assert panel.table.isColumnHidden(EVIDENCE_COLUMN)
    assert all(len(row) == EVIDENCE_COLUMN for row in panel.row_texts())
    reranked = tuple(
        dataclasses.replace(p, evidence=0.5 + 0.1 * n) for n, p in enumerate(hand_answer.passages)
    )
    panel.set_passages(reranked)
    assert not panel.table.isColumnHidden(EVIDENCE_COLUMN)
    assert [row[EVIDENCE_COLUMN] for row in panel.row_texts()] == [
        f"{p.evidence:.2f}" for p in reranked
    ]
    assert "reranked it" in panel.table.horizontalHeaderItem(EVIDENCE_COLUMN).toolTip()
    panel.set_passages(hand_answer.passages)  # the next answer, reranking off again
    assert panel.table.isColumnHidden(EVIDENCE_COLUMN)
