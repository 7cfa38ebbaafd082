"""The page view highlights recognised words at their boxes (issue 28): a real scan of a real
page read by Tesseract, the evidence span's word boxes drawn where the born-digital page
prints those words; a picture read in a DOCX has no page, and no boxes are drawn."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from pytestqt.qtbot import QtBot

from tests.conftest import needs_tesseract
from tests.unit.ingest.test_ocr import PAPER, scanned_top_of_paper
from tests.unit.ingest.test_ocr_images import docx_with_scan
from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.ingest.ocr import OcrOptions
from verifai_desktop.ingest.office import parse_docx
from verifai_desktop.ingest.pdf import parse_pdf
from verifai_desktop.ui.document_view import DocumentView
from verifai_desktop.ui.sources_panel import OCR_MARK, SourcesPanel


@needs_tesseract
def test_the_evidence_on_a_scanned_page_is_its_recognised_words(
    qtbot: QtBot, tmp_path: Path
) -> None:
    scan = scanned_top_of_paper(tmp_path / "scan.pdf")
    doc = parse_pdf(scan, ocr=OcrOptions("tesseract", dpi=200))
    (section,) = doc.sections
    assert section.ocr is not None
    text = doc.text
    start = text.index("thrombosis")
    span = (start, start + len("thrombosis"))
    passage = Passage(
        ChunkId(1),
        DocId(1),
        scan,
        "scan",
        text,
        0,
        len(text),
        Location(LocationKind.PAGE, 1),
        ((0, len(text)),),
        ocr=section.ocr,
    )
    view = DocumentView()
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    qtbot.waitExposed(view)
    view.show_passage(passage, span)
    assert view.showing_pdf_page and view.page_index == 0
    (box,) = view.highlight_rects
    truth = pymupdf.open(PAPER)[0].search_for("thrombosis")[0]
    assert max(abs(box.x0 - truth.x0), abs(box.x1 - truth.x1), abs(box.y0 - truth.y0)) < 3.0
    assert view.highlight_count == 1


@needs_tesseract
def test_a_picture_read_in_a_docx_is_marked_ocr_and_has_no_page_to_draw_boxes_on(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """A DOCX picture's recognised text has no page: the view shows the passage text with
    the evidence marked (no word boxes), the Sources panel says it was recognised."""
    report = docx_with_scan(tmp_path / "report.docx")
    doc = parse_docx(report, ocr=OcrOptions("tesseract"))
    (section,) = [s for s in doc.sections if s.ocr is not None]
    assert section.ocr is not None
    text = doc.text[section.char_start : section.char_end]
    passage = Passage(
        ChunkId(1),
        DocId(1),
        report,
        "report",
        text,
        section.char_start,
        section.char_end,
        section.location,
        ((0, len(text)),),
        ocr=section.ocr.within(section.char_start, section.char_end),
    )
    start = text.index("thrombosis")
    view = DocumentView()
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    qtbot.waitExposed(view)
    view.show_passage(passage, (start, start + len("thrombosis")))
    assert not view.showing_pdf_page and view.highlight_rects == ()
    assert view.evidence == "thrombosis" and view.highlight_count == 1
    panel = SourcesPanel()
    qtbot.addWidget(panel)
    panel.set_passages((passage,))
    assert panel.source_cell_lines(0)[1] == f"report.docx, Background{OCR_MARK}"
