"""Answer history and verdict feedback of a collection (``history.sqlite`` in its folder).

Every verified answer is kept as the exact ``verifai.answer`` JSON text it was shown as
(:func:`verifai_desktop.codec.answer_to_json`), with the question, the time, the settings in
effect and the sha256 of every document it quotes, so it can be reopened exactly as verified
(:meth:`SavedAnswer.answer`), told apart from documents that have changed since
(:func:`changed_documents`), exported as an audit record (:mod:`verifai_desktop.audit`) and
corrected by its reader (:class:`Feedback`; exported for training by
:func:`feedback_records`, in the format of the NLI training pool).

The history is separate from the catalog: writing it never takes the collection's write lock,
so an answer is kept while an ingest runs. SQLite (WAL) serialises writers.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from verifai_desktop import __version__
from verifai_desktop.codec import answer_from_dict, answer_to_json, settings_for
from verifai_desktop.domain import Answer, NliLabel
from verifai_desktop.errors import BadRecord, HistoryNotFound, IndexCorrupt, ParseError
from verifai_desktop.private import create_private_file, export_private_texts, export_target
from verifai_desktop.settings import Settings
from verifai_desktop.store.sources import is_file_source

if TYPE_CHECKING:
    # The store's contract opens its history (CollectionStore.history); the type is enough here.
    from verifai_desktop.store.base import CollectionStore

HISTORY_FILE = "history.sqlite"
BUSY_TIMEOUT_S = 10.0
"""Seconds to wait for another writer of the history (a thread or process) to finish."""

_SCHEMA = """
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

FeedbackVerdict = Literal["right", "wrong", "flagged"]
"""What a reader said of a verdict: ``right``; ``wrong`` (with the correct label when they
gave one); ``flagged`` (the sentence is wrong or harmful in some other way)."""

FEEDBACK_VERDICTS: tuple[FeedbackVerdict, ...] = ("right", "wrong", "flagged")


@dataclass(frozen=True, slots=True)
class SavedAnswer:
    """One answer of the history.

    Attributes:
        answer_id: its id in the collection's history (1, 2, ...; never reused).
        created: when it was answered (seconds since the epoch, UTC).
        question: the question asked.
        answer_json: the ``verifai.answer`` JSON exactly as written when it was verified.
        settings: the settings in effect (``dataclasses.asdict(Settings)`` without ``ui``).
        documents: path (or benchmark key) -> sha256 of every document the answer quotes
            (passages given and conflicting passages), as catalogued when it was answered.
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

    def answer(self) -> Answer:
        """The answer as it was verified (labels, verdicts, evidence, passages).

        Raises:
            BadRecord: the stored JSON is damaged or of an unknown schema.
        """
        return answer_from_dict(self.data())

    def answer_settings(self, base: Settings | None = None) -> Settings:
        """``base`` with the thresholds the answer was verified with (to show it again).

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


class History:
    """The answer history of one collection folder.

    Args:
        folder: the collection's folder; the file is created on first use. Open it through
            the collection (:meth:`CollectionStore.history`, or
            :func:`~verifai_desktop.store.folders.collection_history` by name).

    Raises:
        IndexCorrupt: ``history.sqlite`` is not a readable SQLite database.
        BadRecord: another writer kept it locked for :data:`BUSY_TIMEOUT_S` seconds.
    """

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / HISTORY_FILE
        try:
            create_private_file(self.path)
            # The timeout comes first: another thread or process may be writing (WAL).
            self._db = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None,
                check_same_thread=False,
            )  # fmt: skip
            _enable_wal(self._db)
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA secure_delete=ON")
            self._db.executescript(_SCHEMA)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise BadRecord(
                    "the answer history",
                    f"it stayed locked by another program for {BUSY_TIMEOUT_S:.0f} s; try again",
                ) from exc
            raise IndexCorrupt(self.path, str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(self.path, str(exc)) from exc

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- answers --------------------------------------------------------------------------

    def add(
        self,
        answer: Answer,
        settings: Settings,
        documents: Mapping[str, str],
        *,
        created: float | None = None,
    ) -> int:
        """Keep a verified answer; returns its id.

        Args:
            answer: the answer as shown.
            settings: the settings it was made with (thresholds; kept whole).
            documents: path -> sha256 of the documents it quotes (:func:`quoted_documents`).
            created: seconds since the epoch (now if None).
        """
        snapshot = dataclasses.asdict(settings)
        snapshot.pop("ui", None)
        cur = self._db.execute(
            "INSERT INTO answers(created, question, answer_json, settings_json, documents_json, "
            "app_version) VALUES (?, ?, ?, ?, ?, ?)",
            (
                time.time() if created is None else created,
                answer.question,
                answer_to_json(answer, settings),
                json.dumps(snapshot, sort_keys=True),
                json.dumps(dict(documents), sort_keys=True),
                __version__,
            ),
        )
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    def _rows(self, where: str = "", params: Sequence[object] = ()) -> Iterator[SavedAnswer]:
        sql = (
            "SELECT answer_id, created, question, answer_json, settings_json, documents_json, "
            f"app_version FROM answers {where}"
        )
        for row in self._db.execute(sql, tuple(params)):
            yield SavedAnswer(
                int(row[0]), float(row[1]), row[2], row[3], json.loads(row[4]),
                json.loads(row[5]), row[6],
            )  # fmt: skip

    def answers(self) -> list[SavedAnswer]:
        """Every saved answer, newest first."""
        return list(self._rows("ORDER BY answer_id DESC"))

    def get(self, answer_id: int) -> SavedAnswer | None:
        """The saved answer ``answer_id``, or None."""
        return next(self._rows("WHERE answer_id = ?", (answer_id,)), None)

    def require(self, answer_id: int) -> SavedAnswer:
        """The saved answer ``answer_id``.

        Raises:
            HistoryNotFound: there is none.
        """
        saved = self.get(answer_id)
        if saved is None:
            raise HistoryNotFound(self.path.parent.name, answer_id)
        return saved

    def last(self) -> SavedAnswer | None:
        """The newest saved answer, or None when the history is empty."""
        return next(self._rows("ORDER BY answer_id DESC LIMIT 1"), None)

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

    def set_feedback(self, feedback: Feedback) -> None:
        """Record a judgement (replacing an earlier one of the same verdict).

        Raises:
            HistoryNotFound: no saved answer ``feedback.answer_id``.
            ValueError: ``verdict`` is not one of :data:`FEEDBACK_VERDICTS`, or a label is
                given with a verdict other than ``wrong``.
        """
        if feedback.verdict not in FEEDBACK_VERDICTS:
            raise ValueError(f"feedback verdict {feedback.verdict!r}; use {FEEDBACK_VERDICTS}")
        if feedback.label is not None and feedback.verdict != "wrong":
            raise ValueError("a correct label goes with a 'wrong' verdict only")
        self.require(feedback.answer_id)
        self._db.execute(
            "INSERT OR REPLACE INTO feedback(answer_id, sentence, passage, shown, verdict, label, "
            "note, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                feedback.answer_id,
                feedback.sentence,
                feedback.passage,
                feedback.shown,
                feedback.verdict,
                None if feedback.label is None else feedback.label.value,
                feedback.note,
                feedback.created or time.time(),
            ),
        )

    def clear_feedback(self, answer_id: int, sentence: int, passage: int) -> None:
        """Withdraw a judgement."""
        self._db.execute(
            "DELETE FROM feedback WHERE answer_id = ? AND sentence = ? AND passage = ?",
            (answer_id, sentence, passage),
        )

    def feedback(self, answer_id: int | None = None) -> list[Feedback]:
        """Judgements of one saved answer (or of all), in answer then sentence order."""
        where, params = ("WHERE answer_id = ?", (answer_id,)) if answer_id is not None else ("", ())
        rows = self._db.execute(
            "SELECT answer_id, sentence, passage, shown, verdict, label, note, created "
            f"FROM feedback {where} ORDER BY answer_id, sentence, passage",
            params,
        )
        return [
            Feedback(
                answer_id=int(r[0]),
                sentence=int(r[1]),
                passage=int(r[2]),
                shown=r[3],
                verdict=r[4],
                label=None if r[5] is None else NliLabel(r[5]),
                note=r[6],
                created=float(r[7]),
            )
            for r in rows
        ]


def quoted_documents(answer: Answer, sha256_of: Mapping[str, str]) -> dict[str, str]:
    """Path -> sha256 of every document ``answer`` quotes: its passages and the passages of
    its conflicting evidence.

    Args:
        answer: the answer.
        sha256_of: the catalogued sha256 of each source (missing sources get ``""``).
    """
    return {p: sha256_of.get(p, "") for p in _quoted_paths(answer)}


def _quoted_paths(answer: Answer) -> list[str]:
    """The documents ``answer`` quotes (its passages', then its conflicts'), each once."""
    paths = [str(p.path) for p in answer.passages]
    paths += [str(e.passage.path) for s in answer.sentences for e in s.conflicts]
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


def feedback_records(history: History, *, collection: str = "") -> tuple[list[dict[str, str]], int]:
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
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    export_private_texts([(target, text)], what="feedback export")
    return target


def keep_answer(collection: CollectionStore, answer: Answer, settings: Settings) -> int:
    """Save ``answer`` in ``collection``'s history with the catalogued sha256 of every
    document it quotes; returns its id.

    Raises:
        IndexCorrupt: the history file is damaged.
    """
    sha: dict[str, str] = {}
    for path in _quoted_paths(answer):
        record = collection.document(path)
        sha[path] = record.sha256 if record is not None else ""
    with collection.history() as history:
        return history.add(answer, settings, quoted_documents(answer, sha))
