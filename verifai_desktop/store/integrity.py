"""SQLite damage, found and salvaged: the checks run when the catalog or the history opens, and
the row-by-row reading of a damaged table that their repairs start from.

A damaged page makes SQLite fail every statement that reads it ("database disk image is
malformed"), so one bad page aborts a whole-table ``SELECT``; rows are then read one id at a
time, and only those whose pages are damaged are lost (the same approach as the ``sqlite3``
shell's ``.recover`` for a readable b-tree, in the standard library's ``sqlite3``).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

MAX_PROBED_IDS = 1_000_000
"""Most ids read one by one from a damaged table (a damaged ``sqlite_sequence`` must not start
an endless probe)."""


def check_problem(
    db: sqlite3.Connection, pragma: str, tables: Sequence[str], *, what: str
) -> str | None:
    """Run ``PRAGMA quick_check`` or ``integrity_check`` and look for ``tables``.

    Args:
        db: an open database.
        pragma: ``"quick_check"`` (about 40 ms on a 20 MB file) or ``"integrity_check"``
            (reads every page).
        tables: the tables the file must have.
        what: the file, for the finding (``"the catalog"``).

    Returns:
        None when the check says ok and every table is there, else the first finding, for
        people (``"SQLite's quick check failed: ..."``, ``"the history has no answers table"``).

    Raises:
        sqlite3.DatabaseError: the check itself cannot run (not a database, unreadable).
    """
    rows = db.execute(f"PRAGMA {pragma}(20)").fetchall()
    findings = [
        line.strip()
        for r in rows
        for line in str(r[0]).splitlines()
        if line.strip() and not line.startswith("***")
    ]
    if findings != ["ok"]:
        more = f" and {len(findings) - 1} more" if len(findings) > 1 else ""
        return f"SQLite's {pragma.replace('_', ' ')} failed: {findings[0][:160]}{more}"
    names = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_schema WHERE type='table'")}
    missing = [t for t in tables if t not in names]
    if missing:
        return f"{what} has no {', '.join(missing)} table"
    return None


@dataclass(frozen=True, slots=True)
class TableSalvage:
    """The rows of one table that could still be read.

    Attributes:
        rows: each row read, ``(id, *columns)``, by ascending id.
        complete: the whole table was read at once (nothing lost).
        lost_ids: ids whose row exists but could not be read (its page is damaged).
        top_id: the highest id the table ever gave (``sqlite_sequence``, else the highest id
            read); 0 when unknown.
    """

    rows: tuple[tuple[Any, ...], ...]
    complete: bool
    lost_ids: tuple[int, ...]
    top_id: int


def salvage_table(
    db: sqlite3.Connection, table: str, id_column: str, columns: Sequence[str]
) -> TableSalvage:
    """Read every row of ``table`` that can still be read.

    The whole table first; when a damaged page stops that, each id from 1 to the highest the
    table gave (``sqlite_sequence``, ``max(id)``), up to :data:`MAX_PROBED_IDS`. An id whose
    read fails is lost; an id with no row was never there or was deleted.

    Args:
        db: the (damaged) database, open.
        table: the table, ``id_column`` its ``INTEGER PRIMARY KEY``, ``columns`` the others.

    Returns:
        What was read, and which ids were lost.
    """
    select = f"SELECT {', '.join([id_column, *columns])} FROM {table}"
    top = 0
    for query in (
        f"SELECT seq FROM sqlite_sequence WHERE name='{table}'",
        f"SELECT max({id_column}) FROM {table}",
    ):
        with contextlib.suppress(sqlite3.DatabaseError, TypeError):
            top = max(top, int(db.execute(query).fetchone()[0]))
    try:
        rows = db.execute(f"{select} ORDER BY {id_column}").fetchall()
        top = max([top, *(int(r[0]) for r in rows)])
        return TableSalvage(tuple(rows), True, (), top)
    except sqlite3.DatabaseError as exc:
        log.warning("%s: whole-table read failed (%.200s); reading row by row", table, exc)
    found: list[tuple[Any, ...]] = []
    lost: list[int] = []
    for row_id in range(1, min(top, MAX_PROBED_IDS) + 1):
        try:
            row = db.execute(f"{select} WHERE {id_column}=?", (row_id,)).fetchone()
        except sqlite3.DatabaseError:
            lost.append(row_id)
            continue
        if row is not None:
            found.append(row)
    return TableSalvage(tuple(found), False, tuple(lost), top)
