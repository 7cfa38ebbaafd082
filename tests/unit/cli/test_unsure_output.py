"""Issue 26: `verifai ask` and `verifai check` print an unsure sentence or document in a
neutral colour with the verifier's best guess, and under every verdict the checks that held it
back."""

from __future__ import annotations

import re

import pytest

from tests.unit.test_codec import FLAG, UNSURE_ANSWER, UNSURE_CHECK, UNSURE_PASSAGES
from verifai_desktop.cli.ask_cmd import LABEL_STYLE, LABEL_TEXT, render_answer
from verifai_desktop.cli.check_cmd import DOC_STYLE, render_check
from verifai_desktop.domain import SentenceLabel
from verifai_desktop.settings import Settings

STEEL_BLUE = "\x1b[38;5;67m"  # rich's "steel_blue", 256-colour 67


@pytest.fixture
def colours(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich writes colours although stdout is captured, on lines wide enough not to wrap."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "240")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)


def test_every_label_has_a_terminal_colour_and_unsure_is_neutral() -> None:
    assert set(LABEL_STYLE) == set(LABEL_TEXT) == set(SentenceLabel)
    assert (LABEL_TEXT[SentenceLabel.UNSURE], LABEL_STYLE[SentenceLabel.UNSURE]) == (
        "unsure",
        "steel_blue",
    )
    assert len(set(LABEL_STYLE.values())) == len(LABEL_STYLE)
    assert set(DOC_STYLE) == {"SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNSURE"}
    assert DOC_STYLE["UNSURE"] == LABEL_STYLE[SentenceLabel.UNSURE]


def test_ask_prints_an_unsure_sentence_with_its_best_guess_and_flag(
    colours: None, capsys: pytest.CaptureFixture[str]
) -> None:
    render_answer(UNSURE_ANSWER, Settings())
    out = capsys.readouterr().out
    assert f"{STEEL_BLUE}Aspirin lowered stroke risk by 21% [1]." in out
    plain = _plain(out)
    lines = plain.splitlines()
    assert "1. unsure (best guess: supported, p 0.72)  Aspirin lowered stroke risk by 21% [1]." in (
        lines
    )
    assert "2. supported (p=0.95)  Heparin reduced DVT [2]." in lines
    at = lines.index("    [1] SUPPORT S=0.72 C=0.08 N=0.20: “" + UNSURE_PASSAGES[0].text + "”")
    assert lines[at + 1] == f"      Held back: {FLAG}"
    assert plain.count("Held back:") == 1
    assert " unsure " in next(line for line in lines if line.startswith("Legend:"))


def test_check_prints_an_unsure_document_with_its_best_guess_and_flag(
    colours: None, capsys: pytest.CaptureFixture[str]
) -> None:
    render_check(UNSURE_CHECK)
    out = capsys.readouterr().out
    assert f"{STEEL_BLUE}unsure      " in out
    lines = _plain(out).splitlines()
    at = lines.index("  unsure       aspirin.pdf — Aspirin trial (best guess: supported, p 0.72)")
    assert lines[at + 1] == f"      Held back: {FLAG}"
    assert "  supports     dvt.md — DVT review" in lines
    assert _plain(out).count("Held back:") == 1  # the supporting passage has no flag


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
