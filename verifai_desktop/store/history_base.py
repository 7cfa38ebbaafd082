"""The answer history's contract, :class:`AnswerHistory`, and what its implementations share.

Two stores keep a collection's history: the embedded one in ``history.sqlite`` beside the
collection (:class:`~verifai_desktop.store.history.History`) and the PostgreSQL one in tables
of the collection's schema, each row visible to the role that asked alone
(:class:`~verifai_desktop.store.pg.history.PgHistory`). The records they hold
(:class:`~verifai_desktop.store.history_records.SavedAnswer`,
:class:`~verifai_desktop.store.history_records.Feedback`) and the rules for writing them are
the same, so they are held here once: how an entry becomes the values of a row
(:meth:`AnswerHistory.add`), which judgements may be recorded
(:meth:`AnswerHistory.set_feedback`), how a listing skips a row it cannot read
(:func:`scan_ids`) and how judgement rows are read (:func:`read_feedback`). Each
implementation writes and reads its rows.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self

from verifai_desktop import __version__
from verifai_desktop.codec import answer_to_json, check_to_json
from verifai_desktop.domain import Answer, CheckResult
from verifai_desktop.errors import BadRecord, HistoryNotFound
from verifai_desktop.names import valid_utf8
from verifai_desktop.settings import Settings
from verifai_desktop.store.history_records import (
    FEEDBACK_VERDICTS,
    AnswerScan,
    Feedback,
    SavedAnswer,
    feedback_from_row,
)

log = logging.getLogger(__name__)

AnswerRow = tuple[float, str, str, str, str, str]
"""The values of a new entry's row, in the order of
:data:`~verifai_desktop.store.history_records.ANSWER_COLUMNS`."""

FeedbackRow = tuple[int, int, int, str, str, str | None, str, float]
"""The values of a judgement's row, in the order of
:data:`~verifai_desktop.store.history_records.FEEDBACK_COLUMNS`."""


class AnswerHistory(ABC):
    """The answer history of one collection, open (close it, or use ``with``).

    Ids are positive ints given by the history, never reused.

    Attributes:
        collection: the collection's name, for messages.
        where: the history as named in log lines (its file, or its server and collection).
    """

    collection: str
    where: str

    @abstractmethod
    def close(self) -> None:
        """Release what the history holds."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- answers --------------------------------------------------------------------------

    def add(
        self,
        entry: Answer | CheckResult,
        settings: Settings,
        documents: Mapping[str, str],
        *,
        created: float | None = None,
    ) -> int:
        """Keep a verified answer or a claim check; returns its id.

        File names that are not valid UTF-8 are kept exactly: in the entry's JSON as a shown
        name plus their bytes (:func:`~verifai_desktop.names.name_json`), in ``documents`` as
        JSON ``\\udcff`` escapes (ASCII text) that read back as the same name.

        Args:
            entry: the answer as shown, or the claim check (kept under its claim).
            settings: the settings it was made with (thresholds; kept whole).
            documents: path -> sha256 of the documents it quotes
                (:func:`~verifai_desktop.store.history.quoted_documents`).
            created: seconds since the epoch (now if None).

        Raises:
            StoreUnavailable: a server store that may not or cannot keep it.
        """
        snapshot = dataclasses.asdict(settings)
        snapshot.pop("ui", None)
        if isinstance(entry, CheckResult):
            question, text = entry.claim, check_to_json(entry, settings)
        else:
            question, text = entry.question, answer_to_json(entry, settings)
        return self._insert(
            (
                time.time() if created is None else created,
                valid_utf8(question),
                text,
                # ASCII JSON: a name's undecodable byte is a \\udcff escape, read back exactly
                json.dumps(snapshot, sort_keys=True),
                json.dumps(dict(documents), sort_keys=True),
                __version__,
            )
        )

    @abstractmethod
    def _insert(self, values: AnswerRow) -> int:
        """Write a new entry's row; returns its id."""

    @abstractmethod
    def scan(self) -> AnswerScan:
        """Every saved answer and claim check, newest first, and those that cannot be read.

        A row that cannot be read (:meth:`get`) is left out and named in
        :attr:`AnswerScan.unreadable`, never fatal: the rest of the history is still listed.
        """

    def answers(self) -> list[SavedAnswer]:
        """Every saved answer that can be read, newest first; each one that cannot is logged
        (:meth:`scan` returns them)."""
        scan = self.scan()
        for answer_id, reason in scan.unreadable:
            log.warning("history %s: answer %d cannot be read: %s", self.where, answer_id, reason)
        return list(scan.answers)

    @abstractmethod
    def get(self, answer_id: int) -> SavedAnswer | None:
        """The saved answer ``answer_id``, or None when there is none.

        Raises:
            BadRecord: it is there but its row cannot be read (a damaged page, a JSON column
                that is not a JSON object, a value of the wrong type).
        """

    def require(self, answer_id: int) -> SavedAnswer:
        """The saved answer ``answer_id``.

        Raises:
            HistoryNotFound: there is none.
            BadRecord: it is there but cannot be read.
        """
        saved = self.get(answer_id)
        if saved is None:
            raise HistoryNotFound(self.collection, answer_id)
        return saved

    @abstractmethod
    def last(self) -> SavedAnswer | None:
        """The newest saved answer, or None when the history is empty.

        Raises:
            BadRecord: the newest answer cannot be read.
        """

    @abstractmethod
    def delete(self, answer_id: int) -> bool:
        """Forget one answer and its feedback; True when it was there."""

    @abstractmethod
    def clear(self) -> int:
        """Forget every answer and all feedback; returns how many answers there were."""

    # -- feedback -------------------------------------------------------------------------

    def set_feedback(self, feedback: Feedback) -> None:
        """Record a judgement (replacing an earlier one of the same verdict).

        Raises:
            HistoryNotFound: no saved answer ``feedback.answer_id``.
            ValueError: ``verdict`` is not one of
                :data:`~verifai_desktop.store.history_records.FEEDBACK_VERDICTS`, a label is
                given with a verdict other than ``wrong``, or the entry is a claim check.
        """
        if feedback.verdict not in FEEDBACK_VERDICTS:
            raise ValueError(f"feedback verdict {feedback.verdict!r}; use {FEEDBACK_VERDICTS}")
        if feedback.label is not None and feedback.verdict != "wrong":
            raise ValueError("a correct label goes with a 'wrong' verdict only")
        if self.require(feedback.answer_id).kind == "check":
            raise ValueError(f"entry {feedback.answer_id} is a claim check: feedback is on answers")
        self._write_feedback(
            (
                feedback.answer_id,
                feedback.sentence,
                feedback.passage,
                feedback.shown,
                feedback.verdict,
                None if feedback.label is None else feedback.label.value,
                feedback.note,
                feedback.created or time.time(),
            )
        )

    @abstractmethod
    def _write_feedback(self, values: FeedbackRow) -> None:
        """Write a judgement's row, replacing the one of the same answer, sentence and
        passage."""

    @abstractmethod
    def clear_feedback(self, answer_id: int, sentence: int, passage: int) -> None:
        """Withdraw a judgement."""

    @abstractmethod
    def feedback(self, answer_id: int | None = None) -> list[Feedback]:
        """Judgements of one saved answer (or of all), in answer then sentence order; a row
        that cannot be read (an unknown verdict or label) is logged and left out."""

    def _read_feedback(self, rows: Iterable[Sequence[Any]]) -> list[Feedback]:
        """Judgements from rows of ``FEEDBACK_COLUMNS``; a row that cannot be read is logged
        and left out."""
        out: list[Feedback] = []
        for r in rows:
            try:
                out.append(feedback_from_row(r))
            except (ValueError, TypeError) as exc:
                log.warning(
                    "history %s: a judgement of answer %s is unreadable: %s", self.where, r[0], exc
                )
        return out


def scan_ids(ids: Sequence[int], get: Callable[[int], SavedAnswer | None]) -> AnswerScan:
    """The entries of ``ids`` read with ``get``, each that cannot be read (``BadRecord``) left
    out and named in :attr:`AnswerScan.unreadable`, in the order of ``ids``."""
    answers: list[SavedAnswer] = []
    unreadable: list[tuple[int, str]] = []
    for answer_id in ids:
        try:
            saved = get(answer_id)
        except BadRecord as exc:
            unreadable.append((answer_id, exc.reason))
            continue
        if saved is not None:
            answers.append(saved)
    return AnswerScan(tuple(answers), tuple(unreadable))
