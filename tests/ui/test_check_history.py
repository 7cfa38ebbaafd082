"""Claim checks are history entries like answers (issue 29): a check made in the window is kept
in the collection's real history, listed in the History panel marked as a claim check,
reopened exactly (colours, evidence, sources) in Check mode, and copied, exported and audited
as an answer is. The check itself comes from a stand-in session (control flow only)."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from tests.ui.test_conflicts import _format_of, _HeldChecks, _window_with_collection
from verifai_desktop.audit import read_record, signature_holds
from verifai_desktop.check_view import check_to_html, check_to_markdown
from verifai_desktop.codec import check_from_dict
from verifai_desktop.domain import Answer, SentenceLabel
from verifai_desktop.presentation import LABEL_STYLES
from verifai_desktop.store.folders import existing_path
from verifai_desktop.store.history import History
from verifai_desktop.ui.history_panel import CHECK_MARK
from verifai_desktop.ui.shown_state import CHECK_SOURCES_TEXT
from verifai_desktop.ui.window_base import ASK_MODE, CHECK_MODE

TIMEOUT_MS = 30_000
SUMMARY = "1 document supports, 1 contradicts, 1 without evidence · 12 passages checked"


def test_a_claim_check_is_kept_reopened_copied_exported_and_audited(
    qtbot: QtBot, hand_answer: Answer, tmp_path: Path
) -> None:
    session = _HeldChecks(hand_answer)
    session.release.set()
    window = _window_with_collection(qtbot, session)
    window.set_mode(CHECK_MODE)
    window.question.setText("Heparin reduces DVT [2].")
    window.ask_button.click()  # the button reads "Check" in this mode
    task = window.check_task
    assert task is not None
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    result = window.check_result
    assert result is not None

    # Kept in the collection's history, as a claim check.
    with History(existing_path("papers")) as history:
        (saved,) = history.answers()
    assert saved.kind == "check" and saved.question == "Heparin reduces DVT."
    assert saved.check() == result
    assert window.check_ref == ("papers", saved.answer_id)
    row = f"{CHECK_MARK} Heparin reduces DVT.\n{saved.when()} · {SUMMARY}"
    qtbot.waitUntil(lambda: window.history.row_texts() == [row], timeout=TIMEOUT_MS)

    # Copy, Export and the audit record act on it.
    assert window.copy_button.isEnabled() and window.export_button.isEnabled()
    assert window.copy_action.isEnabled() and window.audit_action.isEnabled()
    window.on_copy_clicked()
    mime = QGuiApplication.clipboard().mimeData()
    assert mime.text() == check_to_markdown(result) and mime.html() == check_to_html(result)
    QGuiApplication.clipboard().clear()  # the offscreen platform crashes on exit otherwise
    md = window.export_answer(tmp_path / "check.md").read_text(encoding="utf-8")
    assert md.startswith("# Claim checked across your documents\n\n**“Heparin reduces DVT.”**")
    assert f"{SUMMARY}." in md and "## ✗ Contradicting passages (1)" in md
    exported = json.loads(window.export_answer(tmp_path / "check.json").read_text("utf-8"))
    assert check_from_dict(exported) == result
    audit = window.save_audit(tmp_path / "audit.json")
    qtbot.waitUntil(lambda: not audit.is_running, timeout=TIMEOUT_MS)
    record = read_record(tmp_path / "audit.json")
    assert (record["kind"], record["answer_id"], record["question"]) == (
        "check",
        saved.answer_id,
        "Heparin reduces DVT.",
    )
    assert signature_holds(record) and (tmp_path / "audit.html").is_file()

    # Ask mode shows its own (empty) screen; reopening the check brings Check mode back.
    window.set_mode(ASK_MODE)
    assert window.answer_view.check is None and window.ask_button.text() == "Ask"
    window.history.list.setCurrentRow(-1)
    window.history.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: window.check_result is not None, timeout=TIMEOUT_MS)
    view = window.answer_view
    assert window.mode == CHECK_MODE and window.ask_button.text() == "Check"
    assert window.check_result == result and view.check == result and window.answer is None
    assert window.question.text() == "Heparin reduces DVT."
    assert window.reopened_note.text() == (
        f"Claim check of {saved.when()} from the history, shown as it was verified then."
    )
    # Exactly as made: the documents' verdicts in their colours, the evidence highlighted.
    assert _format_of(view, "✓ supports") == LABEL_STYLES[SentenceLabel.SUPPORTED].color_hex
    assert _format_of(view, "✗ contradicts") == LABEL_STYLES[SentenceLabel.CONTRADICTED].color_hex
    assert _format_of(view, "? no evidence") == LABEL_STYLES[SentenceLabel.NO_EVIDENCE].color_hex
    highlight = view.document().find("Heparin did not reduce DVT in this trial.")
    assert highlight.charFormat().background().color().name() == "#fff176"
    assert window.answer_info.text() == SUMMARY
    assert window.sources.caption.text() == CHECK_SOURCES_TEXT
    assert window.copy_button.isEnabled() and window.audit_action.isEnabled()
    assert window.shown_ref() == ("papers", saved.answer_id)
