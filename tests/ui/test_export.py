"""Markdown and HTML export carry labels, evidence and sources (verifai_desktop/serialize.py)."""

from __future__ import annotations

import dataclasses

from verifai_desktop.domain import Answer
from verifai_desktop.presentation import answer_to_html, answer_to_markdown


def test_markdown_lists_labels_evidence_and_sources(hand_answer: Answer) -> None:
    md = answer_to_markdown(hand_answer)
    assert md.startswith("# What is overfitting?\n")
    assert "Overfitting means memorising the training data [1]. **[✓ Supported, 0.93]**" in md
    assert "Heparin increased DVT [2]. **[✗ Contradicted, 0.88]**" in md
    assert "This is a summary. **[○ Unreferenced]**" in md
    assert (
        "   - [1] deep_rules_09_overfitting.md, Overfitting — "
        "support 0.93 · contradict 0.02 · no evidence 0.05: "
        '"A model that memorises the training data fails on new data."' in md
    )
    assert (
        "[2] DVT prophylaxis review — bmc_trauma.pdf, p. 3 — "
        "lexical 0.50, semantic 0.60, fused 0.530" in md
    )


def test_html_styles_sentences_and_marks_evidence(hand_answer: Answer) -> None:
    page = answer_to_html(hand_answer)
    assert page.startswith("<!DOCTYPE html>")
    assert (
        'class="sentence contradicted" style="color:#c62828;text-decoration:underline wavy #c62828'
        in page
    )
    assert (
        'class="sentence supported" style="color:#1b6e20;text-decoration:underline solid #1b6e20'
        in page
    )
    assert "<mark>A model that memorises the training data fails on new data.</mark>" in page
    assert "<td>bmc_trauma.pdf" not in page and "bmc_trauma.pdf, p. 3" in page


def test_abstained_export_says_not_found(hand_answer: Answer) -> None:
    abstained = dataclasses.replace(hand_answer, sentences=(), abstained=True, text="")
    md = answer_to_markdown(abstained)
    assert "**Not found in your documents.** Closest passages:" in md
    assert "## Answer" not in md
    assert "Not found in your documents." in answer_to_html(abstained)
