"""DOCX (python-docx) and PPTX (python-pptx) parsing on real files."""

from __future__ import annotations

from pathlib import Path

import docx
import pptx
from pptx.util import Emu

from tests.conftest import DOCS_CLEAN, DOCS_NASTY
from verifai_desktop.domain import DocFormat, Location, LocationKind
from verifai_desktop.ingest.parse import parse_file

TIPS_TITLE = "Ten Quick Tips for Deep Learning in Biology"


def test_docx_heading_paths() -> None:
    doc = parse_file(DOCS_CLEAN / "ten_quick_tips_deep_learning_biology.docx")
    assert doc.format is DocFormat.DOCX
    assert doc.title == TIPS_TITLE
    headings = [s.location.heading for s in doc.sections]
    assert headings[:3] == [TIPS_TITLE, f"{TIPS_TITLE} > Authors", f"{TIPS_TITLE} > Introduction"]
    assert f"{TIPS_TITLE} > Tip 4: Know your data and your question" in headings
    assert headings[-1] == f"{TIPS_TITLE} > References"
    assert all(s.location.kind is LocationKind.SECTION for s in doc.sections)
    intro = next(s for s in doc.sections if s.location.heading.endswith("> Introduction"))
    text = doc.text[intro.char_start : intro.char_end]
    assert text.startswith("Introduction\n\nMachine learning is a modern approach")


def test_docx_table_rows_in_document_order() -> None:
    doc = parse_file(DOCS_CLEAN / "ten_quick_tips_deep_learning_biology.docx")
    row = "Anthony Gitter | Filed a patent application with the Wisconsin Alumni Research"
    header = "Author | Competing interests"
    section = next(s for s in doc.sections if s.location.heading.endswith("Competing interests"))
    assert doc.text.index(header) < doc.text.index(row)
    assert section.char_start <= doc.text.index(row) < section.char_end
    assert doc.text.index("advance reproducible, interpretable") < doc.text.index(header)


def test_docx_tables_interleaved_with_paragraphs() -> None:
    doc = parse_file(DOCS_NASTY / "docx_paras_and_tables_python_docx.docx")
    assert doc.text == (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n"
        "Text before Table Between Text after\n\n"  # a table nested in a table cell
        "Donec semper facilisis metus finibus malesuada."
    )
    tables = parse_file(DOCS_NASTY / "docx_with_tables.docx").text
    assert tables.index("Name | Game | Fame | Blame") < tables.index("Sinple | Table")
    assert "Ryan Braun | Baseball | Moderate | Steroids" in tables


def test_pptx_slides_tables_and_notes() -> None:
    doc = parse_file(DOCS_NASTY / "pptx_with_speaker_notes_and_table.pptx")
    assert doc.format is DocFormat.PPTX
    assert [s.location.number for s in doc.sections] == [1, 2, 3]
    slides = [doc.text[s.char_start : s.char_end] for s in doc.sections]
    assert slides == [
        "The moon\n\nNotes: chicken and dumplings",
        "Right | Left | Center | Default\n12 | 12 | 12 | 12\n123 | 123 | 123 | 123\n1 | 1 | 1 | 1"
        "\n\nDemonstration of simple table syntax, with alignment\n\nNotes: foo bar",
        "some stuff\nsome more stuff\n\nSome other stuff\n\n"
        "Notes: Some notes inside a column\n\nSome notes outside the column",
    ]


def test_pptx_slide_titles() -> None:
    doc = parse_file(DOCS_CLEAN / "pandoc_reader_basic.pptx")
    assert [s.location for s in doc.sections] == [
        Location(LocationKind.SLIDE, 1, "LLMs"),
        Location(LocationKind.SLIDE, 2, "Everworker venn diagram"),
        Location(LocationKind.SLIDE, 3, "Table"),
        Location(LocationKind.SLIDE, 4, "Smart Art"),
    ]
    table = doc.text[doc.sections[2].char_start : doc.sections[2].char_end]
    assert table == "Table\n\nCol1 | Col2 | Col3\nName | Anton | Antich\nAge | 23 | years"


def test_pptx_notes_only_slide_and_missing_rels() -> None:
    notes = parse_file(DOCS_NASTY / "pptx_notes_python_pptx.pptx")
    assert notes.text == "Notes: Notes"
    assert notes.sections[0].location == Location(LocationKind.SLIDE, 1, "")
    rels = parse_file(DOCS_NASTY / "pptx_missing_rels_item.pptx")
    assert rels.text == "Presentation Title Text\n\nSubtitle Text"
    assert rels.sections[0].location.heading == "Presentation Title Text"


def test_pptx_without_slides_is_empty() -> None:
    doc = parse_file(DOCS_NASTY / "pptx_no_slides.pptx")
    assert (doc.text, doc.sections) == ("", ())


def test_docx_title_and_heading_levels(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Report", 0)  # the Title style
    document.add_paragraph("Preface text.")
    document.add_heading("Methods", 1)
    document.add_heading("Statistics", 2)
    document.add_paragraph("We used t-tests.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("k", "v"), ("alpha", "1")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("After the table.")
    document.add_heading("Results", 1)
    document.add_paragraph("It worked.")
    path = tmp_path / "report.docx"
    document.save(str(path))
    doc = parse_file(path)
    assert doc.title == "Report"
    assert [(s.location.heading, doc.text[s.char_start : s.char_end]) for s in doc.sections] == [
        ("Report", "Report\n\nPreface text."),
        ("Report > Methods", "Methods"),
        (
            "Report > Methods > Statistics",
            "Statistics\n\nWe used t-tests.\n\nk | v\nalpha | 1\n\nAfter the table.",
        ),
        ("Report > Results", "Results\n\nIt worked."),
    ]


def test_pptx_group_shapes_and_notes(tmp_path: Path) -> None:
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])  # "Title Only"
    slide.shapes.title.text = "Grouped"
    group = slide.shapes.add_group_shape()
    box = group.shapes.add_textbox(Emu(0), Emu(0), Emu(914400), Emu(914400))
    box.text_frame.text = "inside a group"
    slide.notes_slide.notes_text_frame.text = "say this aloud"
    prs.slides.add_slide(prs.slide_layouts[6])  # blank: no text, no section
    third = prs.slides.add_slide(prs.slide_layouts[5])
    third.shapes.title.text = "Third"
    path = tmp_path / "deck.pptx"
    prs.save(str(path))
    doc = parse_file(path)
    assert [(s.location, doc.text[s.char_start : s.char_end]) for s in doc.sections] == [
        (
            Location(LocationKind.SLIDE, 1, "Grouped"),
            "Grouped\n\ninside a group\n\nNotes: say this aloud",
        ),
        (Location(LocationKind.SLIDE, 3, "Third"), "Third"),
    ]
