"""Reading an audit record from a file the user gives: size and depth limits first, then every
field of the schema checked for presence and type, so that a damaged or hand-made record is one
clear :class:`~verifai_desktop.errors.BadRecord`, never a ``KeyError`` or ``RecursionError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verifai_desktop.audit.record import AUDIT_SCHEMA
from verifai_desktop.domain import ShownLabel
from verifai_desktop.errors import BadRecord
from verifai_desktop.names import name_from_json

MAX_RECORD_BYTES = 32 * 1024 * 1024
"""Largest audit record read (32 MiB; a record of ten long passages is under 100 KiB)."""

MAX_DEPTH = 32
"""Deepest nesting of objects and lists accepted (records nest 7 deep)."""

MAX_FLAGS = 16
"""Most ``flags`` one verdict may carry (each is a check that held it back; there are a
handful of checks)."""

MAX_FLAG_CHARS = 1000
"""Longest flag accepted, in characters (a flag is one sentence for people)."""

_SHOWN = tuple(label.value for label in ShownLabel)

_TEXT = "a text"
_WHOLE = "a whole number"
_NUMBER = "a number"
_BOOL = "true or false"
_OBJECT = "an object"
_LIST = "a list"

_TOP: dict[str, str] = {
    "schema": _TEXT,
    "exported_at": _TEXT,
    "answered_at": _TEXT,
    "app_version": _TEXT,
    "exported_by_version": _TEXT,
    "collection": _TEXT,
    "answer_id": _WHOLE,
    "question": _TEXT,
    "quotes": _LIST,
    "documents": _LIST,
    "models": _OBJECT,
    "thresholds": _OBJECT,
    "settings": _OBJECT,
    "answer_record": _OBJECT,
}
_ANSWER_TOP = {
    "answer": _TEXT,
    "abstained": _BOOL,
    "abstain_reason": _TEXT,
    "sentences": _LIST,
}
_CHECK_TOP = {"check": _OBJECT}
_OPTIONAL_TOP = {"public_key": _TEXT, "signature": _TEXT, "kind": _TEXT}
_CHECK = {
    "claim": _TEXT,
    "candidates": _WHOLE,
    "documents": _LIST,
    "supporting": _LIST,
    "contradicting": _LIST,
}
_CHECK_DOCUMENT = {
    "title": _TEXT,
    "path": _TEXT,
    "label": _TEXT,
    "probability": _NUMBER,
    "verdict": _OBJECT,
}
_CHECK_LABELS = ("SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNSURE")
_QUOTE_ROLES = ("cited", "conflict", "checked")
_SENTENCE = {
    "index": _WHOLE,
    "text": _TEXT,
    "label": _TEXT,
    "probability": _NUMBER,
    "citations": _LIST,
    "cited_by_generator": _LIST,
    "verdicts": _LIST,
    "conflicts": _LIST,
}
_VERDICT = {
    "passage": _WHOLE,
    "label": _TEXT,
    "p_support": _NUMBER,
    "p_contradict": _NUMBER,
    "p_no_evidence": _NUMBER,
    "quote": _TEXT,
}
_QUOTE = {
    "id": _TEXT,
    "role": _TEXT,
    "path": _TEXT,
    "sha256": _TEXT,
    "location": _TEXT,
    "char_start": _WHOLE,
    "char_end": _WHOLE,
    "text": _TEXT,
    "evidence_char_start": _WHOLE,
    "evidence_char_end": _WHOLE,
    "evidence": _TEXT,
}
_DOCUMENT = {"path": _TEXT, "sha256": _TEXT}


def read_record(path: Path) -> dict[str, Any]:
    """Read and validate an audit record written by
    :func:`~verifai_desktop.audit.record.record_to_json`.

    Raises:
        BadRecord: the file is missing, larger than :data:`MAX_RECORD_BYTES`, not UTF-8 JSON,
            nested deeper than :data:`MAX_DEPTH`, or not a valid record of schema
            :data:`AUDIT_SCHEMA` (:func:`validate_record`).
    """
    what = f"audit record {path}"
    try:
        with Path(path).open("rb") as fh:
            raw = fh.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise BadRecord(what, exc.strerror or str(exc)) from exc
    if len(raw) > MAX_RECORD_BYTES:
        raise BadRecord(
            what,
            f"it is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB, far more than any "
            "record VerifAI writes; check that it is the right file",
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadRecord(what, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except RecursionError as exc:
        raise BadRecord(what, _too_deep()) from exc
    except ValueError as exc:
        raise BadRecord(what, f"not JSON ({exc})") from exc
    validate_record(data, what=what)
    return dict(data)


def _too_deep() -> str:
    return f"it nests objects or lists deeper than {MAX_DEPTH} levels; it is not an audit record"


def validate_record(data: object, *, what: str = "the audit record") -> Mapping[str, Any]:
    """Check that ``data`` has every field of an audit record, each of the right type.

    Args:
        data: parsed JSON.
        what: the record, for the error (``"audit record /tmp/a.json"``).

    Returns:
        ``data``, now known to be a valid record.

    A record without ``kind`` is an answer's (``sentences`` and the answer's fields); one
    with ``kind: "check"`` a claim check's (``check``).

    Raises:
        BadRecord: nested deeper than :data:`MAX_DEPTH`, of another schema, a field missing or
            of the wrong type, a verdict's ``shown`` not a shown label, too many or too long
            ``flags``, offsets out of order, or a ``path_bytes_b64`` (the exact bytes of a
            name that is not valid UTF-8) that is not base64; the error names the field.
    """
    _check_depth(data, what)
    if not isinstance(data, dict) or data.get("schema") != AUDIT_SCHEMA:
        schema = data.get("schema") if isinstance(data, dict) else None
        raise BadRecord(what, f"schema {schema!r}, expected {AUDIT_SCHEMA!r}")
    _fields(data, _TOP, "", what)
    _fields(data, _OPTIONAL_TOP, "", what, optional=True)
    if not data["collection"].strip():
        raise BadRecord(what, "field 'collection' is empty; it must name the collection")
    kind = data.get("kind", "answer")
    if kind == "check":
        _fields(data, _CHECK_TOP, "", what)
        _check_fields(data["check"], what)
    elif kind == "answer" and "kind" not in data:
        _fields(data, _ANSWER_TOP, "", what)
        _sentence_fields(data["sentences"], what)
    else:
        raise BadRecord(what, f"field 'kind' is {_kind(kind)}, expected 'check' or no field")
    for i, q in enumerate(data["quotes"]):
        where = f"quotes[{i}]"
        _fields(_object(q, where, what), _QUOTE, where, what)
        _one_of(q["role"], _QUOTE_ROLES, f"{where}.role", what)
        if not 0 <= q["char_start"] <= q["char_end"]:
            raise BadRecord(what, f"'{where}' has characters {q['char_start']}-{q['char_end']}")
        if not 0 <= q["evidence_char_start"] <= q["evidence_char_end"]:
            raise BadRecord(
                what,
                f"'{where}' has evidence characters "
                f"{q['evidence_char_start']}-{q['evidence_char_end']}",
            )
    for i, d in enumerate(data["documents"]):
        _fields(_object(d, f"documents[{i}]", what), _DOCUMENT, f"documents[{i}]", what)
    for where, item in (
        *((f"quotes[{i}]", q) for i, q in enumerate(data["quotes"])),
        *((f"documents[{i}]", d) for i, d in enumerate(data["documents"])),
    ):
        try:
            name_from_json(item, "path")
        except ValueError as exc:
            raise BadRecord(what, f"'{where}': {exc}") from exc
    return data


def _sentence_fields(sentences: list[Any], what: str) -> None:
    """An answer's ``sentences``, each with its citations, verdicts and conflicts."""
    for i, s in enumerate(sentences):
        where = f"sentences[{i}]"
        _fields(_object(s, where, what), _SENTENCE, where, what)
        for key in ("citations", "cited_by_generator"):
            for j, n in enumerate(s[key]):
                _typed(n, _WHOLE, f"{where}.{key}[{j}]", what)
        for key in ("verdicts", "conflicts"):
            for j, v in enumerate(s[key]):
                _verdict_fields(v, f"{where}.{key}[{j}]", what)


def _check_fields(check: Mapping[str, Any], what: str) -> None:
    """A claim check's ``check``: its claim, document verdicts and passages' verdicts."""
    _fields(check, _CHECK, "check", what)
    for i, d in enumerate(check["documents"]):
        where = f"check.documents[{i}]"
        _fields(_object(d, where, what), _CHECK_DOCUMENT, where, what)
        _one_of(d["label"], _CHECK_LABELS, f"{where}.label", what)
        try:
            name_from_json(d, "path")
        except ValueError as exc:
            raise BadRecord(what, f"'{where}': {exc}") from exc
        _verdict_fields(d["verdict"], f"{where}.verdict", what)
    for key in ("supporting", "contradicting"):
        for j, v in enumerate(check[key]):
            _verdict_fields(v, f"check.{key}[{j}]", what)


def _one_of(value: object, allowed: tuple[str, ...], name: str, what: str) -> None:
    if value not in allowed:
        raise BadRecord(
            what, f"field '{name}' is {_kind(value)}, expected one of {', '.join(allowed)}"
        )


def _verdict_fields(verdict: object, where: str, what: str) -> None:
    checked = _object(verdict, where, what)
    _fields(checked, _VERDICT, where, what)
    _shown_and_flags(checked, where, what)


def _shown_and_flags(verdict: Mapping[str, Any], where: str, what: str) -> None:
    """A verdict's optional ``shown`` (a :class:`ShownLabel` value or null) and ``flags``
    (texts, at most :data:`MAX_FLAGS` of at most :data:`MAX_FLAG_CHARS` characters); records
    of verdicts made before shown labels have neither."""
    shown = verdict.get("shown")
    if shown is not None and shown not in _SHOWN:
        raise BadRecord(
            what,
            f"field '{where}.shown' is {_kind(shown)}, expected one of {', '.join(_SHOWN)} or null",
        )
    if "flags" not in verdict:
        return
    flags = verdict["flags"]
    _typed(flags, _LIST, f"{where}.flags", what)
    if len(flags) > MAX_FLAGS:
        raise BadRecord(
            what, f"field '{where}.flags' holds {len(flags)} flags, more than {MAX_FLAGS}"
        )
    for k, flag in enumerate(flags):
        _typed(flag, _TEXT, f"{where}.flags[{k}]", what)
        if len(flag) > MAX_FLAG_CHARS:
            raise BadRecord(
                what,
                f"field '{where}.flags[{k}]' is {len(flag)} characters long, more than "
                f"{MAX_FLAG_CHARS}",
            )


def _check_depth(data: object, what: str) -> None:
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadRecord(what, _too_deep())
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def _object(value: object, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise BadRecord(what, f"field '{where}' is {_kind(value)}, expected an object")
    return value


def _fields(
    data: Mapping[str, Any],
    spec: Mapping[str, str],
    where: str,
    what: str,
    *,
    optional: bool = False,
) -> None:
    for key, expected in spec.items():
        name = f"{where}.{key}" if where else key
        if key not in data:
            if optional:
                continue
            raise BadRecord(what, f"field '{name}' is missing")
        _typed(data[key], expected, name, what)


def _typed(value: object, expected: str, name: str, what: str) -> None:
    ok = {
        _TEXT: isinstance(value, str),
        _WHOLE: isinstance(value, int) and not isinstance(value, bool),
        _NUMBER: isinstance(value, int | float) and not isinstance(value, bool),
        _BOOL: isinstance(value, bool),
        _OBJECT: isinstance(value, dict),
        _LIST: isinstance(value, list),
    }[expected]
    if not ok:
        raise BadRecord(what, f"field '{name}' is {_kind(value)}, expected {expected}")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return f"a text ({shown!r})"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    return "a list" if isinstance(value, list) else "an object"
