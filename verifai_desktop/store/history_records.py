"""The records of the answer history (:mod:`verifai_desktop.store.history`): a saved answer or
claim check, a reader's judgement of a verdict, a quoted document that changed, and how each is
read from its row, so that one unreadable row is reported and skipped instead of stopping a
listing.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verifai_desktop.codec import answer_from_dict, check_from_dict, settings_for
from verifai_desktop.domain import Answer, CheckResult, NliLabel
from verifai_desktop.errors import BadRecord
from verifai_desktop.settings import Settings

ANSWER_COLUMNS = (
    "created",
    "question",
    "answer_json",
    "settings_json",
    "documents_json",
    "app_version",
)
"""The columns of ``answers`` after ``answer_id``, in the order :class:`SavedAnswer` reads."""

FEEDBACK_COLUMNS = (
    "answer_id",
    "sentence",
    "passage",
    "shown",
    "verdict",
    "label",
    "note",
    "created",
)
"""The columns of ``feedback`` after ``feedback_id``, in the order :class:`Feedback` reads."""

EntryKind = Literal["answer", "check"]
"""What a history entry holds: a verified ``answer`` (its JSON of schema ``verifai.answer/N``)
or a claim ``check`` (``verifai.check/N``)."""

CHECK_SCHEMA_PREFIX = "verifai.check/"
"""The start of the ``schema`` of every claim check's JSON; an entry whose JSON has another
schema is an answer."""

FeedbackVerdict = Literal["right", "wrong", "flagged"]
"""What a reader said of a verdict: ``right``; ``wrong`` (with the correct label when they
gave one); ``flagged`` (the sentence is wrong or harmful in some other way)."""

FEEDBACK_VERDICTS: tuple[FeedbackVerdict, ...] = ("right", "wrong", "flagged")


@dataclass(frozen=True, slots=True)
class SavedAnswer:
    """One entry of the history: a verified answer or a claim check (:attr:`kind`).

    Attributes:
        answer_id: its id in the collection's history (1, 2, ...; never reused).
        created: when it was answered or checked (seconds since the epoch, UTC).
        question: the question asked, or the claim checked.
        answer_json: the JSON exactly as written when it was verified: ``verifai.answer``
            (:func:`~verifai_desktop.codec.answer_to_json`) for an answer, ``verifai.check``
            (:func:`~verifai_desktop.codec.check_to_json`) for a claim check.
        settings: the settings in effect (``dataclasses.asdict(Settings)`` without ``ui``).
        documents: path (or benchmark key) -> sha256 of every document the entry quotes
            (an answer's passages given and conflicting passages; every passage a check
            lists), as catalogued when it was made.
        app_version: the VerifAI Desktop version that answered.
    """

    answer_id: int
    created: float
    question: str
    answer_json: str
    settings: Mapping[str, Any]
    documents: Mapping[str, str]
    app_version: str

    def data(self) -> dict[str, Any]:
        """The answer's JSON, parsed.

        Raises:
            BadRecord: the stored text is not JSON.
        """
        try:
            data = json.loads(self.answer_json)
        except ValueError as exc:
            raise BadRecord(f"saved answer {self.answer_id}", str(exc)) from exc
        if not isinstance(data, dict):
            raise BadRecord(f"saved answer {self.answer_id}", "it is not a JSON object")
        return data

    @property
    def kind(self) -> EntryKind:
        """``"check"`` when the entry is a claim check (its JSON's schema), else ``"answer"``;
        a JSON that cannot be read counts as an answer (which :meth:`answer` then refuses)."""
        try:
            return "check" if _is_check(self.data()) else "answer"
        except BadRecord:
            return "answer"

    def answer(self) -> Answer:
        """The answer as it was verified (labels, verdicts, evidence, passages).

        Raises:
            BadRecord: the entry is a claim check (:meth:`check`), or the stored JSON is
                damaged or of an unknown schema.
        """
        data = self.data()
        if _is_check(data):
            raise BadRecord(f"saved answer {self.answer_id}", "it is a claim check, not an answer")
        return answer_from_dict(data)

    def check(self) -> CheckResult:
        """The claim check as it was made (document verdicts, evidence, passages, models).

        Raises:
            BadRecord: the entry is an answer (:meth:`answer`), or the stored JSON is
                damaged or of an unknown schema.
        """
        data = self.data()
        if not _is_check(data):
            raise BadRecord(f"saved answer {self.answer_id}", "it is an answer, not a claim check")
        return check_from_dict(data)

    def answer_settings(self, base: Settings | None = None) -> Settings:
        """``base`` with the thresholds the answer (or check) was verified with (to show it
        again).

        Raises:
            BadRecord: the stored JSON lacks its thresholds.
        """
        return settings_for(self.data(), base)

    def when(self) -> str:
        """Local time of the answer, ``"2026-11-25 14:03"``."""
        return dt.datetime.fromtimestamp(self.created).strftime("%Y-%m-%d %H:%M")


@dataclass(frozen=True, slots=True)
class Feedback:
    """A reader's judgement of one verdict of a saved answer.

    Attributes:
        answer_id: the saved answer.
        sentence: 0-based index into the answer's sentences.
        passage: the citation number whose verdict is judged; 0 for the sentence as a whole.
        shown: the label shown (an :class:`~verifai_desktop.domain.NliLabel` value for a
            verdict, a sentence label value for the sentence).
        verdict: ``right``, ``wrong`` or ``flagged``.
        label: the correct NLI label when ``wrong`` and the reader gave one, else None.
        note: free text ('' when none).
        created: when it was given (seconds since the epoch).
    """

    answer_id: int
    sentence: int
    passage: int
    shown: str
    verdict: FeedbackVerdict
    label: NliLabel | None = None
    note: str = ""
    created: float = 0.0

    @property
    def training_label(self) -> NliLabel | None:
        """The NLI label this judgement teaches: the shown verdict when ``right``, the one
        given when ``wrong``; None for a flag or a ``wrong`` without a label."""
        if self.verdict == "right" and self.passage > 0:
            return NliLabel(self.shown)
        if self.verdict == "wrong":
            return self.label
        return None


@dataclass(frozen=True, slots=True)
class DocumentChange:
    """A document an answer quotes that no longer reads as it did.

    Attributes:
        path: the document (as recorded).
        recorded_sha256: its sha256 when the answer was made.
        current_sha256: its sha256 now ('' when it is missing or unreadable).
        reason: ``"changed"`` or ``"missing"``.
    """

    path: str
    recorded_sha256: str
    current_sha256: str
    reason: Literal["changed", "missing"]


@dataclass(frozen=True, slots=True)
class AnswerScan:
    """The answers of a history as read
    (:meth:`~verifai_desktop.store.history.History.scan`).

    Attributes:
        answers: every saved answer that could be read, newest first.
        unreadable: ``(answer id, why)`` of each answer that could not be read, newest first.
    """

    answers: tuple[SavedAnswer, ...]
    unreadable: tuple[tuple[int, str], ...]


def _is_check(data: Mapping[str, Any]) -> bool:
    return str(data.get("schema", "")).startswith(CHECK_SCHEMA_PREFIX)


def saved_answer(row: Sequence[object]) -> SavedAnswer:
    """A :class:`SavedAnswer` from a row ``(answer_id, *ANSWER_COLUMNS)``.

    Raises:
        BadRecord: a value of the wrong type, or a JSON column that is not a JSON object.
    """
    answer_id = row[0]
    what = f"saved answer {answer_id}"
    texts = (row[2], row[3], row[4], row[5], row[6])
    if not isinstance(answer_id, int) or not isinstance(row[1], int | float):
        raise BadRecord(what, "its id or time is not a number")
    if not all(isinstance(t, str) for t in texts):
        raise BadRecord(what, "a text column holds another kind of value")
    parsed: list[dict[str, Any]] = []
    for name, text in (("answer", row[3]), ("settings", row[4]), ("documents", row[5])):
        try:
            value = json.loads(str(text))
        except ValueError as exc:
            raise BadRecord(what, f"its {name} JSON is damaged ({exc})") from exc
        if not isinstance(value, dict):
            raise BadRecord(what, f"its {name} JSON is not an object")
        parsed.append(value)
    return SavedAnswer(
        answer_id, float(row[1]), str(row[2]), str(row[3]), parsed[1], parsed[2], str(row[6])
    )


def feedback_from_row(row: Sequence[Any]) -> Feedback:
    """A :class:`Feedback` from a row of :data:`FEEDBACK_COLUMNS`.

    Raises:
        ValueError, TypeError: a value of the wrong type or an unknown verdict or label.
    """
    if row[4] not in FEEDBACK_VERDICTS:
        raise ValueError(f"unknown verdict {row[4]!r}")
    return Feedback(
        answer_id=int(row[0]),
        sentence=int(row[1]),
        passage=int(row[2]),
        shown=str(row[3]),
        verdict=row[4],
        label=None if row[5] is None else NliLabel(row[5]),
        note=str(row[6]),
        created=float(row[7]),
    )
