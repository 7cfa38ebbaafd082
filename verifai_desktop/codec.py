"""The answer codec: an :class:`~verifai_desktop.domain.Answer` (and a claim check) as
JSON-ready data and back, the format the store's history, the audit record and ``--json``
output share; no wording, no styles (those are :mod:`verifai_desktop.presentation`'s).

One schema: a passage is the same object in ``verifai ask --json`` and ``verifai search --json``
(:func:`passage_to_dict`). An answer read back (:func:`answer_from_dict`) is the answer that was
verified: ``answer_to_dict(answer_from_dict(d), settings_for(d)) == d`` for ``d`` of schema
:data:`ANSWER_SCHEMA` (an older answer reads back with the fields it lacks at their defaults);
likewise a claim check (:func:`check_from_dict`, schema :data:`CHECK_SCHEMA`).

File names that are not valid UTF-8 are written as a shown name plus their exact bytes
(:func:`~verifai_desktop.names.name_json`) and read back exactly, so the JSON is always valid
UTF-8.

Layer: foundation (imports only :mod:`~verifai_desktop.domain`, :mod:`~verifai_desktop.errors`,
:mod:`~verifai_desktop.names`, :mod:`~verifai_desktop.recognition` and
:mod:`~verifai_desktop.settings`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verifai_desktop.domain import (
    AbstainReason,
    Answer,
    AnswerSentence,
    CheckLabel,
    CheckResult,
    ChunkId,
    DocId,
    DocumentVerdict,
    Evidence,
    Location,
    LocationKind,
    NliLabel,
    Passage,
    SentenceLabel,
    ShownLabel,
    Verdict,
    label_probability,
)
from verifai_desktop.errors import BadRecord
from verifai_desktop.names import dumps_json, name_from_json, name_json, shown_name
from verifai_desktop.recognition import Recognition
from verifai_desktop.reference import Reference
from verifai_desktop.settings import Settings

ANSWER_SCHEMA = "verifai.answer/4"
"""Schema name written into every JSON answer (2: re-citation; ``answer`` and ``citations``
are the corrected ones, ``generated_answer`` and ``cited_by_generator`` as generated; 3:
passages keep their ``sentence_spans``, so an answer read back (:func:`answer_from_dict`) is
the answer that was verified; 4: every verdict has ``shown`` and ``flags``, and a sentence
label may be ``unsure``)."""

READABLE_SCHEMAS = ("verifai.answer/2", "verifai.answer/3", ANSWER_SCHEMA)
"""Schemas :func:`answer_from_dict` reads (a ``/2`` passage has no sentence spans; ``/2`` and
``/3`` verdicts have no ``shown`` and no ``flags``)."""


def verdict_to_dict(verdict: Verdict) -> dict[str, object]:
    """One verdict: label, probabilities, the deciding premise window as ``evidence`` with
    its offsets into the cited passage's ``text``, what the app shows for it as ``shown`` (a
    :class:`~verifai_desktop.domain.ShownLabel` value, ``null`` on a verdict made before
    shown labels) and the checks that held it back as ``flags`` (a list of texts)."""
    return {
        "passage": verdict.passage_number,
        "label": verdict.label.value,
        "probability": verdict.probability,
        "p_support": verdict.p_support,
        "p_contradict": verdict.p_contradict,
        "p_no_evidence": verdict.p_no_evidence,
        "evidence": verdict.evidence,
        "evidence_char_start": verdict.evidence_span[0],
        "evidence_char_end": verdict.evidence_span[1],
        "shown": None if verdict.shown is None else verdict.shown.value,
        "flags": list(verdict.flags),
    }


def evidence_to_dict(evidence: Evidence) -> dict[str, object]:
    """One passage of the collection and its verdict on a claim (a sentence's ``conflicts``,
    ``verifai check``): the passage as in :func:`passage_to_dict` (``number`` is its citation
    number in the answer, 0 when it was not given to the generator) plus ``verdict``."""
    out = passage_to_dict(evidence.passage, evidence.verdict.passage_number)
    out["verdict"] = verdict_to_dict(evidence.verdict)
    return out


CHECK_SCHEMA = "verifai.check/3"
"""Schema name written into every claim check (``verifai check --json``, the history; 2: a
document's ``label`` may be ``UNSURE``, and verdicts carry ``shown`` and ``flags``,
:func:`verdict_to_dict`; 3: the check names its ``models`` and ``thresholds``, so a check read
back (:func:`check_from_dict`) is the check that was made)."""

READABLE_CHECK_SCHEMAS = ("verifai.check/2", CHECK_SCHEMA)
"""Schemas :func:`check_from_dict` reads (a ``/2`` check has no models and no thresholds)."""


def check_to_dict(result: CheckResult, settings: Settings | None = None) -> dict[str, object]:
    """A claim check as JSON-ready data (``verifai check --json``, the history; schema
    :data:`CHECK_SCHEMA`): ``supporting`` and ``contradicting`` passages (as in
    :func:`evidence_to_dict`, strongest first), one verdict per ``documents`` entry (its
    ``path`` written as in :func:`passage_to_dict`), the ``models`` used and the
    ``thresholds`` (as in :func:`answer_to_dict`).

    Args:
        result: the check.
        settings: the settings it was made with (thresholds); defaults if None.
    """
    return {
        "schema": CHECK_SCHEMA,
        "claim": result.claim,
        "candidates": result.candidates,
        "documents": [
            {
                "doc_id": int(d.doc_id),
                **name_json("path", d.path),
                "file": shown_name(d.path.name),
                "title": d.title,
                "label": d.label,
                "probability": d.probability,
                "evidence": evidence_to_dict(d.evidence),
            }
            for d in result.documents
        ],
        "supporting": [evidence_to_dict(e) for e in result.supporting],
        "contradicting": [evidence_to_dict(e) for e in result.contradicting],
        "models": {role: dict(ident) for role, ident in result.models.items()},
        "thresholds": _thresholds_dict(settings),
    }


def check_to_json(result: CheckResult, settings: Settings | None = None) -> str:
    """:func:`check_to_dict` as indented JSON text (always valid UTF-8), ending in a newline."""
    return dumps_json(check_to_dict(result, settings), indent=2) + "\n"


def _thresholds_dict(settings: Settings | None) -> dict[str, object]:
    """The verification thresholds an answer or a check records (``thresholds``)."""
    thresholds = (settings or Settings()).verify
    return {
        "support": thresholds.support_threshold,
        "contradict": thresholds.contradict_threshold,
        "abstain": thresholds.abstain_threshold,
        "recite": thresholds.recite,
        "conflict_search": thresholds.conflict_search,
        "conflict_budget": thresholds.conflict_budget,
        "second_opinion": thresholds.second_opinion,
    }


def passage_to_dict(passage: Passage, number: int) -> dict[str, object]:
    """One passage as in ``verifai.answer`` (since ``/3``; and ``verifai search --json``).

    Args:
        passage: the passage.
        number: its 1-based number (citation ``[number]`` in an answer, rank in a search).

    Returns:
        JSON-ready data; ``char_start/char_end`` index the passage's document text. A path
        that is not valid UTF-8 is shown escaped (``r\\xe9sum\\xe9.txt``) with its exact bytes
        in ``path_bytes_b64`` (:func:`~verifai_desktop.names.name_json`; only then).
        Text recognised by OCR has ``ocr`` (engine, mean confidence, word boxes:
        :meth:`~verifai_desktop.recognition.Recognition.as_dict`; only then). A passage of a
        document from a reference library has ``reference`` (``key``, ``csl`` item, original
        ``bibtex``, ``library``; :meth:`~verifai_desktop.reference.Reference.to_json`; only
        then).
    """
    return {
        "number": number,
        "chunk_id": int(passage.chunk_id),
        "doc_id": int(passage.doc_id),
        **name_json("path", passage.path),
        "file": shown_name(passage.path.name),
        "title": passage.title,
        "location": passage.location.as_dict(),
        "char_start": passage.char_start,
        "char_end": passage.char_end,
        "scores": {
            "fused": passage.fused_score,
            "lexical": passage.lexical_score,
            "semantic": passage.semantic_score,
            "raw_lexical": passage.raw_lexical,
            "raw_semantic": passage.raw_semantic,
            # Only when reranking read the passage, so earlier answers read back unchanged.
            **({} if passage.evidence is None else {"evidence": passage.evidence}),
        },
        "text": passage.text,
        "sentence_spans": [list(span) for span in passage.sentence_spans],
        "instruction_cues": list(passage.instruction_cues),
        "is_reference": passage.is_reference,
        # Only for recognised text, so answers kept before OCR existed read back unchanged.
        **({} if passage.ocr is None else {"ocr": passage.ocr.as_dict()}),
        # Only for a document with a reference-manager entry (issue 43), likewise.
        **({} if passage.reference is None else {"reference": _reference(passage.reference)}),
    }


def _reference(reference: Reference) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(reference.to_json())
    return data


def answer_to_dict(answer: Answer, settings: Settings | None = None) -> dict[str, object]:
    """The whole answer as JSON-ready data (``verifai ask --json``; schema :data:`ANSWER_SCHEMA`).

    Offsets: sentence ``char_start/char_end`` index ``answer``; verdict ``evidence_char_*``
    index the cited passage's ``text``; passage ``char_start/char_end`` index its document.

    Args:
        answer: the answer.
        settings: the settings it was made with (thresholds); defaults if None.
    """
    sentences = [
        {
            "index": i,
            "text": s.text,
            "char_start": s.char_start,
            "char_end": s.char_end,
            "citations": list(s.citations),
            "invalid_citations": list(s.invalid_citations),
            "label": s.label.value,
            "probability": label_probability(s.label, s.verdicts),
            "verdicts": [verdict_to_dict(v) for v in s.verdicts],
            "recited": s.recited,
            "cited_by_generator": list(s.generator_citations),
            "generator_label": (s.generator_label or s.label).value,
            "generator_verdicts": [verdict_to_dict(v) for v in s.generator_verdicts],
            "supported_by": [{"passage": n, "p_support": p} for n, p in s.supported_by],
            "conflicts": [evidence_to_dict(e) for e in s.conflicts],
        }
        for i, s in enumerate(answer.sentences)
    ]
    counts = answer.label_counts()
    return {
        "schema": ANSWER_SCHEMA,
        "question": answer.question,
        "answer": answer.text,
        "generated_answer": answer.text if answer.generated_text is None else answer.generated_text,
        "abstained": answer.abstained,
        "abstain_reason": answer.abstain_reason.value,
        "sentences": sentences,
        "label_counts": {label.value: n for label, n in counts.items()},
        "passages": [passage_to_dict(p, n) for n, p in enumerate(answer.passages, start=1)],
        "passages_left_out": answer.passages_left_out,
        "timings_ms": dict(answer.timings_ms),
        "models": {role: dict(ident) for role, ident in answer.models.items()},
        "thresholds": _thresholds_dict(settings),
    }


def answer_to_json(answer: Answer, settings: Settings | None = None) -> str:
    """:func:`answer_to_dict` as indented JSON text (UTF-8 characters kept, always valid
    UTF-8: :func:`~verifai_desktop.names.dumps_json`), ending in a newline."""
    return dumps_json(answer_to_dict(answer, settings), indent=2) + "\n"


# -- reading an answer back ------------------------------------------------------------


def _location_from_dict(data: Mapping[str, Any]) -> Location:
    number = data.get("number")
    return Location(
        LocationKind(data["kind"]), None if number is None else int(number), str(data["heading"])
    )


def _passage_from_dict(data: Mapping[str, Any]) -> Passage:
    scores = data["scores"]
    return Passage(
        chunk_id=ChunkId(int(data["chunk_id"])),
        doc_id=DocId(int(data["doc_id"])),
        path=Path(name_from_json(data, "path")),
        title=str(data["title"]),
        text=str(data["text"]),
        char_start=int(data["char_start"]),
        char_end=int(data["char_end"]),
        location=_location_from_dict(data["location"]),
        sentence_spans=tuple((int(a), int(b)) for a, b in data.get("sentence_spans", ())),
        lexical_score=scores["lexical"],
        semantic_score=scores["semantic"],
        fused_score=scores["fused"],
        raw_lexical=scores["raw_lexical"],
        raw_semantic=scores["raw_semantic"],
        instruction_cues=tuple(data["instruction_cues"]),
        is_reference=bool(data["is_reference"]),
        ocr=Recognition.from_dict(data["ocr"]) if data.get("ocr") is not None else None,
        evidence=scores.get("evidence"),
        reference=(
            Reference.from_json(json.dumps(data["reference"])) if data.get("reference") else None
        ),
    )


def verdict_from_dict(data: Mapping[str, Any]) -> Verdict:
    """The inverse of :func:`verdict_to_dict`; ``shown`` and ``flags`` may be absent (a
    verdict written before they existed: ``shown`` None, no flags).

    Raises:
        KeyError, ValueError, TypeError: ``data`` is not a verdict as written.
    """
    shown = data.get("shown")
    flags = data.get("flags", ())
    if isinstance(flags, str) or not all(isinstance(f, str) for f in flags):
        raise TypeError(f"verdict flags must be a list of texts, not {flags!r}")
    return Verdict(
        passage_number=int(data["passage"]),
        label=NliLabel(data["label"]),
        p_support=data["p_support"],
        p_contradict=data["p_contradict"],
        p_no_evidence=data["p_no_evidence"],
        evidence=str(data["evidence"]),
        evidence_span=(int(data["evidence_char_start"]), int(data["evidence_char_end"])),
        shown=None if shown is None else ShownLabel(shown),
        flags=tuple(flags),
    )


def _evidence_from_dict(data: Mapping[str, Any]) -> Evidence:
    return Evidence(_passage_from_dict(data), verdict_from_dict(data["verdict"]))


def _sentence_from_dict(data: Mapping[str, Any]) -> AnswerSentence:
    recited = bool(data["recited"])
    return AnswerSentence(
        text=str(data["text"]),
        char_start=int(data["char_start"]),
        char_end=int(data["char_end"]),
        citations=tuple(int(n) for n in data["citations"]),
        verdicts=tuple(verdict_from_dict(v) for v in data["verdicts"]),
        label=SentenceLabel(data["label"]),
        invalid_citations=tuple(int(n) for n in data["invalid_citations"]),
        cited_by_generator=tuple(int(n) for n in data["cited_by_generator"]) if recited else None,
        generator_verdicts=(
            tuple(verdict_from_dict(v) for v in data["generator_verdicts"]) if recited else ()
        ),
        generator_label=SentenceLabel(data["generator_label"]) if recited else None,
        supported_by=tuple((int(s["passage"]), s["p_support"]) for s in data["supported_by"]),
        conflicts=tuple(_evidence_from_dict(e) for e in data["conflicts"]),
    )


def _require_schema(data: Mapping[str, Any], readable: tuple[str, ...], what: str) -> None:
    """Raise :class:`BadRecord` naming ``what`` unless ``data``'s schema is ``readable``."""
    schema = data.get("schema")
    if schema not in readable:
        raise BadRecord(what, f"its schema is {schema!r}, not one of {readable}")


def answer_from_dict(data: Mapping[str, Any]) -> Answer:
    """An answer read back from :func:`answer_to_dict`'s data (a saved answer, an audit
    record): the same sentences, labels, verdicts, evidence and passages, so
    ``answer_to_dict(answer_from_dict(d), settings_for(d)) == d``.

    Args:
        data: parsed JSON of schema ``verifai.answer/2``, ``/3`` or ``/4``
            (:data:`READABLE_SCHEMAS`).

    Raises:
        BadRecord: another schema, or a field missing or of the wrong type.
    """
    _require_schema(data, READABLE_SCHEMAS, "the saved answer")
    try:
        text = str(data["answer"])
        generated = str(data["generated_answer"])
        return Answer(
            question=str(data["question"]),
            text=text,
            sentences=tuple(_sentence_from_dict(s) for s in data["sentences"]),
            passages=tuple(_passage_from_dict(p) for p in data["passages"]),
            abstained=bool(data["abstained"]),
            timings_ms={str(k): v for k, v in data["timings_ms"].items()},
            models={
                str(role): {str(k): str(v) for k, v in ident.items()}
                for role, ident in data["models"].items()
            },
            generated_text=None if generated == text else generated,
            abstain_reason=AbstainReason(data["abstain_reason"]),
            passages_left_out=int(data.get("passages_left_out", 0)),  # absent before issue 29
        )
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise BadRecord("the saved answer", f"{type(exc).__name__}: {exc}") from exc


_CHECK_LABELS: tuple[CheckLabel, ...] = ("SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNSURE")


def _document_verdict_from_dict(data: Mapping[str, Any]) -> DocumentVerdict:
    label = next((c for c in _CHECK_LABELS if c == data["label"]), None)
    if label is None:
        raise ValueError(f"document label {data['label']!r} is not one of {_CHECK_LABELS}")
    return DocumentVerdict(
        doc_id=DocId(int(data["doc_id"])),
        path=Path(name_from_json(data, "path")),
        title=str(data["title"]),
        label=label,
        evidence=_evidence_from_dict(data["evidence"]),
    )


def check_from_dict(data: Mapping[str, Any]) -> CheckResult:
    """A claim check read back from :func:`check_to_dict`'s data (a check kept in the
    history, an audit record): the same documents, verdicts, evidence and passages, so
    ``check_to_dict(check_from_dict(d), settings_for(d)) == d`` for ``d`` of schema
    :data:`CHECK_SCHEMA`.

    Args:
        data: parsed JSON of schema ``verifai.check/2`` or ``/3``
            (:data:`READABLE_CHECK_SCHEMAS`).

    Raises:
        BadRecord: another schema, or a field missing or of the wrong type.
    """
    _require_schema(data, READABLE_CHECK_SCHEMAS, "the saved claim check")
    try:
        return CheckResult(
            claim=str(data["claim"]),
            supporting=tuple(_evidence_from_dict(e) for e in data["supporting"]),
            contradicting=tuple(_evidence_from_dict(e) for e in data["contradicting"]),
            documents=tuple(_document_verdict_from_dict(d) for d in data["documents"]),
            candidates=int(data["candidates"]),
            models={
                str(role): {str(k): str(v) for k, v in ident.items()}
                for role, ident in data.get("models", {}).items()
            },
        )
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise BadRecord("the saved claim check", f"{type(exc).__name__}: {exc}") from exc


def settings_for(data: Mapping[str, Any], base: Settings | None = None) -> Settings:
    """``base`` (default settings if None) with the verification thresholds an answer or a
    claim check (schema ``/3``) was made with (its ``thresholds``), so it is shown and written
    again exactly as it was.

    Raises:
        BadRecord: ``thresholds`` is missing or malformed.
    """
    base = base or Settings()
    try:
        t = data["thresholds"]
        verify = dataclasses.replace(
            base.verify,
            support_threshold=t["support"],
            contradict_threshold=t["contradict"],
            abstain_threshold=t["abstain"],
            recite=bool(t["recite"]),
            conflict_search=bool(t["conflict_search"]),
            conflict_budget=int(t["conflict_budget"]),
            second_opinion=bool(t.get("second_opinion", False)),  # absent before answer/4
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BadRecord("the saved answer's thresholds", f"{type(exc).__name__}: {exc}") from exc
    return dataclasses.replace(base, verify=verify)
