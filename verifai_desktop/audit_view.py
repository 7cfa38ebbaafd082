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
from verifai_desktop.presentation import HELD_BACK, LABEL_STYLES
from verifai_desktop.private import export_private_texts, export_target


def record_to_html(record: Mapping[str, Any]) -> str:
    """A readable, self-contained HTML page of an audit record: the question, each sentence
    coloured by its label with its verdicts (the label shown when it differs from the
    verifier's, and the checks that held each back), every quoted span with its document, sha256,
    location, offsets and the evidence highlighted, then models, thresholds and settings."""
    e = html.escape
    quotes = {q["id"]: q for q in record["quotes"]}
    rows = []
    for s in record["sentences"]:
        style = LABEL_STYLES[SentenceLabel(s["label"])]
        prob = "" if s["probability"] is None else f" (p = {s['probability']:.2f})"
        verdicts = "".join(
            f"<li>[{v['passage']}] {e(v['label'])}{_shown(v)} — support {v['p_support']:.2f}, "
            f"contradict {v['p_contradict']:.2f}, no evidence {v['p_no_evidence']:.2f}"
            f"{' — ' + e(v['quote']) if v['quote'] else ''}{_flags(v)}</li>"
            for v in s["verdicts"]
        )
        conflicts = "".join(
            f"<li>contradicts: {e(c['quote'])} (contradict {c['p_contradict']:.2f}){_flags(c)}</li>"
            for c in s["conflicts"]
        )
        rows.append(
            f"<tr><td>{s['index'] + 1}</td><td style='color:{style.color_hex}'>"
            f"{style.glyph} {e(s['text'])}</td><td>{e(style.title)}{prob}</td>"
            f"<td><ul>{verdicts}{conflicts}</ul></td></tr>"
        )
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
<p><b>Question:</b> {e(record["question"])}</p>
<p><b>Answer:</b> {e(record["answer"])}</p>
<p>Collection <b>{e(record["collection"])}</b>, answer {record["answer_id"]},
answered {e(record["answered_at"])} by VerifAI Desktop {e(record["app_version"])};
exported {e(record["exported_at"])}.{
        " Abstained: " + e(record["abstain_reason"]) if record["abstained"] else ""
    }</p>
<h2>Sentences</h2>
<table><tr><th>#</th><th>Sentence</th><th>Label</th><th>Verdicts</th></tr>
{"".join(rows)}</table>
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
    """The checks that held a recorded verdict back, one line each (``"Held back: …"``)."""
    return "".join(
        f"<br><em>{html.escape(HELD_BACK)}: {html.escape(flag)}</em>"
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
