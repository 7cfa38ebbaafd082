"""An audit record (:mod:`verifai_desktop.audit`) as a person reads it: a self-contained HTML
page in the app's label colours and glyphs (:data:`verifai_desktop.presentation.LABEL_STYLES`),
and the export that writes the record's JSON and that page side by side.

Layer: presentation (used by ``cli/`` and ``ui/``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verifai_desktop.audit import record_to_json
from verifai_desktop.domain import SentenceLabel
from verifai_desktop.presentation import (
    CHECK_VERDICT_LABEL,
    CHECK_VERDICT_TEXT,
    HELD_BACK,
    LABEL_STYLES,
    REASON_LEADS,
)
from verifai_desktop.private import export_private_texts, export_target


def _verdict_line(v: Mapping[str, Any]) -> str:
    """One verdict of a record: probabilities, the label shown, its quote and flags."""
    e = html.escape
    return (
        f"{e(v['label'])}{_shown(v)} — support {v['p_support']:.2f}, "
        f"contradict {v['p_contradict']:.2f}, no evidence {v['p_no_evidence']:.2f}"
        f"{' — ' + e(v['quote']) if v['quote'] else ''}{_flags(v)}"
    )


def _made(record: Mapping[str, Any], what: str, verb: str) -> str:
    """``Collection papers, answer 3, answered <time> by VerifAI Desktop 0.1.0; exported
    <time>.``"""
    e = html.escape
    return (
        f"Collection <b>{e(record['collection'])}</b>, {what} {record['answer_id']},\n"
        f"{verb} {e(record['answered_at'])} by VerifAI Desktop {e(record['app_version'])};\n"
        f"exported {e(record['exported_at'])}."
    )


def _check_html(record: Mapping[str, Any]) -> str:
    """A claim check's record: the claim, each document's verdict, the passages' verdicts."""
    e = html.escape
    check = record["check"]
    rows = []
    for i, d in enumerate(check["documents"], start=1):
        style = LABEL_STYLES[CHECK_VERDICT_LABEL[d["label"]]]
        rows.append(
            f"<tr><td>{i}</td><td style='color:{style.color_hex}'>{style.glyph} "
            f"{e(CHECK_VERDICT_TEXT[d['label']])} (p = {d['probability']:.2f})</td>"
            f"<td>{e(d['title'])}<br><small>{e(d['path'])}</small></td>"
            f"<td>{_verdict_line(d['verdict'])}</td></tr>"
        )
    found = "".join(
        f"<h2>{title} ({len(check[key])})</h2><ul>"
        + "".join(f"<li>{_verdict_line(v)}</li>" for v in check[key])
        + "</ul>"
        for key, title in (
            ("supporting", "Supporting passages"),
            ("contradicting", "Contradicting passages"),
        )
    )
    return (
        f"<p><b>Claim checked across the collection:</b> {e(check['claim'])}</p>\n"
        f"<p>{_made(record, 'claim check', 'checked')} {check['candidates']} passages "
        "checked.</p>\n<h2>What each document says</h2>\n"
        "<table><tr><th>#</th><th>Verdict</th><th>Document</th><th>Strongest passage</th></tr>"
        f"{''.join(rows)}</table>\n{found}"
    )


def _answer_html(record: Mapping[str, Any]) -> str:
    """An answer's record: the question and answer, then each sentence with its verdicts."""
    e = html.escape
    rows = []
    for s in record["sentences"]:
        style = LABEL_STYLES[SentenceLabel(s["label"])]
        prob = "" if s["probability"] is None else f" (p = {s['probability']:.2f})"
        verdicts = "".join(f"<li>[{v['passage']}] {_verdict_line(v)}</li>" for v in s["verdicts"])
        conflicts = "".join(
            f"<li>contradicts: {e(c['quote'])} (contradict {c['p_contradict']:.2f}){_flags(c)}</li>"
            for c in s["conflicts"]
        )
        rows.append(
            f"<tr><td>{s['index'] + 1}</td><td style='color:{style.color_hex}'>"
            f"{style.glyph} {e(s['text'])}</td><td>{e(style.title)}{prob}</td>"
            f"<td><ul>{verdicts}{conflicts}</ul></td></tr>"
        )
    abstained = " Abstained: " + e(record["abstain_reason"]) if record["abstained"] else ""
    return (
        f"<p><b>Question:</b> {e(record['question'])}</p>\n"
        f"<p><b>Answer:</b> {e(record['answer'])}</p>\n"
        f"<p>{_made(record, 'answer', 'answered')}{abstained}</p>\n"
        "<h2>Sentences</h2>\n"
        "<table><tr><th>#</th><th>Sentence</th><th>Label</th><th>Verdicts</th></tr>\n"
        f"{''.join(rows)}</table>"
    )


def record_to_html(record: Mapping[str, Any]) -> str:
    """A readable, self-contained HTML page of an audit record: the question, each sentence
    coloured by its label with its verdicts (the label shown when it differs from the
    verifier's, and the checks that held each back), every quoted span with its document, sha256,
    location, offsets and the evidence highlighted, then models, thresholds and settings. A
    claim check's record shows the claim, each document's verdict and the passages' verdicts
    in place of the answer and its sentences."""
    e = html.escape
    quotes = {q["id"]: q for q in record["quotes"]}
    head = _check_html(record) if record.get("kind") == "check" else _answer_html(record)
    quote_rows = []
    for q in quotes.values():
        start = q["evidence_char_start"] - q["char_start"]
        end = q["evidence_char_end"] - q["char_start"]
        body = (
            e(q["text"][:start]) + "<mark>" + e(q["text"][start:end]) + "</mark>"
            + e(q["text"][end:])
        )  # fmt: skip
        quote_rows.append(
            f"<tr><td id='{e(q['id'])}'>{e(q['id'])}</td><td>{e(q['role'])}</td>"
            f"<td>{e(q['path'])}<br><small>{e(q['location'])} · characters "
            f"{q['char_start']} to {q['char_end']}<br>sha256 <code>{e(q['sha256'])}</code>"
            f"</small></td><td>{body}</td></tr>"
        )
    models = "".join(
        f"<tr><td>{e(role)}</td><td>{e(m.get('name', ''))}</td>"
        f"<td><code>{e(m.get('sha256', ''))}</code></td></tr>"
        for role, m in record["models"].items()
    )
    thresholds = "".join(
        f"<tr><td>{e(k)}</td><td>{e(str(v))}</td></tr>" for k, v in record["thresholds"].items()
    )
    settings = e(json.dumps(record["settings"], indent=2, ensure_ascii=False))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Audit record: {e(record["question"])}</title>
<style>
body {{ font-family: sans-serif; max-width: 70em; margin: 2em auto; line-height: 1.4; }}
table {{ border-collapse: collapse; width: 100%; margin-bottom: 1.5em; }}
td, th {{ border: 1px solid #ccc; padding: 4px 6px; vertical-align: top; text-align: left; }}
mark {{ background: #fff176; }} code {{ font-size: 0.85em; word-break: break-all; }}
</style></head><body>
<h1>Audit record</h1>
{head}
<h2>Quoted text</h2>
<table><tr><th>Id</th><th>Role</th><th>Document</th><th>Passage (evidence marked)</th></tr>
{"".join(quote_rows)}</table>
<h2>Models</h2>
<table><tr><th>Role</th><th>Model</th><th>sha256</th></tr>{models}</table>
<h2>Thresholds</h2>
<table>{thresholds}</table>
<h2>Settings</h2>
<pre>{settings}</pre>
</body></html>
"""


def _shown(verdict: Mapping[str, Any]) -> str:
    """``", shown UNSURE"`` when the record says the app showed another label than the
    verifier's own, else ``""`` (a verdict recorded before shown labels has none)."""
    shown = verdict.get("shown")
    return f", shown {html.escape(shown)}" if shown and shown != verdict["label"] else ""


def _flags(verdict: Mapping[str, Any]) -> str:
    """The reasons of a recorded verdict, one line each, led as the app leads them
    (:data:`~verifai_desktop.presentation.REASON_LEADS`: ``"Contradicted: …"`` for a verdict a
    rule showed red, else ``"Held back: …"``)."""
    shown = verdict.get("shown")
    lead = next((v for k, v in REASON_LEADS.items() if k.value == shown), HELD_BACK)
    return "".join(
        f"<br><em>{html.escape(lead)}: {html.escape(flag)}</em>"
        for flag in verdict.get("flags", ())
    )


def write_record(record: Mapping[str, Any], output: Path | str) -> tuple[Path, Path]:
    """Write the record as JSON to ``output`` and its HTML view beside it (same name,
    ``.html``; an ``output`` ending in ``.html`` gets the JSON as ``.json``).

    Both files are user-only (mode 0600; they quote the documents) and written as a pair or
    not at all: both are written in full before either is renamed into place
    (:func:`~verifai_desktop.private.export_private_texts`).

    Returns:
        ``(json_path, html_path)``.

    Raises:
        ExportFailed: a file cannot be written (a folder, no name, a missing or read-only
            folder, a full disk); neither file was changed.
    """
    output = export_target(output, "audit record")
    if output.suffix.lower() in (".html", ".htm"):
        json_path, html_path = output.with_suffix(".json"), output
    else:
        json_path, html_path = output, output.with_suffix(".html")
    export_private_texts(
        [(json_path, record_to_json(record)), (html_path, record_to_html(record))],
        what="audit record",
    )
    return json_path, html_path
