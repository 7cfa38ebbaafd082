"""The real flow through the window: ingest documents from docs/clean, ask with the real
bundled models (llama.cpp generator, ONNX verifier, MiniLM embedder), then check that the
rendered sentences carry the labels of the returned Answer and that the hover card names the
right source and evidence sentence. No fakes."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.conftest import DOCS_CLEAN
from verifai_desktop.domain import Answer, DocStatus, Passage
from verifai_desktop.presentation import verdict_summary
from verifai_desktop.settings import RetrievalSettings, Settings, save_settings
from verifai_desktop.ui.evidence_popup import EVIDENCE_CLOSE, EVIDENCE_OPEN
from verifai_desktop.ui.main_window import MainWindow

pytestmark = pytest.mark.slow

FILES = (
    "deep_rules_09_overfitting.md",
    "deep_rules_03_when_to_use_dl.md",
    "bmc_trauma_2010_dvt_prophylaxis_review.pdf",
)
QUESTION = "What is overfitting and how can you detect it?"
TIMEOUT_MS = 600_000
K = 3  # passages in the prompt: a short prompt keeps the 2-core CI run to a few minutes


def test_ingest_then_ask_renders_the_verified_answer(
    qtbot: QtBot, tmp_path: Path, shared_data: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in FILES:
        shutil.copy(DOCS_CLEAN / name, folder / name)
    save_settings(Settings(retrieval=RetrievalSettings(k=K)))
    window = MainWindow(offer_sample=False)
    qtbot.addWidget(window)
    window.show()
    library = window.library
    library.create_collection("papers")
    qtbot.waitUntil(lambda: library.current == "papers" and not library.busy, timeout=TIMEOUT_MS)
    library.ingest([folder])
    qtbot.waitUntil(
        lambda: not library.busy and len(library.rows) == len(FILES), timeout=TIMEOUT_MS
    )
    assert {r.status for r in library.rows} == {DocStatus.INDEXED}

    statuses: list[str] = []
    window.statusBar().messageChanged.connect(statuses.append)
    task = window.ask(QUESTION)
    assert task is not None
    streamed: list[str] = []
    task.text_streamed.connect(streamed.append)
    # What the window showed when the first piece of the answer arrived.
    at_first_piece: list[tuple[tuple[Passage, ...], str]] = []

    def first_piece(_piece: str) -> None:
        if not at_first_piece:
            at_first_piece.append((window.sources.passages, window.model_status.text()))

    task.text_streamed.connect(first_piece)
    failures: list[object] = []
    task.failed.connect(failures.append)
    with qtbot.waitSignal(task.finished, timeout=TIMEOUT_MS):
        pass
    assert failures == []
    answer = window.answer
    assert isinstance(answer, Answer)
    assert not answer.abstained, (
        "the overfitting tip is in the collection; the app must not abstain"
    )
    assert "".join(streamed).strip() == (answer.generated_text or answer.text)
    assert answer.sentences
    assert len(answer.passages) == K

    # The passages given were listed before the first word, the generator loaded by then,
    # and the status bar named each stage, checking sentence by sentence.
    assert at_first_piece == [(answer.passages, "Models: loaded")]
    n = len(answer.sentences)
    stages = [
        f"Found {K} passages. Loading the generator (first answer)…",
        "Reading the passages…",
        f"Checking sentence 1 of {n}…",
        f"Checking sentence {n} of {n}…",
    ]
    assert all(stage in statuses for stage in stages), statuses
    assert [statuses.index(stage) for stage in stages] == sorted(
        statuses.index(stage) for stage in stages
    )
    first_written = next(i for i, m in enumerate(statuses) if m.startswith("Writing the answer"))
    assert statuses.index(stages[1]) < first_written < statuses.index(stages[2])

    # Labels read back from the rendered document are those of the returned Answer.
    view = window.answer_view
    assert view.sentence_labels() == [(s.text, s.label) for s in answer.sentences]

    # The hover card of every checked sentence names each cited source and its evidence.
    checked = [i for i, s in enumerate(answer.sentences) if s.verdicts]
    assert checked, "the generator must cite at least one passage under the citation grammar"
    for i in checked:
        card = view.hover_html(i)
        text = view.hover_text(i)
        for v in answer.sentences[i].verdicts:
            passage = answer.passages[v.passage_number - 1]
            assert f"[{v.passage_number}] {passage.source_label()}" in text
            assert verdict_summary(v) in text
            if v.evidence:
                assert f"{EVIDENCE_OPEN}{html.escape(v.evidence)}{EVIDENCE_CLOSE}" in card

    # Hovering the first checked sentence with the mouse shows exactly that card.
    i = checked[0]
    with qtbot.waitSignal(view.sentence_hovered, timeout=5000) as blocker:
        qtbot.mouseMove(view.viewport(), view.sentence_point(i))
    assert blocker.args == [i]
    assert view.popup.label.text() == view.hover_html(i)

    # Clicking its first citation opens the cited document at the passage.
    number = answer.sentences[i].citations[0]
    window.on_citation_activated(number)
    passage = answer.passages[number - 1]
    assert window.tabs.currentWidget() is window.document_view
    assert window.document_view.passage == passage
    if passage.path.suffix == ".pdf":
        assert window.document_view.showing_pdf_page
        assert abs(window.document_view.page_index - ((passage.location.number or 1) - 1)) <= 1
    shown = window.sources.row_texts()[number - 1][1]
    where = passage.location.label()
    # a text file's row also gives the passage's line (issue 42): "notes.md, line 3, Tip 7"
    assert passage.path.name in shown and shown.endswith(where or passage.path.name)
