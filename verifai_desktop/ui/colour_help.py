"""The help page on the answer's colours and marks: what each means, how often it was right when
measured, and what to do when one is wrong (Help → What the colours mean, and the legend's
link, issue 42 item 9).

The figures are quoted from the README's measured tables, each with its source, never measured
here: :data:`MEASURED` holds them, and ``tests/unit/test_colour_help.py`` checks that each
still stands in the README as quoted.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from verifai_desktop.domain import SentenceLabel
from verifai_desktop.presentation import CONFLICT_COLOR, CONFLICT_GLYPH, LABEL_STYLES
from verifai_desktop.ui.answer_menu import FLAG_ACTION_TEXT
from verifai_desktop.ui.answer_render import CITATION_COLOR, RECITED_SIGN

TITLE = "What the colours mean"


@dataclass(frozen=True, slots=True)
class Measured:
    """One figure quoted from the README.

    Attributes:
        text: the figure in words, for the page.
        source: where it was measured, in words (the README section and its data).
        readme_row: the README's table row (its start) that holds the figure; the test reads
            the README for it.
    """

    text: str
    source: str
    readme_row: str


PARAPHRASE = (
    "176 sentences the bundled generator wrote for PubMedQA questions, labelled by hand against "
    "the passage they cite (README, “Colours on paraphrase”, issue 39)"
)
SCIFACT = "SciFact dev claims against their abstracts, balanced preset (README, “How it works”)"
CONFLICTS = (
    "every conflict shown in 50 answers to figure questions, labelled by reading the passage "
    "(README, “Colours on paraphrase”, eighth round)"
)
GENERATED_ROW = (
    "| generator's sentences (eighth round): green precision / coverage / red precision | 0.74 "
    "(19 green) / 0.58 / 0.33 (15 red) | 0.70 (20 green) / 0.58 / 0.36 (14 red) |"
)
"""The README row both the green and the red figure of the generator's sentences come from."""
SCIFACT_ROW = "| balanced (default) | 0.40 | 0.60 | 0.80 / 0.50 | 0.81 / 0.41 | 0.57 / 0.32 | 16% |"
"""The README row both the green and the red figure on SciFact dev come from."""

MEASURED: dict[str, tuple[Measured, ...]] = {
    SentenceLabel.SUPPORTED.value: (
        Measured(
            "Of the generator's sentences shown green, 70% were supported (20 shown green).",
            PARAPHRASE,
            GENERATED_ROW,
        ),
        Measured(
            "On SciFact claims, green was right 81% of the time; 41% of the supported claims "
            "were shown green, the rest unsure.",
            SCIFACT,
            SCIFACT_ROW,
        ),
        Measured(
            "Claims written in a chatbot's own words: 9 of the 185 wrong ones (5%) were still "
            "shown green.",
            "348 claims against SciFact and PubMedQA passages (README, “Colours on paraphrase”)",
            "| wrong claims not shown green | 0.90 (167 of 185) | **0.951** (176) |",
        ),
    ),
    SentenceLabel.CONTRADICTED.value: (
        Measured(
            "Of the generator's sentences shown red, 36% were contradicted (14 shown red).",
            PARAPHRASE,
            GENERATED_ROW,
        ),
        Measured(
            "On SciFact claims, red was right 57% of the time.",
            SCIFACT,
            SCIFACT_ROW,
        ),
    ),
    "conflict": (
        Measured(
            "Of the passages listed as conflicting, 60% really contradicted the sentence (3 of 5).",
            CONFLICTS,
            '| listed under "Conflicting evidence", eighth round | 11 | 3 | 0.27 | 5 | 3 | 0.60 |',
        ),
    ),
}
"""Figures per label value (and ``"conflict"``); a label without figures was not measured."""

NOT_MEASURED = "How often this is right has not been measured."
WHAT_IT_MEANS: dict[SentenceLabel, str] = {
    SentenceLabel.SUPPORTED: (
        "The verifier read the cited passage and found the sentence stated there, sure enough "
        "for the colour preset in effect, and no check held it back."
    ),
    SentenceLabel.PARTIALLY_SUPPORTED: (
        "Some cited passages support the sentence, others do not. Read the card: which "
        "citation holds it up."
    ),
    SentenceLabel.CONTRADICTED: (
        "A cited passage says otherwise (a figure, a negation, the verifier's reading); the "
        "card quotes it. Red is more often wrong than green: read the passage."
    ),
    SentenceLabel.NO_EVIDENCE: (
        "The cited passages neither support nor contradict the sentence: the answer may have "
        "added it from elsewhere."
    ),
    SentenceLabel.UNSURE: (
        "The verifier could not tell, or a check (a figure not stated for the same subject, a "
        "negation the passage lacks) held its verdict back. The card gives its best guess and "
        "why: treat it as unchecked."
    ),
    SentenceLabel.UNREFERENCED: (
        "The sentence cites no passage, so nothing was checked (often a summary or a "
        "linking sentence)."
    ),
}
WHEN_WRONG = (
    "Open the passage (click the sentence or its citation) and read it yourself: the evidence "
    "that decided the colour is highlighted. Then right-click the sentence: “[n] verdict is "
    f"wrong” says what it should have been, “{FLAG_ACTION_TEXT.rstrip('…')}” notes any other "
    "problem. Your marks are kept with the answer in the collection's history (Settings: "
    "“Keep every verified answer”), shown on its card, and exported with `verifai feedback "
    "export` as pairs to train the verifier on. Settings → Verification → Colour preset makes "
    "green and red rarer and more often right (Strict) or more frequent (Lenient)."
)


def _figures(key: str) -> str:
    found = MEASURED.get(key, ())
    if not found:
        return f"<p style='margin:2px 0 8px 0;color:#555'><i>{NOT_MEASURED}</i></p>"
    items = "".join(
        f"<li>{html.escape(m.text)} <span style='color:#666'>Measured on "
        f"{html.escape(m.source)}.</span></li>"
        for m in found
    )
    return f"<ul style='margin:2px 0 8px 0'>{items}</ul>"


def colours_html() -> str:
    """The page: each label in its colour and glyph, what it means, its measured figures;
    the conflict and re-citation marks; what to do when a colour is wrong."""
    e = html.escape
    parts = [
        f"<h3>{TITLE}</h3>",
        "<p>Every sentence of an answer is checked against the passages it cites by a "
        "verifier model; its colour, underline and mark say what the verifier found. The "
        "colours help you decide what to read first; they are not proof. How often each was "
        "right when measured is given below, with where it was measured: on your documents it "
        "may differ (the library's “Check the colours…” tests them on your documents).</p>",
    ]
    for label, style in LABEL_STYLES.items():
        parts.append(
            f"<p style='margin:10px 0 0 0'><b style='color:{style.color_hex}'>{style.glyph} "
            f"{e(style.title)}</b> — {e(WHAT_IT_MEANS[label])}</p>"
        )
        parts.append(_figures(label.value))
    parts.append(
        f"<p style='margin:10px 0 0 0'><b style='color:{CONFLICT_COLOR}'>{CONFLICT_GLYPH} "
        "Conflicting evidence</b> — passages elsewhere in your documents that contradict the "
        "sentence, found by searching the whole collection; they are listed under the "
        "sources and on the card.</p>"
    )
    parts.append(_figures("conflict"))
    parts.append(
        f"<p style='margin:10px 0 8px 0'><b style='color:{CITATION_COLOR}'>{RECITED_SIGN} "
        "Re-cited</b> — the generator cited a passage that does not support the sentence, and "
        "another passage it was given does: the citation was moved there. Hover the sign to "
        "see what the generator cited.</p>"
    )
    parts.append(f"<h4>When a colour is wrong</h4><p>{e(WHEN_WRONG)}</p>")
    return "".join(parts)
