"""The colours' help page quotes its figures from the README's measured tables (issue 42, item
9): every figure it gives still stands in the README as quoted, every label is explained, and
the labels without figures say so."""

from __future__ import annotations

from pathlib import Path

from verifai_desktop.presentation import LABEL_STYLES
from verifai_desktop.ui.colour_help import MEASURED, NOT_MEASURED, WHEN_WRONG, colours_html

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_quoted_figure_stands_in_the_readme() -> None:
    readme = README.read_text(encoding="utf-8")
    for figures in MEASURED.values():
        for m in figures:
            assert m.readme_row in readme, m.readme_row


def test_the_page_explains_every_label_its_figures_and_what_to_do() -> None:
    page = colours_html()
    for style in LABEL_STYLES.values():
        assert f"{style.glyph} {style.title}</b>" in page
    assert "70% were supported (20 shown green)" in page
    assert "36% were contradicted (14 shown red)" in page
    assert "60% really contradicted the sentence" in page
    # Partially supported, no evidence, unsure and unreferenced were not measured.
    assert page.count(NOT_MEASURED) == 4
    assert "verdict is wrong" in WHEN_WRONG and "verifai feedback export" in WHEN_WRONG
