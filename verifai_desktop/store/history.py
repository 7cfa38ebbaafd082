"""Answer history and verdict feedback of a collection (``history.sqlite`` in its folder): the
embedded store's :class:`~verifai_desktop.store.history_base.AnswerHistory` (the PostgreSQL
store's is :class:`~verifai_desktop.store.pg.history.PgHistory`).

Every verified answer is kept as the exact ``verifai.answer`` JSON text it was shown as
(:func:`verifai_desktop.codec.answer_to_json`), with the question, the time, the settings in
effect and the sha256 of every document it quotes, so it can be reopened exactly as verified
(:class:`~verifai_desktop.store.history_records.SavedAnswer`), told apart from documents that
have changed since (:func:`changed_documents`), exported as an audit record
(:mod:`verifai_desktop.audit`) and corrected by its reader
(:class:`~verifai_desktop.store.history_records.Feedback`; exported for training by
:func:`feedback_records`, in the format of the NLI training pool). A claim check is kept the
same way, as an entry of its own kind. A damaged file is found when it opens and repaired by
:mod:`verifai_desktop.store.history_repair`.

What a row of ``answers`` holds (:data:`SCHEMA`):

- ``answer_id``: the entry's id, 1, 2, ... (never reused);
- ``created``: when it was answered or checked, seconds since the epoch (UTC);
- ``question``: the question asked, or for a claim check the claim checked (citation markers
  removed);
- ``answer_json``: the entry as JSON text, whose ``schema`` says its kind
  (:attr:`SavedAnswer.kind`): ``verifai.answer/N`` for an answer
  (:func:`~verifai_desktop.codec.answer_to_json`: sentences, verdicts, passages, models,
  thresholds), ``verifai.check/N`` for a claim check
  (:func:`~verifai_desktop.codec.check_to_json`: the claim, one verdict per document, the
  supporting and contradicting passages with their verdicts, models, thresholds);
- ``settings_json``: the settings in effect (``dataclasses.asdict(Settings)`` without ``ui``);
- ``documents_json``: path -> sha256 of every document the entry quotes (a check: every
  passage it lists);
- ``app_version``: the VerifAI Desktop version that made it.

Feedback (``feedback``) is given on an answer's verdicts only.

The history is separate from the catalog: writing it never takes the collection's write lock,
so an answer is kept while an ingest runs. SQLite (WAL) serialises writers.
"""

from __future__ import annotations

import logging
import sqlite3
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from verifai_desktop.domain import Answer, CheckResult
from verifai_desktop.errors import BadRecord, HistoryCorrupt, ParseError
from verifai_desktop.names import dumps_json
from verifai_desktop.private import create_private_file, export_private_texts, export_target
from verifai_desktop.settings import Settings
from verifai_desktop.store.history_base import AnswerHistory, AnswerRow, FeedbackRow, scan_ids
from verifai_desktop.store.history_records import (
    ANSWER_COLUMNS,
    FEEDBACK_COLUMNS,
    FEEDBACK_VERDICTS,
    AnswerScan,
    DocumentChange,
    EntryKind,
    Feedback,
    FeedbackVerdict,
    SavedAnswer,
    saved_answer,
)
from verifai_desktop.store.integrity import check_problem
from verifai_desktop.store.sources import is_file_source

if TYPE_CHECKING:
    # The store's contract opens its history (CollectionStore.history); the type is enough here.
    from verifai_desktop.store.base import CollectionStore

__all__ = [  # the records are defined in history_records and used from here as before
    "BUSY_TIMEOUT_S",
    "FEEDBACK_VERDICTS",
    "HISTORY_FILE",
    "SCHEMA",
    "AnswerScan",
    "DocumentChange",
    "EntryKind",
    "Feedback",
    "FeedbackVerdict",
    "History",
    "SavedAnswer",
    "changed_documents",
    "feedback_records",
    "keep_answer",
    "not_a_file",
    "quoted_documents",
    "write_feedback",
]

log = logging.getLogger(__name__)

HISTORY_FILE = "history.sqlite"
BUSY_TIMEOUT_S = 10.0
"""Seconds to wait for another writer of the history (a thread or process) to finish."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    answer_id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    question TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    documents_json TEXT NOT NULL,
    app_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS feedback (
    feedback_id INTEGER PRIMARY KEY AUTOINCREMENT,
    answer_id INTEGER NOT NULL REFERENCES answers(answer_id) ON DELETE CASCADE,
    sentence INTEGER NOT NULL,
    passage INTEGER NOT NULL,
    shown TEXT NOT NULL,
    verdict TEXT NOT NULL,
    label TEXT,
    note TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    UNIQUE (answer_id, sentence, passage)
);
"""
"""The history's tables (also what a repaired history is created with)."""


def _enable_wal(db: sqlite3.Connection) -> None:
    """Put the database in WAL mode. Switching a new database's journal mode returns "database
    is locked" at once, without SQLite's busy wait, while another connection opens it too; so
    the switch is retried for :data:`BUSY_TIMEOUT_S` seconds (a database already in WAL mode
    needs none).

    Raises:
        sqlite3.OperationalError: still locked after the wait.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                return
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def not_a_file(path: Path) -> str | None:
    """Why ``path`` cannot be a history file, or None when it is a regular file or missing.

    A folder (or a device, a socket) in the history's place is damage like any other: the
    history cannot be opened, and a repair sets it aside.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:  # a dangling or looping link, a folder that cannot be searched
        return f"it cannot be looked at: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "it is a folder, not a SQLite file"
    return "it is not a regular file"


class History(AnswerHistory):
    """The answer history of one collection folder.

    Opening an existing history runs SQLite's ``PRAGMA quick_check``, as the catalog does, so
    a damaged file is a clear :class:`~verifai_desktop.errors.HistoryCorrupt` (repaired by
    :func:`~verifai_desktop.store.history_repair.repair_history`) rather than a crash in the
    middle of a listing.

    Args:
        folder: the collection's folder; the file is created on first use. Open it through
            the collection (:meth:`CollectionStore.history`, or
            :func:`~verifai_desktop.store.folders.collection_history` by name).

    Raises:
        HistoryCorrupt: ``history.sqlite`` is not a SQLite database (or a folder) or fails the
            quick check.
        BadRecord: another writer kept it locked for :data:`BUSY_TIMEOUT_S` seconds.

    Attributes:
        path: the history's file.
        collection: the collection's folder name.
        where: the file, as log lines name it.
    """

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / HISTORY_FILE
        self.collection = self.path.parent.name
        self.where = str(self.path)
        problem = not_a_file(self.path)
        if problem is not None:
            raise self._damaged(problem)
        existed = self.path.is_file() and self.path.stat().st_size > 0
        db: sqlite3.Connection | None = None
        try:
            create_private_file(self.path)
            # The timeout comes first: another thread or process may be writing (WAL).
            db = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None,
                check_same_thread=False,
            )  # fmt: skip
            _enable_wal(db)
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA secure_delete=ON")
            if existed:
                # No table is required: another process may be creating this history now.
                problem = check_problem(db, "quick_check", (), what="the history")
                if problem is not None:
                    raise self._damaged(problem)
            db.executescript(SCHEMA)
        except sqlite3.OperationalError as exc:
            _close_quietly(db)
            if "locked" in str(exc) or "busy" in str(exc):
                raise BadRecord(
                    "the answer history",
                    f"it stayed locked by another program for {BUSY_TIMEOUT_S:.0f} s; try again",
                ) from exc
            raise self._damaged(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            _close_quietly(db)
            raise self._damaged(str(exc)) from exc
        except BaseException:
            _close_quietly(db)
            raise
        self._db = db

    def _damaged(self, reason: str) -> HistoryCorrupt:
        return HistoryCorrupt(self.path, reason, collection=self.collection)

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    # -- answers --------------------------------------------------------------------------

    def _insert(self, values: AnswerRow) -> int:
        cur = self._db.execute(
            "INSERT INTO answers(created, question, answer_json, settings_json, documents_json, "
            "app_version) VALUES (?, ?, ?, ?, ?, ?)",
            values,
        )
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    def scan(self) -> AnswerScan:
        """Every saved answer and claim check, newest first, and those that cannot be read.

        A row that cannot be read (:meth:`get`) is left out and named in
        :attr:`AnswerScan.unreadable`, never fatal: the rest of the history is still listed.

        Raises:
            HistoryCorrupt: not even the list of ids can be read.
        """
        try:
            ids = [
                int(r[0])
                for r in self._db.execute("SELECT answer_id FROM answers ORDER BY answer_id DESC")
            ]
        except sqlite3.DatabaseError as exc:
            raise self._damaged(str(exc)) from exc
        return scan_ids(ids, self.get)

    def get(self, answer_id: int) -> SavedAnswer | None:
        """The saved answer ``answer_id``, or None when there is none.

        Raises:
            BadRecord: it is there but its row cannot be read (a damaged page, a JSON column
                that is not a JSON object, a value of the wrong type).
        """
        try:
            row = self._db.execute(
                f"SELECT answer_id, {', '.join(ANSWER_COLUMNS)} FROM answers WHERE answer_id = ?",
                (answer_id,),
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise BadRecord(f"saved answer {answer_id}", str(exc)) from exc
        return None if row is None else saved_answer(row)

    def last(self) -> SavedAnswer | None:
        """The newest saved answer, or None when the history is empty.

        Raises:
            BadRecord: the newest answer cannot be read.
        """
        row = self._db.execute("SELECT max(answer_id) FROM answers").fetchone()
        return None if row is None or row[0] is None else self.get(int(row[0]))

    def delete(self, answer_id: int) -> bool:
        """Forget one answer and its feedback; True when it was there."""
        cur = self._db.execute("DELETE FROM answers WHERE answer_id = ?", (answer_id,))
        return cur.rowcount > 0

    def clear(self) -> int:
        """Forget every answer and all feedback; returns how many answers there were."""
        cur = self._db.execute("DELETE FROM answers")
        self._db.execute("VACUUM")  # deleted answers leave no text behind
        return cur.rowcount

    # -- feedback -------------------------------------------------------------------------

    def _write_feedback(self, values: FeedbackRow) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO feedback(answer_id, sentence, passage, shown, verdict, label, "
            "note, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )

    def clear_feedback(self, answer_id: int, sentence: int, passage: int) -> None:
        """Withdraw a judgement."""
        self._db.execute(
            "DELETE FROM feedback WHERE answer_id = ? AND sentence = ? AND passage = ?",
            (answer_id, sentence, passage),
        )

    def feedback(self, answer_id: int | None = None) -> list[Feedback]:
        """Judgements of one saved answer (or of all), in answer then sentence order; a row
        that cannot be read (an unknown verdict or label) is logged and left out."""
        where, params = ("WHERE answer_id = ?", (answer_id,)) if answer_id is not None else ("", ())
        rows = self._db.execute(
            f"SELECT {', '.join(FEEDBACK_COLUMNS)} "
            f"FROM feedback {where} ORDER BY answer_id, sentence, passage",
            params,
        )
        return self._read_feedback(rows)


def _close_quietly(db: sqlite3.Connection | None) -> None:
    if db is not None:
        db.close()


def quoted_documents(entry: Answer | CheckResult, sha256_of: Mapping[str, str]) -> dict[str, str]:
    """Path -> sha256 of every document ``entry`` quotes: an answer's passages and the
    passages of its conflicting evidence; a check's documents and passages.

    Args:
        entry: the answer or claim check.
        sha256_of: the catalogued sha256 of each source (missing sources get ``""``).
    """
    return {p: sha256_of.get(p, "") for p in _quoted_paths(entry)}


def _quoted_paths(entry: Answer | CheckResult) -> list[str]:
    """The documents ``entry`` quotes, each once: an answer's passages, then its conflicts';
    a check's documents, then its supporting and contradicting passages."""
    if isinstance(entry, CheckResult):
        paths = [str(d.evidence.passage.path) for d in entry.documents]
        paths += [str(e.passage.path) for e in (*entry.supporting, *entry.contradicting)]
    else:
        paths = [str(p.path) for p in entry.passages]
        paths += [str(e.passage.path) for s in entry.sentences for e in s.conflicts]
    return list(dict.fromkeys(paths))


def changed_documents(saved: SavedAnswer) -> list[DocumentChange]:
    """The documents ``saved`` quotes whose file is gone or reads differently now (sha256 of
    the file on disk against the one recorded). Benchmark keys
    (:func:`~verifai_desktop.store.sources.is_file_source`) and documents recorded without a
    hash are not checked.
    """
    from verifai_desktop.hashing import sha256_file

    out: list[DocumentChange] = []
    for path, recorded in saved.documents.items():
        if not recorded or not is_file_source(path):
            continue
        try:
            current = sha256_file(Path(path))
        except ParseError:
            out.append(DocumentChange(path, recorded, "", "missing"))
            continue
        if current != recorded:
            out.append(DocumentChange(path, recorded, current, "changed"))
    return out


def feedback_records(
    history: AnswerHistory, *, collection: str = ""
) -> tuple[list[dict[str, str]], int]:
    """Training pairs from the readers' judgements, in the NLI training pool's JSONL format.

    Each judged verdict becomes ``{"premise": the evidence window the verdict was decided
    on, "hypothesis": the sentence's claim (citations removed), "label": SUPPORT /
    CONTRADICT / NO_EVIDENCE, "source": "feedback", "split": "train", "id": ...}``, the
    format of ``nli_train/*.jsonl`` (read by ``models/pool.py``).

    Args:
        history: the history to read.
        collection: its collection's name, put into each record's id.

    Returns:
        ``(records, skipped)``: ``skipped`` counts judgements that teach no label (flags,
        ``wrong`` without the correct label, verdicts the answer no longer has).
    """
    records: list[dict[str, str]] = []
    skipped = 0
    answers: dict[int, Answer] = {}
    for fb in history.feedback():
        label = fb.training_label
        if label is None:
            skipped += 1
            continue
        if fb.answer_id not in answers:
            answers[fb.answer_id] = history.require(fb.answer_id).answer()
        answer = answers[fb.answer_id]
        if not 0 <= fb.sentence < len(answer.sentences):
            skipped += 1
            continue
        sentence = answer.sentences[fb.sentence]
        verdict = next((v for v in sentence.verdicts if v.passage_number == fb.passage), None)
        if verdict is None or not verdict.evidence.strip():
            skipped += 1
            continue
        records.append(
            {
                "premise": verdict.evidence,
                "hypothesis": sentence.claim,
                "label": label.value,
                "source": "feedback",
                "split": "train",
                "id": f"feedback:{collection}:{fb.answer_id}:{fb.sentence}:{fb.passage}",
            }
        )
    return records, skipped


def write_feedback(records: Sequence[Mapping[str, str]], path: Path | str) -> Path:
    """Write training pairs (:func:`feedback_records`) to ``path`` as JSONL, one per line.

    The file is user-only (mode 0600; the premises are document text) and written whole or
    not at all (:func:`~verifai_desktop.private.export_private_texts`).

    Returns:
        The path written.

    Raises:
        ExportFailed: the file cannot be written (a folder, no name, a missing or read-only
            folder, a full disk); nothing was changed.
    """
    target = export_target(path, "feedback export")
    text = "".join(dumps_json(r) + "\n" for r in records)
    export_private_texts([(target, text)], what="feedback export")
    return target


def keep_answer(
    collection: CollectionStore, entry: Answer | CheckResult, settings: Settings
) -> int:
    """Save ``entry`` (an answer or a claim check) in ``collection``'s history with the
    catalogued sha256 of every document it quotes; returns its id.

    Raises:
        HistoryCorrupt: the history file is damaged.
    """
    sha: dict[str, str] = {}
    for path in _quoted_paths(entry):
        record = collection.document(path)
        sha[path] = record.sha256 if record is not None else ""
    with collection.history() as history:
        return history.add(entry, settings, quoted_documents(entry, sha))
