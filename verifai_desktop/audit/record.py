"""Audit records of verified answers: what was answered, from which exact text, by which models.

An audit record (schema :data:`AUDIT_SCHEMA`, JSON; its readable HTML view and the export of
both files are :mod:`verifai_desktop.audit_view`'s) holds the
question and answer, every sentence with its verdicts, probabilities, shown labels and the
checks that held a verdict back (``flags``), and every quoted span:
each cited passage and each conflicting passage with its document's path and sha256, its
location and its character offsets into the document's extracted text, and inside it the
evidence window that decided the verdict. It also names the model files (sha256), the
settings and thresholds, the app version and the times of answer and export, and ends with
the install's public key and an Ed25519 signature of all the rest
(:mod:`verifai_desktop.audit.signing`).

A claim check kept in the history has a record too (:func:`claim_check_record`): the claim,
each document's verdict and the supporting and contradicting passages, each quoted the same
way.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from verifai_desktop import __version__
from verifai_desktop.audit.signing import sign_record
from verifai_desktop.codec import answer_to_dict, settings_for
from verifai_desktop.domain import Passage, Verdict
from verifai_desktop.errors import BadRecord
from verifai_desktop.names import dumps_json, name_json
from verifai_desktop.store.history import SavedAnswer

AUDIT_SCHEMA = "verifai.audit/1"
"""Schema name of every audit record."""

QuoteRole = Literal["cited", "conflict", "checked"]
"""Why a span is quoted: an answer's sentence ``cited`` its passage, a passage elsewhere in
the collection is in ``conflict`` with a sentence, or a claim check ``checked`` it."""


@dataclass(frozen=True, slots=True)
class Quote:
    """One quoted span of a document.

    Attributes:
        quote_id: ``q1``, ``q2``, ... (verdicts in the record point at it).
        role: ``cited`` (a passage a sentence cites), ``conflict`` (a passage that
            contradicts a sentence) or ``checked`` (a passage a claim check lists).
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
    """The audit record of a saved answer or claim check, signed with this install's key.

    Args:
        saved: an entry of the history.
        collection: its collection's name.

    Returns:
        :func:`unsigned_record`'s data plus ``public_key`` and ``signature``
        (:func:`~verifai_desktop.audit.signing.sign_record`).

    Raises:
        BadRecord: the saved entry cannot be read.
        AuditKeyError: this install's signing key cannot be created or read.
    """
    return sign_record(unsigned_record(saved, collection=collection))


class _Quotes:
    """The distinct quoted spans of a record, numbered ``q1``, ``q2``, ... as first quoted."""

    def __init__(self, saved: SavedAnswer) -> None:
        self._documents = saved.documents
        self._quotes: dict[tuple[str, int, int, int, int], Quote] = {}

    def ref(self, role: QuoteRole, passage: Passage, verdict: Verdict) -> str:
        """The id of the quote of ``passage`` with ``verdict``'s evidence (added if new)."""
        q = _quote("", role, passage, verdict, self._documents.get(str(passage.path), ""))
        key = (q.path, q.char_start, q.char_end, q.evidence_start, q.evidence_end)
        if key not in self._quotes:
            self._quotes[key] = dataclasses.replace(q, quote_id=f"q{len(self._quotes) + 1}")
        return self._quotes[key].quote_id

    def dicts(self) -> list[dict[str, Any]]:
        """The quotes as the record lists them."""
        return [_quote_dict(q) for q in self._quotes.values()]


def _head(saved: SavedAnswer, collection: str) -> dict[str, Any]:
    """The fields every record starts with: schema, times, versions, collection and id."""
    return {
        "schema": AUDIT_SCHEMA,
        "exported_at": _iso(dt.datetime.now(dt.UTC)),
        "answered_at": _iso(dt.datetime.fromtimestamp(saved.created, dt.UTC)),
        "app_version": saved.app_version,
        "exported_by_version": __version__,
        "collection": collection,
        "answer_id": saved.answer_id,
    }


def _documents(saved: SavedAnswer) -> list[dict[str, Any]]:
    return [
        {**name_json("path", path), "sha256": sha} for path, sha in sorted(saved.documents.items())
    ]


def unsigned_record(saved: SavedAnswer, *, collection: str) -> dict[str, Any]:
    """The audit record of a saved answer or claim check, without its key and signature.

    Args:
        saved: an entry of the history.
        collection: its collection's name.

    Returns:
        JSON-ready data of schema :data:`AUDIT_SCHEMA`: ``quotes`` (one per distinct quoted
        span, :class:`Quote` fields; a ``path`` that is not valid UTF-8 is shown escaped, with
        its exact bytes in ``path_bytes_b64``: :func:`~verifai_desktop.names.name_json`, as in
        ``documents``), ``sentences`` (text, label, probability, and per
        verdict its probabilities, ``quote`` id and, when the verdict has them, ``shown``
        (a :class:`~verifai_desktop.domain.ShownLabel` value or null) and ``flags``),
        ``models``, ``settings``,
        ``thresholds``, ``documents`` and the whole saved answer under ``answer_record``.
        A claim check's record (:func:`claim_check_record`) has ``kind: "check"`` and a
        ``check`` in place of the answer's ``answer``, ``abstained``, ``abstain_reason`` and
        ``sentences``.

    Raises:
        BadRecord: the saved entry cannot be read.
    """
    if saved.kind == "check":
        return claim_check_record(saved, collection=collection)
    answer = saved.answer()
    data = saved.data()
    settings = settings_for(data)
    quotes = _Quotes(saved)
    sentences = []
    answer_dict = answer_to_dict(answer, settings)
    for s, sd in zip(answer.sentences, answer_dict["sentences"], strict=True):  # type: ignore[call-overload]
        verdicts = []
        for v in s.verdicts:
            n = v.passage_number
            given = 1 <= n <= len(answer.passages)
            ref = quotes.ref("cited", answer.passages[n - 1], v) if given else ""
            verdicts.append(_verdict_entry(v, ref))
        conflicts = [
            _verdict_entry(e.verdict, quotes.ref("conflict", e.passage, e.verdict))
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
        **_head(saved, collection),
        "question": answer.question,
        "answer": answer.text,
        "abstained": answer.abstained,
        "abstain_reason": answer.abstain_reason.value,
        "sentences": sentences,
        "quotes": quotes.dicts(),
        "documents": _documents(saved),
        "models": {role: dict(ident) for role, ident in answer.models.items()},
        "thresholds": data["thresholds"],
        "settings": dict(saved.settings),
        "answer_record": data,
    }


def claim_check_record(saved: SavedAnswer, *, collection: str) -> dict[str, Any]:
    """The audit record of a saved claim check, without its key and signature.

    Args:
        saved: a claim check of the history (:attr:`SavedAnswer.kind` ``"check"``).
        collection: its collection's name.

    Returns:
        JSON-ready data of schema :data:`AUDIT_SCHEMA` with ``kind: "check"``: the claim as
        ``question``; ``check``: the ``claim``, ``candidates`` (passages verified), one entry
        per document (``title``, ``path``, ``label``: SUPPORT, CONTRADICT, NO_EVIDENCE or
        UNSURE, ``probability``, and its strongest passage's ``verdict``), and the
        ``supporting`` and ``contradicting`` verdicts; every verdict as in an answer's record,
        its passage a quote of role ``checked``. ``quotes``, ``documents``, ``models``,
        ``thresholds``, ``settings`` and ``answer_record`` (the check's JSON) as for an answer.

    Raises:
        BadRecord: the saved check cannot be read, or names no thresholds.
    """
    result = saved.check()
    data = saved.data()
    thresholds = data.get("thresholds")
    if not isinstance(thresholds, dict):
        raise BadRecord(f"saved answer {saved.answer_id}", "its claim check names no thresholds")
    quotes = _Quotes(saved)
    documents = [
        {
            "title": d.title,
            **name_json("path", d.path),
            "label": d.label,
            "probability": d.probability,
            "verdict": _verdict_entry(
                d.evidence.verdict,
                quotes.ref("checked", d.evidence.passage, d.evidence.verdict),
            ),
        }
        for d in result.documents
    ]
    found = {
        key: [_verdict_entry(e.verdict, quotes.ref("checked", e.passage, e.verdict)) for e in evs]
        for key, evs in (("supporting", result.supporting), ("contradicting", result.contradicting))
    }
    return {
        **_head(saved, collection),
        "kind": "check",
        "question": result.claim,
        "check": {
            "claim": result.claim,
            "candidates": result.candidates,
            "documents": documents,
            **found,
        },
        "quotes": quotes.dicts(),
        "documents": _documents(saved),
        "models": {role: dict(ident) for role, ident in result.models.items()},
        "thresholds": thresholds,
        "settings": dict(saved.settings),
        "answer_record": data,
    }


def _quote_dict(q: Quote) -> dict[str, Any]:
    return {
        "id": q.quote_id,
        "role": q.role,
        **name_json("path", q.path),
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
    entry: dict[str, Any] = {
        "passage": v.passage_number,
        "label": v.label.value,
        "p_support": v.p_support,
        "p_contradict": v.p_contradict,
        "p_no_evidence": v.p_no_evidence,
        "quote": quote,
    }
    # A verdict made before shown labels has neither: its record is built again (audit
    # check) exactly as it was exported then.
    if v.shown is not None or v.flags:
        entry["shown"] = None if v.shown is None else v.shown.value
        entry["flags"] = list(v.flags)
    return entry


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds")


def record_to_json(record: Mapping[str, Any]) -> str:
    """An audit record as indented JSON text (UTF-8 characters kept, always valid UTF-8:
    :func:`~verifai_desktop.names.dumps_json`), ending in a newline."""
    return dumps_json(record, indent=2) + "\n"
