"""Audit records of verified answers: what was answered, from which exact text, by which models.

An audit record (schema :data:`AUDIT_SCHEMA`, JSON; its readable HTML view and the export of
both files are :mod:`verifai_desktop.audit_view`'s) holds the
question and answer, every sentence with its verdicts and probabilities, and every quoted span:
each cited passage and each conflicting passage with its document's path and sha256, its
location and its character offsets into the document's extracted text, and inside it the
evidence window that decided the verdict. It also names the model files (sha256), the
settings and thresholds, the app version and the times of answer and export.

:func:`check_record` re-reads the documents and confirms that each quoted span still reads the
same at the same offsets, in a document with the same sha256, or lists what changed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from verifai_desktop import __version__
from verifai_desktop.codec import answer_to_dict, settings_for
from verifai_desktop.domain import Passage, Verdict
from verifai_desktop.errors import BadRecord, ParseError
from verifai_desktop.store.history import SavedAnswer
from verifai_desktop.store.sources import is_file_source

AUDIT_SCHEMA = "verifai.audit/1"
"""Schema name of every audit record."""

QuoteRole = Literal["cited", "conflict"]


@dataclass(frozen=True, slots=True)
class Quote:
    """One quoted span of a document.

    Attributes:
        quote_id: ``q1``, ``q2``, ... (verdicts in the record point at it).
        role: ``cited`` (a passage a sentence cites) or ``conflict`` (a passage that
            contradicts a sentence).
        path: the document's path (or benchmark key, :mod:`verifai_desktop.store.sources`).
        sha256: the document's sha256 when the answer was made ('' when unknown).
        location: the human location label (``"p. 3"``).
        char_start: start of the passage in the document's extracted text (characters).
        char_end: end (exclusive) of the passage.
        text: the passage text, ``document_text[char_start:char_end]``.
        evidence_start: start of the deciding evidence window in the document's text.
        evidence_end: end (exclusive) of the evidence window.
        evidence: the evidence window's text.
    """

    quote_id: str
    role: QuoteRole
    path: str
    sha256: str
    location: str
    char_start: int
    char_end: int
    text: str
    evidence_start: int
    evidence_end: int
    evidence: str


def _quote(
    quote_id: str, role: QuoteRole, passage: Passage, verdict: Verdict, sha256: str
) -> Quote:
    span = verdict.evidence_span
    if span == (0, 0) or not verdict.evidence:
        span = (0, len(passage.text))
    return Quote(
        quote_id,
        role,
        str(passage.path),
        sha256,
        passage.location.label(),
        passage.char_start,
        passage.char_end,
        passage.text,
        passage.char_start + span[0],
        passage.char_start + span[1],
        passage.text[span[0] : span[1]],
    )


def build_record(saved: SavedAnswer, *, collection: str) -> dict[str, Any]:
    """The audit record of a saved answer.

    Args:
        saved: an answer of the history.
        collection: its collection's name.

    Returns:
        JSON-ready data of schema :data:`AUDIT_SCHEMA`: ``quotes`` (one per distinct quoted
        span, :class:`Quote` fields), ``sentences`` (text, label, probability, and per
        verdict its probabilities and ``quote`` id), ``models``, ``settings``,
        ``thresholds``, ``documents`` and the whole saved answer under ``answer_record``.

    Raises:
        BadRecord: the saved answer cannot be read.
    """
    answer = saved.answer()
    data = saved.data()
    settings = settings_for(data)
    quotes: dict[tuple[str, int, int, int, int], Quote] = {}

    def quote_for(role: QuoteRole, passage: Passage, verdict: Verdict) -> str:
        q = _quote("", role, passage, verdict, saved.documents.get(str(passage.path), ""))
        key = (q.path, q.char_start, q.char_end, q.evidence_start, q.evidence_end)
        if key not in quotes:
            quotes[key] = dataclasses.replace(q, quote_id=f"q{len(quotes) + 1}")
        return quotes[key].quote_id

    sentences = []
    answer_dict = answer_to_dict(answer, settings)
    for s, sd in zip(answer.sentences, answer_dict["sentences"], strict=True):  # type: ignore[call-overload]
        verdicts = []
        for v in s.verdicts:
            n = v.passage_number
            given = 1 <= n <= len(answer.passages)
            ref = quote_for("cited", answer.passages[n - 1], v) if given else ""
            verdicts.append(_verdict_entry(v, ref))
        conflicts = [
            _verdict_entry(e.verdict, quote_for("conflict", e.passage, e.verdict))
            for e in s.conflicts
        ]
        sentences.append(
            {
                "index": sd["index"],
                "text": s.text,
                "label": s.label.value,
                "probability": sd["probability"],
                "citations": list(s.citations),
                "cited_by_generator": list(s.generator_citations),
                "verdicts": verdicts,
                "conflicts": conflicts,
            }
        )
    return {
        "schema": AUDIT_SCHEMA,
        "exported_at": _iso(dt.datetime.now(dt.UTC)),
        "answered_at": _iso(dt.datetime.fromtimestamp(saved.created, dt.UTC)),
        "app_version": saved.app_version,
        "exported_by_version": __version__,
        "collection": collection,
        "answer_id": saved.answer_id,
        "question": answer.question,
        "answer": answer.text,
        "abstained": answer.abstained,
        "abstain_reason": answer.abstain_reason.value,
        "sentences": sentences,
        "quotes": [_quote_dict(q) for q in quotes.values()],
        "documents": [
            {"path": path, "sha256": sha} for path, sha in sorted(saved.documents.items())
        ],
        "models": {role: dict(ident) for role, ident in answer.models.items()},
        "thresholds": data["thresholds"],
        "settings": dict(saved.settings),
        "answer_record": data,
    }


def _quote_dict(q: Quote) -> dict[str, Any]:
    return {
        "id": q.quote_id,
        "role": q.role,
        "path": q.path,
        "sha256": q.sha256,
        "location": q.location,
        "char_start": q.char_start,
        "char_end": q.char_end,
        "text": q.text,
        "evidence_char_start": q.evidence_start,
        "evidence_char_end": q.evidence_end,
        "evidence": q.evidence,
    }


def _verdict_entry(v: Verdict, quote: str) -> dict[str, Any]:
    return {
        "passage": v.passage_number,
        "label": v.label.value,
        "p_support": v.p_support,
        "p_contradict": v.p_contradict,
        "p_no_evidence": v.p_no_evidence,
        "quote": quote,
    }


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds")


def record_to_json(record: Mapping[str, Any]) -> str:
    """An audit record as indented JSON text (UTF-8 characters kept), ending in a newline."""
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def read_record(path: Path) -> dict[str, Any]:
    """Read an audit record written by :func:`record_to_json`.

    Raises:
        BadRecord: the file is missing, not JSON, or not of schema :data:`AUDIT_SCHEMA`.
    """
    what = f"audit record {path}"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadRecord(what, exc.strerror or str(exc)) from exc
    except ValueError as exc:
        raise BadRecord(what, f"not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("schema") != AUDIT_SCHEMA:
        schema = data.get("schema") if isinstance(data, dict) else None
        raise BadRecord(what, f"schema {schema!r}, expected {AUDIT_SCHEMA!r}")
    return data


# -- checking ------------------------------------------------------------------------------

ProblemKind = Literal["missing", "unreadable", "hash_changed", "text_changed", "not_in_collection"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a record no longer matches the documents.

    Attributes:
        kind: ``missing`` (the file is gone), ``unreadable`` (it cannot be parsed now),
            ``hash_changed`` (its sha256 differs), ``text_changed`` (a quoted span reads
            differently at its offsets), ``not_in_collection`` (the collection no longer
            holds it, or holds another version).
        path: the document.
        detail: what differs, for people.
        quote_id: the quote concerned ('' for the document as a whole).
    """

    kind: ProblemKind
    path: str
    detail: str
    quote_id: str = ""


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What :func:`check_record` found.

    Attributes:
        quotes_checked: quoted spans compared with their documents.
        documents_checked: distinct documents read.
        problems: everything that no longer matches; empty when the record holds.
    """

    quotes_checked: int
    documents_checked: int
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        """True when every quoted span reads the same in a document with the same hash."""
        return not self.problems


def check_record(
    record: Mapping[str, Any],
    *,
    catalog_sha256: Mapping[str, str] | None = None,
    timeout_s: float = 60.0,
) -> CheckReport:
    """Confirm that every quoted span of ``record`` still reads the same.

    For each document: the file's sha256 now against the recorded one, and, when a catalog is
    given, the collection's record of it; then the document is parsed again (in a worker
    process, as an ingest does) and each quoted span and evidence window is compared with the
    text at its recorded offsets.

    Args:
        record: an audit record (:func:`build_record` or :func:`read_record`).
        catalog_sha256: path -> sha256 of the documents the collection holds now, or None
            not to compare with the collection.
        timeout_s: wall-clock limit in seconds for hashing and for parsing each document.

    Raises:
        BadRecord: ``record`` lacks its quotes.
    """
    from verifai_desktop.ingest.parse import ParserPool

    try:
        quotes: Sequence[Mapping[str, Any]] = record["quotes"]
        by_path: dict[str, list[Mapping[str, Any]]] = {}
        for q in quotes:
            by_path.setdefault(str(q["path"]), []).append(q)
    except (KeyError, TypeError) as exc:
        raise BadRecord("the audit record", f"no quotes ({exc})") from exc
    problems: list[Problem] = []
    checked = 0
    with ParserPool(timeout_s=timeout_s) as pool:
        for path, items in by_path.items():
            recorded = str(items[0].get("sha256", ""))
            if not is_file_source(path):
                continue  # pre-parsed corpora have no file to read again
            if catalog_sha256 is not None:
                held = catalog_sha256.get(path)
                if held is None:
                    problems.append(
                        Problem("not_in_collection", path, "the collection no longer holds it")
                    )
                elif recorded and held != recorded:
                    problems.append(
                        Problem(
                            "not_in_collection",
                            path,
                            f"the collection holds another version (sha256 {held[:12]}…)",
                        )
                    )
            file = Path(path)
            if not file.is_file():
                problems.append(Problem("missing", path, "the file is gone"))
                continue
            try:
                now = pool.sha256(file)
            except ParseError as exc:
                problems.append(Problem("unreadable", path, exc.reason))
                continue
            if recorded and now != recorded:
                problems.append(
                    Problem(
                        "hash_changed",
                        path,
                        f"sha256 was {recorded[:12]}…, is {now[:12]}…: the file has changed",
                    )
                )
            try:
                text = pool.parse(file).text
            except ParseError as exc:
                problems.append(Problem("unreadable", path, exc.reason))
                continue
            for q in items:
                checked += 1
                problems += _compare(path, q, text)
    return CheckReport(checked, len(by_path), tuple(problems))


def _compare(path: str, quote: Mapping[str, Any], text: str) -> list[Problem]:
    out = []
    spans = (
        ("passage", int(quote["char_start"]), int(quote["char_end"]), str(quote["text"])),
        (
            "evidence",
            int(quote["evidence_char_start"]),
            int(quote["evidence_char_end"]),
            str(quote["evidence"]),
        ),
    )
    for what, start, end, expected in spans:
        found = text[start:end]
        if found != expected:
            out.append(
                Problem(
                    "text_changed",
                    path,
                    f"the {what} at characters {start}-{end} now reads "
                    f"“{_short(found)}”, was “{_short(expected)}”",
                    str(quote["id"]),
                )
            )
            break  # the evidence lies inside the passage: one finding per quote
    return out


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
