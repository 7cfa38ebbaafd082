"""Small reading aids of issue 29, on real widgets: no stray "Copy Link Location" in a
sentence's menu, the re-citation sign in the legend, a Help menu (shortcuts, where the data is,
the bundled models' licences, About), file names cut at their end with the full path on hover,
and quoted evidence exported to Markdown without the PDF's line breaks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from tests.ui.test_answer_view import _view as answer_view
from verifai_desktop import __version__
from verifai_desktop.audit import key_path
from verifai_desktop.domain import Answer, DocStatus, NliLabel, Verdict
from verifai_desktop.presentation import joined_lines
from verifai_desktop.settings import Settings, collections_dir, models_dir, settings_path
from verifai_desktop.ui.answer_render import CITATION_COLOR
from verifai_desktop.ui.answer_view import LINK_COPY_ACTION
from verifai_desktop.ui.documents_table import NAME_COLUMN, DocumentRow, DocumentsTable
from verifai_desktop.ui.help_menu import HelpDialog
from verifai_desktop.ui.legend import RECITED_DESCRIPTION, WORD_JOINER, LegendView
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.sources_panel import SOURCE_COLUMN, SourcesPanel

LONG_NAME = "bmc_trauma_2010_deep_venous_thrombosis_prophylaxis_review_final_version.pdf"


def _window(qtbot: QtBot) -> MainWindow:
    window = MainWindow(Settings(), offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_a_sentences_menu_has_no_copy_link_location(qtbot: QtBot, hand_answer: Answer) -> None:
    view = answer_view(qtbot, hand_answer)
    # Over a sentence (a link inside the app) and over its citation marker.
    for point in (view.sentence_point(1), view.sentence_point(0)):
        menu = view.context_menu(point)
        names = [a.objectName() for a in menu.actions()]
        assert LINK_COPY_ACTION not in names
        assert not any("Link" in a.text() for a in menu.actions())
        assert "edit-copy" in names and "select-all" in names  # the text actions stay
        menu.deleteLater()


def test_the_legend_names_the_re_citation_sign(qtbot: QtBot) -> None:
    legend = LegendView()
    qtbot.addWidget(legend)
    text = legend.toPlainText().replace(WORD_JOINER, "")
    assert text.endswith("⇄ Conflicting evidence   ↻ Re-cited   What do the colours mean?")
    fmt = legend.document().find("↻").charFormat()
    assert fmt.foreground().color().name() == CITATION_COLOR
    assert fmt.toolTip() == RECITED_DESCRIPTION
    assert f"<b>↻ Re-cited</b>: {RECITED_DESCRIPTION}" in legend.toolTip()


def _page(qtbot: QtBot, window: MainWindow, title: str) -> str:
    menu = window.help_menu.menu
    action = next(a for a in menu.actions() if a.text() == title)
    action.trigger()
    dialog = window.help_menu.dialog
    assert isinstance(dialog, HelpDialog) and dialog.isVisible()
    assert dialog.windowTitle() == title
    text = dialog.text.toPlainText()
    dialog.close()
    return text


def test_the_help_menu_says_where_data_is_and_whose_models_are_bundled(qtbot: QtBot) -> None:
    window = _window(qtbot)
    assert [a.text() for a in window.menuBar().actions()] == ["&File", "&Edit", "&View", "&Help"]
    assert [a.text() for a in window.help_menu.menu.actions()] == [
        "What the colours mean",
        "Keyboard shortcuts",
        "Where your data is kept",
        "Licences of the bundled models",
        "About VerifAI Desktop",
    ]
    keys = _page(qtbot, window, "Keyboard shortcuts")
    assert "Ctrl+Shift+C\nCopy answer" in keys and "Ctrl+H\nPast questions" in keys
    assert "F1\nKeyboard shortcuts" in keys
    assert "Tab, Shift+Tab\nStep through the answer's sentences" in keys

    data = _page(qtbot, window, "Where your data is kept")
    for path in (settings_path(), collections_dir(), models_dir(), key_path()):
        assert str(path) in data  # this install's real folders ($VERIFAI_HOME in tests)
    assert f"Log\n{collections_dir().parent / 'verifai.log'}" in data

    licences = _page(qtbot, window, "Licences of the bundled models")
    assert "verifai-minilm-nli — verifier\nLicence: Apache-2.0" in licences
    assert "Trained on rte_fever (19,141 pairs over the stages): CC BY-SA 3.0" in licences
    assert "all-MiniLM-L6-v2 — embedder\nLicence: Apache-2.0" in licences
    assert "qwen2.5-coder-0.5b-instruct-q4_k_m — generator\nLicence: Apache-2.0" in licences

    about = _page(qtbot, window, "About VerifAI Desktop")
    assert about.startswith(f"VerifAI Desktop {__version__}\n")
    assert "Licence: Apache-2.0" in about


def test_file_names_are_cut_at_their_end_with_the_full_path_on_hover(
    qtbot: QtBot, hand_answer: Answer
) -> None:
    passage = dataclasses.replace(hand_answer.passages[1], path=Path("/docs/papers") / LONG_NAME)
    panel = SourcesPanel()
    qtbot.addWidget(panel)
    panel.resize(330, 400)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_passages((passage,))
    _title, label = panel.source_cell_lines(0)
    name, where = label.split(", ")
    assert where == "p. 3" and name.endswith("…") and LONG_NAME.startswith(name[:-1])
    assert len(name) > 5  # the start is shown, not only the extension
    cell = panel.table.item(0, SOURCE_COLUMN)
    assert cell is not None and f"\n/docs/papers/{LONG_NAME}\n" in cell.toolTip()

    table = DocumentsTable()
    qtbot.addWidget(table)
    table.resize(260, 200)
    table.set_rows([DocumentRow(f"/docs/papers/{LONG_NAME}", DocStatus.INDEXED, "", 3)])
    index = table.model().index(0, NAME_COLUMN)
    option = QStyleOptionViewItem()
    table.initViewItemOption(option)
    delegate = table.itemDelegateForIndex(index)
    assert isinstance(delegate, QStyledItemDelegate)
    delegate.initStyleOption(option, index)
    assert option.textElideMode == Qt.TextElideMode.ElideRight  # painted cut at its end
    name_cell = table.item(0, NAME_COLUMN)
    assert name_cell is not None and name_cell.toolTip() == f"/docs/papers/{LONG_NAME}"


BROKEN = "Low molecular weight hep-\narin reduced\nDVT in state-of-the-\nart trials."


def test_markdown_export_joins_the_line_breaks_of_quoted_evidence(
    qtbot: QtBot, hand_answer: Answer, tmp_path: Path
) -> None:
    md_passage, pdf = hand_answer.passages
    pdf = dataclasses.replace(pdf, text=f"{BROKEN} Mechanical methods were less studied.")
    verdict = Verdict(2, NliLabel.SUPPORT, 0.61, 0.1, 0.29, BROKEN, (0, len(BROKEN)))
    sentences = list(hand_answer.sentences)
    sentences[1] = dataclasses.replace(sentences[1], verdicts=(verdict,))
    answer = dataclasses.replace(
        hand_answer, sentences=tuple(sentences), passages=(md_passage, pdf)
    )
    window = _window(qtbot)
    window.on_answer_ready(answer)
    md = window.export_answer(tmp_path / "answer.md").read_text(encoding="utf-8")
    assert (
        "   - [2] bmc_trauma.pdf, p. 3 — support 0.61 · contradict 0.10 · no evidence 0.29: "
        '"Low molecular weight heparin reduced DVT in state-of-the-art trials."\n' in md
    )
    assert "hep-" not in md and "reduced\nDVT" not in md


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("the evi-\ndence held", "the evidence held"),  # a word split at the line's end
        ("evi- \n  dence", "evidence"),
        ("state-of-the-\nart", "state-of-the-art"),  # a compound keeps its hyphens
        ("COVID-\n19 cases", "COVID-19 cases"),  # not between two lower-case letters
        ("Anti-\nInflammatory", "Anti-Inflammatory"),
        ("well-\nknown, as well-known", "well-known, as well-known"),  # spelt so elsewhere
        ("a line\nbreak  \n here\r\nand there", "a line break here and there"),
        ("ends with a hyphen-\n", "ends with a hyphen-"),
        ("one-\n\ntwo", "one- two"),  # a paragraph break is no word split
    ],
)
def test_joined_lines(text: str, joined: str) -> None:
    assert joined_lines(text) == joined


def test_the_legend_and_the_help_menu_open_the_colours_page(qtbot: QtBot) -> None:
    """Issue 42, item 9: what each colour means, how often it was right, what to do."""
    window = _window(qtbot)
    window.legend.anchorClicked.emit(QUrl("help:colours"))
    dialog = window.help_menu.dialog
    assert isinstance(dialog, HelpDialog) and dialog.isVisible()
    assert dialog.windowTitle() == "What the colours mean"
    text = dialog.text.toPlainText()
    assert "✓ Supported" in text and "When a colour is wrong" in text
    assert "70% were supported (20 shown green)" in text
    dialog.close()
    assert _page(qtbot, window, "What the colours mean") == text
