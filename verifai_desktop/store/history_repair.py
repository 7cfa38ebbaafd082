"""Repairing a damaged answer history: every row that can still be read goes into a new file,
which replaces the damaged one atomically; the damaged file is kept beside it.

Rows are read with SQLite itself, whole tables first and then one id at a time
(:func:`~verifai_desktop.store.integrity.salvage_table`); the rows SQLite can no longer reach
(below a damaged interior page, or when the file's first page is gone) are then looked for in
the leaf pages themselves (:func:`~verifai_desktop.store.sqlite_pages.table_leaf_rows`), told
apart by their columns. Only rows on damaged pages are lost. The new file keeps every answer's
id (audit records and feedback name answers by id) and the highest id given, so no id is ever
given twice. Judgements of an answer that was lost are lost with it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifai_desktop.errors import ExportFailed, HistoryCorrupt
from verifai_desktop.private import create_private_file
from verifai_desktop.store.history import (
    BUSY_TIMEOUT_S,
    HISTORY_FILE,
    SCHEMA,
    History,
    not_a_file,
)
from verifai_desktop.store.history_records import ANSWER_COLUMNS, FEEDBACK_COLUMNS
from verifai_desktop.store.integrity import TableSalvage, salvage_table
from verifai_desktop.store.sqlite_pages import Value, table_leaf_rows

log = logging.getLogger(__name__)

DAMAGED_PREFIX = "history.damaged-"
"""Name prefix of a damaged history set aside by a repair (``history.damaged-20261125-140312
.sqlite`` in the collection's folder)."""

_SIDE_FILES = ("-wal", "-shm")


@dataclass(frozen=True, slots=True)
class HistoryRepair:
    """What repairing a damaged history did.

    Attributes:
        path: the history file, now the repaired one.
        damaged_copy: the damaged file (or the folder found in its place), set aside in the
            same folder.
        reason: what was wrong with it (SQLite's finding).
        answers_kept: answers read and kept.
        answers_lost: answers that were there but could not be read; None when not even
            the table could be read, so how many it held is unknown.
        feedback_kept: judgements kept.
        feedback_lost: judgements that could not be read, or whose answer was lost; None
            when unknown.
    """

    path: Path
    damaged_copy: Path
    reason: str
    answers_kept: int
    answers_lost: int | None
    feedback_kept: int
    feedback_lost: int | None


def history_problem(folder: Path) -> str | None:
    """Why the history of the collection in ``folder`` is damaged, or None when it opens and
    passes its check (or there is none yet). A folder in the file's place is damage.

    Raises:
        BadRecord: another program kept the history locked too long.
    """
    path = folder / HISTORY_FILE
    problem = not_a_file(path)
    if problem is not None or not path.exists():
        return problem
    try:
        with History(folder):
            return None
    except HistoryCorrupt as exc:
        return exc.reason


def repair_history(folder: Path) -> HistoryRepair | None:
    """Repair the history of the collection in ``folder`` when it is damaged.

    Every readable answer and judgement is copied, with its id, into a new file beside the
    damaged one; then the damaged file is linked (or copied) to ``history.damaged-<time>
    .sqlite`` and the new file renamed over ``history.sqlite`` (atomic: the history is always
    one or the other). A folder (or anything but a file) in the history's place holds no
    answer that can be read: it is renamed to that name as it is, and a new, empty history
    takes its place. The caller holds the collection's write lock, so two repairs do not
    race; a writer that opens the history meanwhile finds it damaged and keeps nothing.

    Args:
        folder: the collection's folder.

    Returns:
        What was kept and lost, or None when the history is not damaged (nothing is done).

    Raises:
        ExportFailed: the new file could not be written or put in place (a full disk, a
            read-only folder); the damaged file is left as it was.
        BadRecord: another program kept the history locked too long.
    """
    reason = history_problem(folder)
    if reason is None:
        return None
    path = folder / HISTORY_FILE
    if path.is_file():
        answers, feedback = _read_damaged(path)
    else:
        answers = feedback = _Read((), None, 0)
    staging = path.with_name(HISTORY_FILE + ".repair")
    for stale in (staging, *(Path(f"{staging}{s}") for s in _SIDE_FILES)):
        stale.unlink(missing_ok=True)  # left by an interrupted repair
    try:
        kept_answers, kept_feedback = _write_salvage(staging, answers, feedback)
        aside = _set_aside(path)
        for side in _SIDE_FILES:  # the damaged file's journal must not meet the new file
            Path(f"{path}{side}").unlink(missing_ok=True)
        os.replace(staging, path)
    except (OSError, sqlite3.Error) as exc:
        staging.unlink(missing_ok=True)
        failure: OSError | str = exc if isinstance(exc, OSError) else str(exc)
        raise ExportFailed(path, "repaired answer history", failure) from exc
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
    result = HistoryRepair(
        path=path,
        damaged_copy=aside,
        reason=reason,
        answers_kept=kept_answers,
        answers_lost=_plus(answers.lost, len(answers.rows) - kept_answers),
        feedback_kept=kept_feedback,
        feedback_lost=_plus(feedback.lost, len(feedback.rows) - kept_feedback),
    )
    log.info("history %s repaired: %s", path, result)
    return result


@dataclass(frozen=True, slots=True)
class _Read:
    """The rows of one table read from the damaged file.

    Attributes:
        rows: ``(id, *columns)``, by ascending id.
        lost: rows that were there but could not be read; None when unknown (not even the
            table's ids could be read).
        top_id: the highest id the table gave (0 when unknown).
    """

    rows: tuple[tuple[Any, ...], ...]
    lost: int | None
    top_id: int


def _read_damaged(path: Path) -> tuple[_Read, _Read]:
    """Every readable row of ``answers`` and ``feedback`` in the damaged file: through SQLite,
    then, for a table it could not read whole, from the leaf pages."""
    db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S)
    with contextlib.closing(db):  # closing folds the write-ahead log in: the pages are current
        answers = salvage_table(db, "answers", "answer_id", ANSWER_COLUMNS)
        feedback = salvage_table(db, "feedback", "feedback_id", FEEDBACK_COLUMNS)
    pages: dict[str, dict[int, tuple[Any, ...]]] = {"answers": {}, "feedback": {}}
    tops: dict[str, int] = {}
    if not (answers.complete and feedback.complete):
        try:
            for rowid, values in table_leaf_rows(path):
                table = _table_of(values)
                if table == "sqlite_sequence":
                    tops[str(values[0])] = int(values[1] or 0)
                elif table is not None:
                    pages[table][rowid] = (rowid, *values[1:])
        except OSError as exc:
            log.info("history repair: the pages of %s cannot be read: %s", path, exc)
    return (
        _merge(answers, pages["answers"], tops.get("answers", 0)),
        _merge(feedback, pages["feedback"], tops.get("feedback", 0)),
    )


def _table_of(values: tuple[Value, ...]) -> str | None:
    """The history table a row read from a leaf page belongs to, told by its columns (an
    ``INTEGER PRIMARY KEY`` is stored as NULL: the rowid holds it); None for any other."""
    number = (int, float)
    if len(values) == 2:
        sequence = isinstance(values[0], str) and isinstance(values[1], int)
        return "sqlite_sequence" if sequence else None
    if not values or values[0] is not None:
        return None
    if len(values) == 1 + len(ANSWER_COLUMNS):
        answer = isinstance(values[1], number) and all(isinstance(v, str) for v in values[2:])
        return "answers" if answer else None
    if len(values) == 1 + len(FEEDBACK_COLUMNS):
        judgement = (
            all(isinstance(v, int) for v in values[1:4])
            and all(isinstance(v, str) for v in (values[4], values[5], values[7]))
            and isinstance(values[6], str | None)
            and isinstance(values[8], number)
        )
        return "feedback" if judgement else None
    return None


def _merge(found: TableSalvage, pages: dict[int, tuple[Any, ...]], top: int) -> _Read:
    """``found`` plus the rows of the leaf pages that SQLite could not reach: those of ids
    whose read failed, or any when not even the table's ids could be read (a deleted row
    leaves no cell behind: the history is written with ``secure_delete``)."""
    if found.complete:
        return _Read(found.rows, 0, found.top_id)
    have = {int(r[0]) for r in found.rows}
    unknown = found.top_id == 0
    extra = {
        i: row for i, row in pages.items() if i not in have and (unknown or i in found.lost_ids)
    }
    rows = tuple(sorted([*found.rows, *extra.values()], key=lambda r: int(r[0])))
    lost = None if unknown else sum(1 for i in found.lost_ids if i not in extra)
    return _Read(rows, lost, max([found.top_id, top, *(int(r[0]) for r in rows)]))


def _plus(lost: int | None, not_written: int) -> int | None:
    return None if lost is None else lost + not_written


def _write_salvage(target: Path, answers: _Read, feedback: _Read) -> tuple[int, int]:
    """Write the rows read into a new history at ``target``; returns how many answers and
    judgements it holds (a row that breaks a constraint, such as a judgement of a lost answer,
    is not written)."""
    create_private_file(target)
    db = sqlite3.connect(str(target), isolation_level=None)
    with contextlib.closing(db):
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.executescript(SCHEMA)
        db.execute("BEGIN")
        kept_answers = _insert(db, "answers", "answer_id", ANSWER_COLUMNS, answers)
        kept_feedback = _insert(db, "feedback", "feedback_id", FEEDBACK_COLUMNS, feedback)
        db.execute("COMMIT")
    with target.open("rb") as fh:
        os.fsync(fh.fileno())
    return kept_answers, kept_feedback


def _insert(
    db: sqlite3.Connection,
    table: str,
    id_column: str,
    columns: tuple[str, ...],
    found: _Read,
) -> int:
    """Insert the rows read, ids kept; set the table's highest id given. Returns how many."""
    names = ", ".join([id_column, *columns])
    marks = ", ".join("?" * (len(columns) + 1))
    kept = 0
    for row in found.rows:
        try:
            db.execute(f"INSERT INTO {table}({names}) VALUES ({marks})", row)
        except sqlite3.IntegrityError as exc:
            log.info("history repair: %s row %s not kept: %s", table, row[0], exc)
            continue
        kept += 1
    db.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
    db.execute("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)", (table, found.top_id))
    return kept


def _set_aside(path: Path) -> Path:
    """Keep the damaged history under a new name in its folder (a hard link, else a copy, with
    its write-ahead log when it has one; a folder in its place is renamed); returns that
    name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{DAMAGED_PREFIX}{stamp}.sqlite")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{DAMAGED_PREFIX}{stamp}-{n}.sqlite")
    if not path.is_file():  # a folder: nothing to copy from, it moves aside whole
        os.rename(path, aside)
        return aside
    try:
        os.link(path, aside)
    except OSError:
        shutil.copy2(path, aside)
    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        shutil.copy2(wal, Path(f"{aside}-wal"))
    return aside
