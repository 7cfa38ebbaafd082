"""`verifai ask` progress on stderr: plain lines in pipes, a rich bar on a terminal that is
gone before the answer streams (control flow; the real command is in tests/e2e/test_ask.py)."""

from __future__ import annotations

import io

import pytest

from verifai_desktop.cli.ask_cmd import ask_line, ask_progress
from verifai_desktop.domain import Progress

REPORTS = (
    Progress("retrieve", 0, 1, "steps"),
    Progress("retrieve", 1, 1, "steps", "3 passages"),
    Progress("generate", 0, 512, "tokens"),
    Progress("read", 0, 1100, "tokens"),
    Progress("read", 512, 1100, "tokens"),
    Progress("read", 1024, 1100, "tokens"),
    Progress("read", 1100, 1100, "tokens"),
    Progress("generate", 1, 512, "tokens"),
    Progress("generate", 2, 512, "tokens"),
    Progress("verify", 0, 2, "sentences"),
    Progress("verify", 1, 2, "sentences"),
    Progress("verify", 2, 2, "sentences"),
    Progress("conflicts", 0, 1, "steps"),
    Progress("conflicts", 1, 1, "steps"),
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_pipes_get_one_line_per_stage_and_per_prompt_batch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ask_progress(streaming=False) as (report, end):
        for p in REPORTS:
            report(p)
        end()
    assert capsys.readouterr().err.splitlines() == [
        "Searching your documents…",
        "Reading the passages: 0/1100 tokens",
        "Reading the passages: 512/1100 tokens",
        "Reading the passages: 1024/1100 tokens",
        "Reading the passages: 1100/1100 tokens",
        "Writing the answer…",
        "Checking sentence 1 of 2…",
        "Checking sentence 2 of 2…",
        "Searching the collection for conflicts…",
    ]
    assert [ask_line(p) is None for p in REPORTS[:3]] == [False, True, True]


@pytest.mark.parametrize("streaming", [True, False])
def test_a_terminal_gets_a_bar_that_is_gone_before_the_answer_streams(
    monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setenv("COLUMNS", "100")
    with ask_progress(streaming=streaming) as (report, _end):
        for p in REPORTS[:6]:
            report(p)
        report(REPORTS[6])  # the whole prompt read
        shown = terminal.getvalue()
        report(REPORTS[7])  # the first answer piece
        report(REPORTS[8])
        after_first_piece = terminal.getvalue()
        report(REPORTS[9])
        after_verify = terminal.getvalue()
    assert "Reading the passages" in shown and "1100/1100" in shown and "tokens" in shown
    if streaming:  # the bar stopped when the prompt was read: nothing more is drawn
        assert after_first_piece == after_verify == shown
    else:  # no stream on stderr: the bar goes on with writing and checking
        assert "Writing the answer" in after_first_piece
        assert "Checking the sentences" in after_verify and "0/2" in after_verify
