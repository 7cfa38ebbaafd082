"""Command-line numbers that make no sense are usage errors (exit 2), not silent defaults."""

from __future__ import annotations

import pytest

from verifai_desktop.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "what?", "-k", "0"],
        ["ask", "what?", "-k", "-1"],
        ["ask", "what?", "-k", "two"],
        ["search", "what", "-k", "0"],
        ["search", "what", "-k", "-3"],
    ],
)
def test_k_below_one_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument -k:" in err
    assert ("below 1" in err) or ("not a whole number" in err)
