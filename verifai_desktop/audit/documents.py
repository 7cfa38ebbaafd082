"""The documents part of an audit check: each quoted span read again in its document, as the
ingest read it.

A document is read again in the ingest's parser worker with the OCR engine its quoted text was
recognised by (the record's ``answer_record`` passages name the engine and its version; the
resolution and limits come from the record's settings). When the file is unchanged (same
sha256) but reading it again gives other text (another OCR version, the engine missing here,
another parser version), the quotes are compared with the text the collection stored at ingest
and a note says so; without the collection, ``not_reread`` says the quote could not be
confirmed, never that the document was edited.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from verifai_desktop.domain import Passage
from verifai_desktop.errors import BadRecord, ParseError
from verifai_desktop.names import name_from_json
from verifai_desktop.settings import IngestSettings
from verifai_desktop.store.history import SavedAnswer
from verifai_desktop.store.sources import is_file_source

if TYPE_CHECKING:  # OCR and the parsers load when documents are read
    from verifai_desktop.ingest.ocr import OcrOptions

ProblemKind = Literal[
    "unsigned",
    "signature_invalid",
    "wrong_key",
    "unknown_key",
    "edited",
    "quotes_missing",
    "no_hash",
    "history_differs",
    "missing",
    "unreadable",
    "hash_changed",
    "text_changed",
    "not_reread",
    "not_in_collection",
]


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a record was edited, or no longer matches the documents.

    Attributes:
        kind: ``unsigned`` (no signature), ``signature_invalid`` (the content was changed
            after signing), ``wrong_key`` (signed by another key than the one required),
            ``unknown_key`` (the signature holds, but the key is neither this install's
            nor the one ``--key`` names: not verified), ``edited`` (a field disagrees with
            the answer the record holds),
            ``quotes_missing`` (verdicts cite quotes the record does not hold), ``no_hash``
            (a document recorded without its sha256), ``history_differs`` (a field differs
            from the collection's history of the answer), ``missing`` (the file is gone),
            ``unreadable`` (it cannot be parsed now, and its sha256 differs or is not
            recorded), ``hash_changed`` (its sha256 differs), ``text_changed`` (a quoted
            span reads differently at its offsets, in the file or in the text the collection
            stored), ``not_reread`` (the file is unchanged, but reading it again gives other
            text, e.g. another OCR version, and there is no stored text to compare with: not
            confirmed, not a sign of an edit), ``not_in_collection`` (the collection no
            longer holds it, or holds another version).
        path: the document, its exact name ('' for the record as a whole).
        detail: what differs, for people.
        quote_id: the quote concerned ('' for the document as a whole).
    """

    kind: ProblemKind
    path: str
    detail: str
    quote_id: str = ""


def own_saved(record: Mapping[str, Any]) -> SavedAnswer:
    """The answer (or claim check) the record holds, as a history entry."""
    return SavedAnswer(
        answer_id=record["answer_id"],
        created=0.0,
        question=record["question"],
        answer_json=json.dumps(record["answer_record"]),
        settings=record["settings"],
        documents={name_from_json(d, "path"): d["sha256"] for d in record["documents"]},
        app_version=record["app_version"],
    )


def check_documents(
    record: Mapping[str, Any],
    catalog_sha256: Mapping[str, str] | None,
    timeout_s: float,
    problems: list[Problem],
    stored_text: Mapping[str, Sequence[tuple[int, int, str]]] | None,
    notes: list[str],
) -> tuple[int, int]:
    """Each quoted span against its document now (the documents part of
    :func:`~verifai_desktop.audit.check.check_record`, whose arguments these are; findings
    appended to ``problems`` and ``notes``).

    Returns:
        (quotes checked, documents quoted).
    """
    from verifai_desktop.ingest.parse import ParserPool

    by_path: dict[str, list[Mapping[str, Any]]] = {}
    for q in record["quotes"]:
        by_path.setdefault(name_from_json(q, "path"), []).append(q)
    readings = _readings(record)
    checked = 0
    with ParserPool(timeout_s=timeout_s) as pool:
        for path, items in by_path.items():
            recorded = str(items[0]["sha256"])
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
            unchanged = bool(recorded) and now == recorded
            if recorded and not unchanged:
                problems.append(
                    Problem(
                        "hash_changed",
                        path,
                        f"sha256 was {recorded[:12]}…, is {now[:12]}…: the file has changed",
                    )
                )
            reading = readings.get(path, _NONE)
            pool.ocr = reading.options
            try:
                text = pool.parse(file).text
            except ParseError as exc:
                if not unchanged:
                    problems.append(Problem("unreadable", path, exc.reason))
                    continue
                differ = list(items)
                cause = f"it cannot be read again here ({exc.reason})"
            else:
                found = [(q, _compare(path, q, _reader(text))) for q in items]
                differ = [q for q, problem in found if problem is not None]
                cause = reading.differs() if differ and unchanged else ""
                if not unchanged:  # an edited file (or no hash): the differences are real
                    problems += [problem for _, problem in found if problem is not None]
                    differ = []
            checked += len(items)
            if differ:
                spans = None if stored_text is None else stored_text.get(path)
                _check_stored(path, differ, cause, reading, spans, problems, notes)
    return checked, len(by_path)


@dataclass(frozen=True, slots=True)
class _Reading:
    """How the ingest read a document, as far as the record tells.

    Attributes:
        options: the OCR options to read it again with (None: OCR off).
        engine: the OCR engine that read its quoted text ('' when none of it was recognised).
        version: that engine's version at ingest ('' when not recorded).
    """

    options: OcrOptions | None
    engine: str
    version: str

    def differs(self) -> str:
        """Why reading the same file again may give other text, for people."""
        if not self.engine:
            return "reading it again gives other text at these offsets (another parser version?)"
        from verifai_desktop.ingest.ocr import ENGINES, get_engine

        here = get_engine(self.engine).version() if self.engine in ENGINES else ""
        at_ingest = f"{self.engine} {self.version}" if self.version else self.engine
        if not here:
            now = f"{self.engine} is not installed here"
        elif self.version and here != self.version:
            now = f"{self.engine} {here} here"
        else:
            now = f"{self.engine} {here} here too (other OCR settings at ingest?)"
        return f"OCR reads it differently now ({at_ingest} at ingest, {now})"


_NONE = _Reading(None, "", "")


def _readings(record: Mapping[str, Any]) -> dict[str, _Reading]:
    """Path -> how to read each quoted document again as its ingest did: the engine (and its
    version) of the OCR text its passages hold, the resolution and limits of the record's
    ingest settings (the defaults where they are missing or mistyped)."""
    from verifai_desktop.ingest.ocr import ENGINES, OcrOptions

    ingest = record["settings"].get("ingest") if isinstance(record["settings"], Mapping) else None
    ingest = ingest if isinstance(ingest, Mapping) else {}
    defaults = IngestSettings()

    def whole(key: str, default: int) -> int:
        value = ingest.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else default

    engine = ingest.get("ocr_engine")
    base = OcrOptions(
        engine if isinstance(engine, str) and engine in ENGINES else "off",
        whole("ocr_dpi", defaults.ocr_dpi),
        whole("ocr_max_pixels", defaults.ocr_max_pixels),
        whole("ocr_max_pages", defaults.ocr_max_pages),
    )
    found: dict[str, _Reading] = {}
    for p in _record_passages(record):
        path = str(p.path)
        if p.ocr is not None and p.ocr.engine in ENGINES and not found.get(path, _NONE).engine:
            options = OcrOptions(p.ocr.engine, base.dpi, base.max_pixels, base.max_pages)
            found[path] = _Reading(options, p.ocr.engine, p.ocr.version)
        found.setdefault(path, _Reading(base, "", ""))
    return found


def _record_passages(record: Mapping[str, Any]) -> list[Passage]:
    """Every passage of the answer or claim check the record holds (none when it cannot be
    read: :func:`_check_consistency` reports that)."""
    saved = own_saved(record)
    try:
        if saved.kind == "check":
            result = saved.check()
            return [
                *(d.evidence.passage for d in result.documents),
                *(e.passage for e in (*result.supporting, *result.contradicting)),
            ]
        answer = saved.answer()
    except (BadRecord, KeyError, TypeError, ValueError, IndexError, AttributeError):
        return []
    return [*answer.passages, *(e.passage for s in answer.sentences for e in s.conflicts)]


def _check_stored(
    path: str,
    differ: Sequence[Mapping[str, Any]],
    cause: str,
    reading: _Reading,
    spans: Sequence[tuple[int, int, str]] | None,
    problems: list[Problem],
    notes: list[str],
) -> None:
    """The quotes ``differ`` of an unchanged file that reads differently now, against the
    text the collection stored at ingest (``spans``), or ``not_reread`` without it."""
    if spans is None:
        engine = f" with {reading.engine} {reading.version}".rstrip() if reading.engine else ""
        problems.append(
            Problem(
                "not_reread",
                path,
                f"the file is unchanged (same sha256), but {cause}, so {len(differ)} quoted "
                "span(s) could not be confirmed; this is not a sign that it was edited: check "
                f"on a machine that holds its collection, or read it{engine} as its ingest did",
            )
        )
        return
    found = [p for q in differ if (p := _compare(path, q, _stored_reader(spans), stored=True))]
    problems += found
    if not found:
        notes.append(
            f"{path}: the file is unchanged (same sha256), but {cause}; its {len(differ)} "
            "quoted span(s) were compared with the text the collection stored at ingest, and "
            "read the same"
        )


Reader = Callable[[int, int], "str | None"]
"""The text at ``[start, end)`` of a document's extracted text, None when it is not known."""


def _reader(text: str) -> Reader:
    return lambda start, end: text[start:end]


def _stored_reader(spans: Sequence[tuple[int, int, str]]) -> Reader:
    """Reads the stored chunks ``(char_start, char_end, text)``: a span inside one of them."""

    def read(start: int, end: int) -> str | None:
        for chunk_start, chunk_end, text in spans:
            if chunk_start <= start and end <= chunk_end:
                return text[start - chunk_start : end - chunk_start]
        return None

    return read


def _compare(
    path: str, quote: Mapping[str, Any], read: Reader, *, stored: bool = False
) -> Problem | None:
    spans = (
        ("passage", quote["char_start"], quote["char_end"], quote["text"]),
        ("evidence", quote["evidence_char_start"], quote["evidence_char_end"], quote["evidence"]),
    )
    where = " in the text the collection stored at ingest" if stored else ""
    for what, start, end, expected in spans:
        found = read(start, end)
        if found is None:
            return Problem(
                "text_changed",
                path,
                f"the collection stored no text at characters {start}-{end} (the {what})",
                quote["id"],
            )
        if found != expected:
            # the evidence lies inside the passage: one finding per quote
            first, now, was = differing_windows(found, expected)
            return Problem(
                "text_changed",
                path,
                f"the {what} at characters {start}-{end}{where} differs from character "
                f"{start + first} on: it now reads “{now}”, was “{was}”",
                quote["id"],
            )
    return None


DIFF_CONTEXT_BEFORE = 30
"""Characters shown before the first difference of a quote that reads differently."""
DIFF_CONTEXT_AFTER = 50
"""Characters shown from the first difference on (more where the two differ longer)."""


def differing_windows(now: str, was: str) -> tuple[int, str, str]:
    """Where two versions of a span first differ, and each version around that place.

    Each window starts :data:`DIFF_CONTEXT_BEFORE` characters before the first difference
    and runs :data:`DIFF_CONTEXT_AFTER` characters past it, or to the common ending of the
    two when the differing part is longer (at most twice that); text cut off is marked
    "…", line breaks and tabs are shown as ``\\n`` and ``\\t``.

    Args:
        now: the span as it reads now.
        was: the span as the record quotes it; differs from ``now``.

    Returns:
        ``(offset, now_window, was_window)``: the offset of the first differing character
        into both spans (the length of the shorter when one begins the other), and the
        windows.
    """
    first = next(
        (i for i, (a, b) in enumerate(zip(now, was, strict=False)) if a != b),
        min(len(now), len(was)),
    )
    common_end = 0  # characters both end with, after the first difference
    limit = min(len(now), len(was)) - first
    while common_end < limit and now[-1 - common_end] == was[-1 - common_end]:
        common_end += 1
    start = max(0, first - DIFF_CONTEXT_BEFORE)

    def window(text: str) -> str:
        differing = len(text) - common_end - first
        end = first + min(max(DIFF_CONTEXT_AFTER, differing + 10), 2 * DIFF_CONTEXT_AFTER)
        shown = text[start:end].replace("\n", "\\n").replace("\t", "\\t")
        return ("…" if start > 0 else "") + shown + ("…" if end < len(text) else "")

    return first, window(now), window(was)
