"""A scientist's library in the app (issue 43): Add files takes a .bib file (its entries' files
ingested with their metadata on the real core, the entry without a file listed as refused), the
documents filter takes author:/year:/title: terms, the answer view and the sources panel cite
author-year with the references cited (numbers when the setting says so), a claim check names
its sources author-year too, and Edit > Copy as BibTeX copies the cited entries as written in
the .bib file."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from tests.unit.test_citation_settings import _check
from tests.unit.test_citations import LIBRARY, _passage
from verifai_desktop.domain import Answer, AnswerSentence, NliLabel, SentenceLabel, Verdict
from verifai_desktop.ingest.bibtex import read_bibtex
from verifai_desktop.settings import CitationSettings, Settings
from verifai_desktop.store.writer import IngestReport, Outcome
from verifai_desktop.ui import library_panel
from verifai_desktop.ui.answer_render import REFERENCES_TITLE
from verifai_desktop.ui.answer_view import AnswerView
from verifai_desktop.ui.documents_filter import FilterTerm, parse_filter
from verifai_desktop.ui.documents_table import NAME_COLUMN
from verifai_desktop.ui.library_panel import LibraryPanel
from verifai_desktop.ui.main_window import MainWindow
from verifai_desktop.ui.sources_panel import SourcesPanel
from verifai_desktop.ui.tasks import TaskRunner

INGEST_TIMEOUT_MS = 240_000
BIB = """@article{lee2024md,
  author = {Lee, Ada and Smith, Bo},
  title = {Deep Rules Introduction},
  journal = {Notes}, year = {2024},
  file = {Full Text:intro.md:text/markdown},
}
@misc{wang2019claims,
  author = {Wang, Lucy Lu},
  title = {COVID claims},
  year = {2019},
  file = {claims.txt},
}
@book{nofile2001,
  author = {Nobody, Ann}, title = {Missing}, year = {2001},
}
"""


def test_filter_terms_are_parsed() -> None:
    assert parse_filter('author:Sundström year:2018-2020 title:"deep rules" covid') == (
        FilterTerm("author", "sundstrom"),
        FilterTerm("year", "2018-2020"),
        FilterTerm("title", "deep rules"),
        FilterTerm("", "covid"),
    )
    assert parse_filter("http://x") == (FilterTerm("", "http://x"),)


@pytest.mark.slow
def test_add_files_takes_a_bib_and_the_filter_reads_its_metadata(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(DOCS_CLEAN / "deep_rules_02_intro.md", tmp_path / "intro.md")
    shutil.copy(DOCS_CLEAN / "scifact_covid_claims.txt", tmp_path / "claims.txt")
    bib = tmp_path / "library.bib"
    bib.write_text(BIB, encoding="utf-8")
    panel = LibraryPanel(TaskRunner(), Settings, offer_sample=False)
    qtbot.addWidget(panel)
    panel.create_collection("papers")
    qtbot.waitUntil(lambda: panel.current == "papers" and not panel.runner.running)

    monkeypatch.setattr(library_panel, "pick_files", lambda parent: [bib])
    reports: list[IngestReport] = []
    panel.ingest_finished.connect(reports.append)
    panel.add_files_button.click()
    qtbot.waitUntil(lambda: bool(reports) and not panel.runner.running, timeout=INGEST_TIMEOUT_MS)
    assert [(Path(o.source).name, o.status) for o in reports[0].outcomes] == [
        ("intro.md", Outcome.INDEXED),
        ("claims.txt", Outcome.INDEXED),
        ("library.bib#nofile2001", Outcome.FAILED),
    ]
    qtbot.waitUntil(lambda: len(panel.table_rows()) == 3)
    rows = {r[0]: (r[1], r[3]) for r in panel.table_rows()}
    assert rows["library.bib#nofile2001"] == (
        "failed",
        "entry 'nofile2001' of library.bib: no file attached",
    )
    assert "Added to “papers”: 1 failed, 2 indexed" in panel.summary_label.text()
    table = panel.table
    name_tip = table.item([r.name for r in table.rows].index("intro.md"), NAME_COLUMN).toolTip()
    assert name_tip.endswith("Lee, Smith (2024). Deep Rules Introduction")

    table.filter_edit.setText("author:lee")
    assert table.shown_names() == ["intro.md"]
    table.filter_edit.setText("year:2001-2019")
    assert sorted(table.shown_names()) == ["claims.txt", "library.bib#nofile2001"]
    table.filter_edit.setText('title:"covid claims"')
    assert table.shown_names() == ["claims.txt"]
    table.filter_edit.setText("claims")
    assert table.shown_names() == ["claims.txt"]
    table.filter_edit.clear()
    assert len(table.shown_names()) == 3
    # The .bib is followed as a library (folder watching lists it with the folders).
    assert str(bib.resolve()) in "\n".join(str(r.root.path) for r in panel.roots)


def _answer() -> Answer:
    passages = (
        _passage("/d/acl2020_specter.pdf", 3, "cohan2020specter"),
        _passage("/d/notes.pdf", 2, None),
        _passage("/d/acl2020_s2orc.pdf", 1, "lo2020s2orc"),
    )
    text = "SPECTER embeds papers [1, 2]. S2ORC is a corpus [3]."
    first, second = text.split(" S2ORC")
    sentences = (
        AnswerSentence(first, 0, len(first), (1, 2), (), SentenceLabel.SUPPORTED),
        AnswerSentence(
            "S2ORC" + second, len(first) + 1, len(text), (3,), (), SentenceLabel.SUPPORTED
        ),
    )
    return Answer(question="q", text=text, sentences=sentences, passages=passages)


def test_answer_view_and_sources_cite_author_year(qtbot: QtBot) -> None:
    answer = _answer()
    view = AnswerView()
    qtbot.addWidget(view)
    view.show_answer(answer)
    text = view.toPlainText()
    assert "SPECTER embeds papers (Cohan et al., 2020, p. 3; notes.pdf, p. 2)" in text
    assert "S2ORC is a corpus (Lo et al., 2020, p. 1)" in text
    refs = text.split(REFERENCES_TITLE + "\n", 1)[1].splitlines()
    assert [r.split(",")[0] for r in refs] == ["Cohan", "Lo"]  # APA: by author
    found = view.document().find("Lo et al., 2020, p. 1")
    assert found.charFormat().anchorHref() == "cite:3"
    assert [s.label for s in view.rendered_sentences()] == [SentenceLabel.SUPPORTED] * 2

    view.citations = CitationSettings(style="numeric")
    view.show_answer(answer)
    text = view.toPlainText()
    assert "SPECTER embeds papers [1, 2]" in text and REFERENCES_TITLE not in text

    panel = SourcesPanel()
    qtbot.addWidget(panel)
    panel.set_answer(answer)
    cells = [panel.table.item(r, 1).text() for r in range(3)]
    assert cells[0] == "t\nCohan et al., 2020, p. 3 · acl2020_specter.pdf, p. 3"
    assert cells[1] == "t\nnotes.pdf, p. 2"
    panel.citations = CitationSettings(style="numeric")
    panel.set_answer(answer)
    assert panel.table.item(0, 1).text() == "t\nacl2020_specter.pdf, p. 3"


def test_the_hover_card_names_sources_author_year(qtbot: QtBot) -> None:
    """The card of a sentence names each cited passage as the answer does: "[1] Cohan et al.,
    2020, p. 3", a file without an entry by its name, and the file names in the numeric
    style."""
    answer = _answer()
    verdict = Verdict(1, NliLabel.SUPPORT, 0.9, 0.05, 0.05, "Some text.", (0, 10))
    other = Verdict(2, NliLabel.SUPPORT, 0.8, 0.1, 0.1, "Some text.", (0, 10))
    first = dataclasses.replace(answer.sentences[0], verdicts=(verdict, other))
    answer = dataclasses.replace(answer, sentences=(first, answer.sentences[1]))
    view = AnswerView()
    qtbot.addWidget(view)
    view.show_answer(answer)
    card = view.hover_text(0)
    assert "[1] Cohan et al., 2020, p. 3" in card and "[2] notes.pdf, p. 2" in card
    assert "acl2020_specter.pdf" not in card
    view.citations = CitationSettings(style="numeric")
    view.show_answer(answer)
    assert "[1] acl2020_specter.pdf, p. 3" in view.hover_text(0)


def test_claim_check_names_sources_author_year(qtbot: QtBot) -> None:
    window = MainWindow(settings=Settings(), offer_sample=False)
    qtbot.addWidget(window)
    result = _check()  # SPECTER p. 3 (entry cohan2020specter) and notes.pdf p. 2 (no entry)
    window.on_check_ready(result)
    view = window.answer_view
    lines = view.toPlainText().splitlines()
    assert lines.count("Cohan et al., 2020, p. 3 · probability 0.90") == 1  # its document
    assert lines.count("notes.pdf, p. 2 · probability 0.90") == 1
    assert lines.count("Cohan et al., 2020, p. 3 — t") == 1  # its supporting passage
    assert lines.count("notes.pdf, p. 2 — t") == 1
    assert "acl2020_specter.pdf" not in view.toPlainText()
    # Each name is still the link that opens its passage.
    found = view.document().find("Cohan et al., 2020, p. 3")
    assert found.charFormat().anchorHref() == "evidence:d:0"
    found = view.document().find("Cohan et al., 2020, p. 3", found)
    assert found.charFormat().anchorHref() == "evidence:s:0"
    window.on_copy_clicked()  # Copy gives the check as Markdown, named the same way
    copied = QGuiApplication.clipboard().text()
    assert "1. Cohan et al., 2020, p. 3 — t" in copied and "2. notes.pdf, p. 2 — t" in copied

    window.apply_settings(
        dataclasses.replace(window.settings, citations=CitationSettings(style="numeric"))
    )
    window.on_check_ready(result)
    text = view.toPlainText()
    assert "acl2020_specter.pdf, p. 3 — t" in text and "Cohan et al." not in text
    QGuiApplication.clipboard().clear()  # the offscreen platform crashes on exit otherwise


def test_copy_as_bibtex_copies_the_cited_entries_as_written(qtbot: QtBot) -> None:
    window = MainWindow(settings=Settings(), offer_sample=False)
    qtbot.addWidget(window)
    answer = _answer()
    window.answer = answer
    window._show_answer(answer)
    window._set_answer_actions(True)
    assert window.copy_bibtex_action.isEnabled()
    window.copy_bibtex_action.trigger()
    copied = QGuiApplication.clipboard().text()
    entries = {e.reference.key: e.reference.bibtex.strip() for e in read_bibtex(LIBRARY)}
    assert copied == entries["cohan2020specter"] + "\n\n" + entries["lo2020s2orc"] + "\n"
    assert entries["cohan2020specter"] in LIBRARY.read_text(encoding="utf-8")
    window.on_copy_clicked()
    assert "## References" in QGuiApplication.clipboard().text()
    window.apply_settings(
        dataclasses.replace(window.settings, citations=CitationSettings(style="numeric"))
    )
    window.on_copy_clicked()
    assert "## References" not in QGuiApplication.clipboard().text()
    QGuiApplication.clipboard().clear()  # the offscreen platform crashes on exit otherwise


def test_the_settings_dialog_chooses_the_citation_style(qtbot: QtBot) -> None:
    from verifai_desktop.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    assert dialog.citation_style.currentText() == "author-year"
    dialog.citation_style.setCurrentText("numeric")
    assert dialog.edited_settings().citations == CitationSettings(style="numeric")
