"""Checking an audit record whole (an answer's or a claim check's): its signature, its own
consistency, the collection's history and the documents it quotes.

:func:`check_record` reports, as :class:`Problem`\\ s:

- the signature (:mod:`verifai_desktop.audit.signing`): missing, not matching the content, or
  made with another key than the one required; it also says whose key signed (this install's
  or another one's);
- every field the record derives from the answer it holds (``answer_record``): the answer
  text, each sentence's label and probability, each verdict and each quote are built again
  from it and compared, so an edit of one without the other is named field by field;
- quotes removed while verdicts still cite them, and documents recorded without a sha256;
- when the collection's history still holds the answer: the record built again from that
  entry, compared field by field (this catches an answer edited whole and re-signed with
  another key);
- the documents: each quoted span and evidence window is read again at its offsets, in a
  document with the same sha256, read as the ingest read it: text recognised by OCR names its
  engine and version in the record (``answer_record``'s passages), and the document is read
  again with that engine (resolution and limits from the record's settings). When the file is
  unchanged (same sha256) but reading it again gives other text (another OCR version, the
  engine missing here), the quotes are compared with the text the collection stored at ingest
  and a note says so; without the collection, ``not_reread`` says the quote could not be
  confirmed, never that the document was edited.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verifai_desktop.audit.documents import Problem, ProblemKind, check_documents, own_saved
from verifai_desktop.audit.record import unsigned_record
from verifai_desktop.audit.signing import (
    PUBLIC_KEY_FIELD,
    fingerprint,
    install_public_key,
    known_keys,
    signature_holds,
)
from verifai_desktop.audit.validate import validate_record
from verifai_desktop.errors import BadRecord
from verifai_desktop.names import name_from_json
from verifai_desktop.store.history import SavedAnswer
from verifai_desktop.store.sources import is_file_source

__all__ = ["CheckReport", "Problem", "ProblemKind", "Signer", "check_record"]

Signer = Literal["this install", "this install (earlier key)", "another install", "nobody"]

_NOT_COMPARED = ("exported_at", "exported_by_version", "public_key", "signature")
_MAX_DIFFS = 12


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What :func:`check_record` found.

    Attributes:
        quotes_checked: quoted spans compared with their documents.
        documents_checked: distinct documents read.
        problems: everything edited or no longer matching; empty when the record holds.
        signer: whose key made a valid signature (``nobody``: none, or it does not hold).
        public_key: the public key the record names ('' when none).
        history: how the record compared with the collection's history, for people.
        notes: how quotes were checked other than by reading the file again (compared with
            the collection's stored text, and why), for people.
    """

    quotes_checked: int
    documents_checked: int
    problems: tuple[Problem, ...]
    signer: Signer = "nobody"
    public_key: str = ""
    history: str = "not compared"
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when nothing was edited and every quoted span reads the same."""
        return not self.problems


def check_record(
    record: Mapping[str, Any],
    *,
    catalog_sha256: Mapping[str, str] | None = None,
    saved: SavedAnswer | None = None,
    history_note: str = "not compared",
    require_key: str | None = None,
    timeout_s: float = 60.0,
    stored_text: Mapping[str, Sequence[tuple[int, int, str]]] | None = None,
) -> CheckReport:
    """Check ``record`` whole: signature, consistency, history, documents.

    Args:
        record: an audit record (:func:`~verifai_desktop.audit.record.build_record` or
            :func:`~verifai_desktop.audit.validate.read_record`).
        catalog_sha256: path -> sha256 of the documents the collection holds now, or None
            not to compare with the collection.
        saved: the collection's history entry of the record's answer id, or None when
            there is none to compare with (``history_note`` says why).
        history_note: why there is no history entry to compare with.
        require_key: a public key (``"ed25519:..."``) the record must be signed with.
        timeout_s: wall-clock limit in seconds for hashing and for parsing each document.
        stored_text: path -> ``(char_start, char_end, text)`` of each chunk the collection
            stored at ingest for that document, offsets into its extracted text; only for
            documents the collection holds in the version the record quotes (same sha256).
            None: no collection to compare with.

    Raises:
        BadRecord: ``record`` is not a valid audit record (a field missing or mistyped).
        AuditKeyError: this install's key file is damaged.
    """
    validate_record(record)
    problems: list[Problem] = []
    signer, public_key = _check_signature(record, require_key, problems)
    problems += _check_consistency(record)
    history = history_note
    if saved is not None:
        found = _diffs(record, _rebuilt(saved, record), "the collection's history")
        history = f"differs from answer {saved.answer_id} in the collection's history"
        if not found:
            history = f"the same as answer {saved.answer_id} in the collection's history"
        problems += [Problem("history_differs", "", d) for d in found]
    notes: list[str] = []
    checked, documents = check_documents(
        record, catalog_sha256, timeout_s, problems, stored_text, notes
    )
    return CheckReport(
        checked, documents, tuple(problems), signer, public_key, history, tuple(notes)
    )


def _check_signature(
    record: Mapping[str, Any], require_key: str | None, problems: list[Problem]
) -> tuple[Signer, str]:
    public_key = str(record.get(PUBLIC_KEY_FIELD, ""))
    holds = signature_holds(record)
    signer: Signer = "nobody"
    if holds is None:
        problems.append(
            Problem(
                "unsigned",
                "",
                "the record carries no signature (or no public key): any field of it may have "
                "been edited unnoticed",
            )
        )
    elif not holds:
        problems.append(
            Problem(
                "signature_invalid",
                "",
                "the signature does not match the content: a field (the answer, a label, a "
                "probability, a quote...) was changed, added or removed after it was signed",
            )
        )
    else:
        own = install_public_key(create=False)
        if public_key == own:
            signer = "this install"
        elif public_key in known_keys():
            signer = "this install (earlier key)"
        else:
            signer = "another install"
            if require_key is None:
                problems.append(
                    Problem(
                        "unknown_key",
                        "",
                        f"not verified: it is signed by a key this install does not know "
                        f"(fingerprint {fingerprint(public_key)}); the signature holds, but "
                        "anyone can sign an edited record with a key of their own. Check it "
                        "with --key and the public key of the install that exported it "
                        "(`verifai audit key` there)",
                    )
                )
    if require_key is not None and public_key != require_key:
        problems.append(
            Problem(
                "wrong_key",
                "",
                f"it names the key {public_key or 'none'}, not the key required ({require_key})",
            )
        )
    return signer, public_key


def _rebuilt(saved: SavedAnswer, record: Mapping[str, Any]) -> dict[str, Any]:
    return unsigned_record(saved, collection=str(record["collection"]))


def _check_consistency(record: Mapping[str, Any]) -> list[Problem]:
    """The fields derived from ``answer_record`` against that answer, and the quote links."""
    problems: list[Problem] = []
    own = own_saved(record)
    try:
        rebuilt = _rebuilt(own, record)
    except (BadRecord, KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        reason = exc.reason if isinstance(exc, BadRecord) else f"{type(exc).__name__}: {exc}"
        problems.append(
            Problem("edited", "", f"the answer it holds (answer_record) cannot be read: {reason}")
        )
    else:
        skipped = ("answered_at", "app_version", "settings", "documents")
        found = _diffs(record, rebuilt, "the answer it holds (answer_record)", skipped)
        problems += [Problem("edited", "", d) for d in found]
    held = {q["id"] for q in record["quotes"]}
    cited = [(where, quote) for where, quote in _quote_refs(record) if quote and quote not in held]
    if cited:
        ids = ", ".join(dict.fromkeys(q for _, q in cited))
        where, quote = cited[0]
        problems.append(
            Problem(
                "quotes_missing",
                "",
                f"{len(cited)} verdict(s) cite quotes the record does not hold ({ids}; {where} "
                f"through {quote}): its quotes were removed",
            )
        )
    for path in dict.fromkeys(
        name_from_json(q, "path") for q in record["quotes"] if not q["sha256"]
    ):
        if is_file_source(path):
            problems.append(
                Problem(
                    "no_hash",
                    path,
                    "the record gives no sha256 for this document, so the file read now cannot "
                    "be matched with the one quoted",
                )
            )
    return problems


def _quote_refs(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(what cites it, quote id) of every verdict of the record: an answer's sentences'
    verdicts and conflicts, a claim check's document verdicts and passages."""
    if record.get("kind") == "check":
        check = record["check"]
        refs = [
            (f"the verdict of document {i + 1} of the check", d["verdict"]["quote"])
            for i, d in enumerate(check["documents"])
        ]
        for key in ("supporting", "contradicting"):
            refs += [
                (f"{key} passage {j + 1} of the check", v["quote"])
                for j, v in enumerate(check[key])
            ]
        return refs
    return [
        (f"sentence {i + 1} cites passage [{v['passage']}]", v["quote"])
        for i, s in enumerate(record["sentences"])
        for v in (*s["verdicts"], *s["conflicts"])
    ]


def _diffs(
    record: Mapping[str, Any],
    expected: Mapping[str, Any],
    source: str,
    skipped: tuple[str, ...] = (),
) -> list[str]:
    out: list[str] = []
    for key in dict.fromkeys([*expected, *record]):
        if key in _NOT_COMPARED or key in skipped:
            continue
        _diff(record.get(key, _ABSENT), expected.get(key, _ABSENT), key, source, out)
    if len(out) > _MAX_DIFFS:
        out[_MAX_DIFFS:] = [f"and {len(out) - _MAX_DIFFS} more fields differ from {source}"]
    return out


_ABSENT = object()


def _diff(got: object, want: object, path: str, source: str, out: list[str]) -> None:
    if len(out) > _MAX_DIFFS:
        return
    if isinstance(got, dict) and isinstance(want, dict):
        for key in dict.fromkeys([*want, *got]):
            _diff(got.get(key, _ABSENT), want.get(key, _ABSENT), f"{path}.{key}", source, out)
        return
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            out.append(
                f"{_describe(path)}: {len(got)} item(s) in the record, {len(want)} in {source}"
            )
            return
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _diff(g, w, f"{path}[{i}]", source, out)
        return
    if type(got) is type(want) and got == want:
        return
    out.append(f"{_describe(path)}: {_show(got)} in the record, {_show(want)} in {source}")


_SENTENCE_FIELD = re.compile(r"^sentences\[(\d+)\]\.(\w+)(?:\[(\d+)\]\.(\w+))?")
_QUOTE_FIELD = re.compile(r"^quotes\[(\d+)\]\.(\w+)")


def _describe(path: str) -> str:
    """``path`` with what it means for people (``sentences[1].label`` -> the label of
    sentence 2)."""
    if path == "answer":
        return "the answer text (answer)"
    if path == "quotes":
        return "the quoted spans (quotes)"
    m = _SENTENCE_FIELD.match(path)
    if m:
        sentence = int(m.group(1)) + 1
        if m.group(3) is not None:
            return (
                f"the {m.group(4)} of verdict {int(m.group(3)) + 1} of sentence {sentence} ({path})"
            )
        return f"the {m.group(2)} of sentence {sentence} ({path})"
    m = _QUOTE_FIELD.match(path)
    if m:
        field = m.group(2)
        moved = field in ("char_start", "char_end", "evidence_char_start", "evidence_char_end")
        what = "moved to other offsets" if moved else f"its {field} changed"
        return f"quoted span {int(m.group(1)) + 1} ({path}, {what})"
    return path


def _show(value: object) -> str:
    if value is _ABSENT:
        return "nothing"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 100 else text[:99] + "…"
