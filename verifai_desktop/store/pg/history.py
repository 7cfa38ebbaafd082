"""The answer history of a PostgreSQL collection: :class:`PgHistory`.

The entries and judgements are the embedded history's
(:class:`~verifai_desktop.store.history.History`: the same columns, the same JSON text kept
byte for byte, the same rules), kept in the tables ``answers`` and ``feedback`` of the
collection's schema (:mod:`verifai_desktop.store.pg.schema`). Each row carries ``asked_by``, the
role that asked, and row-level security (enabled and forced) shows and lets write each row to
that role alone: two users of one team collection never see each other's questions, answers or
judgements. The collection's owner owns the tables and can turn the policy off: it (any member
of its role, a superuser) can read every role's history. The ids are the server's,
shared by all roles (one role's ids have gaps where another's entries were kept).

A role that was granted no group of the collection cannot write the tables: its history reads
as empty, and keeping an answer raises :class:`~verifai_desktop.errors.StoreUnavailable`
(kind ``permission``), which the front ends show as a warning after the answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from verifai_desktop.errors import BadRecord, StoreUnavailable
from verifai_desktop.store import history_records as records
from verifai_desktop.store.history_base import AnswerHistory, AnswerRow, FeedbackRow, scan_ids

if TYPE_CHECKING:
    import psycopg

_ANSWER = f"answer_id, {', '.join(records.ANSWER_COLUMNS)}"
_FEEDBACK = ", ".join(records.FEEDBACK_COLUMNS)


class PgHistory(AnswerHistory):
    """The answer history of one PostgreSQL collection, as the connecting role sees it
    (:class:`~verifai_desktop.store.history_base.AnswerHistory`). Open it through
    :meth:`PgStore.history <verifai_desktop.store.pg.store.PgStore.history>`.

    It reads and writes on the store's connection: closing it leaves the connection open, and
    the store must stay open while it is used.

    Args:
        conn: the store's connection (autocommit).
        schema: the collection's schema (an identifier, safe to format in).
        collection: the collection's name, for messages.
        store: the server as shown to the user (``user@host:port/database``).

    Raises:
        StoreUnavailable: the server cannot be used (kinds as
            :func:`~verifai_desktop.store.pg.connect.connect`'s).
    """

    def __init__(
        self,
        conn: psycopg.Connection[tuple[object, ...]],
        schema: str,
        collection: str,
        store: str,
    ) -> None:
        self._conn = conn
        self._schema = schema
        self.collection = collection
        self.store = store
        self.where = f"{store} {collection}"
        with self._errors():
            row = conn.execute(
                "SELECT has_table_privilege(current_user, %s, 'INSERT')",
                (f"{schema}.answers",),
            ).fetchone()
        self._granted = bool(row and row[0])

    def close(self) -> None:
        """Nothing to release: the connection is the store's."""

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Server errors as the app's: a lost connection or a refused statement."""
        import psycopg

        try:
            yield
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreUnavailable(
                self.store, "permission", f"the answer history: {exc.diag.message_primary}"
            ) from None
        except psycopg.OperationalError:
            raise StoreUnavailable(
                self.store, "unreachable", "the connection to the server was lost"
            ) from None
        except psycopg.Error as exc:
            raise BadRecord("the answer history", str(exc.diag.message_primary)) from None

    def _rows(self, query: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        with self._errors():
            cur = self._conn.execute(query.format(s=self._schema).encode(), params)
            return cur.fetchall() if cur.description is not None else []

    def _count(self, query: str, params: Sequence[object] = ()) -> int:
        with self._errors():
            return self._conn.execute(query.format(s=self._schema).encode(), params).rowcount

    # -- answers --------------------------------------------------------------------------
    def _insert(self, values: AnswerRow) -> int:
        if not self._granted:
            raise StoreUnavailable(
                self.store,
                "permission",
                f"this role may not keep answers in collection {self.collection!r}: it is in "
                "none of the groups its documents were ingested for",
            )
        rows = self._rows(
            f"INSERT INTO {{s}}.answers ({', '.join(records.ANSWER_COLUMNS)})"
            " VALUES (%s, %s, %s, %s, %s, %s) RETURNING answer_id",
            values,
        )
        return int(str(rows[0][0]))

    def scan(self) -> records.AnswerScan:
        """Every entry this role kept, newest first, and those that cannot be read."""
        if not self._granted:
            return records.AnswerScan((), ())
        rows = {
            int(str(r[0])): r
            for r in self._rows(f"SELECT {_ANSWER} FROM {{s}}.answers ORDER BY answer_id DESC")
        }
        return scan_ids(list(rows), lambda answer_id: records.saved_answer(rows[answer_id]))

    def get(self, answer_id: int) -> records.SavedAnswer | None:
        """The entry ``answer_id`` when this role kept it, else None.

        Raises:
            BadRecord: its row cannot be read.
        """
        if not self._granted:
            return None
        rows = self._rows(f"SELECT {_ANSWER} FROM {{s}}.answers WHERE answer_id = %s", (answer_id,))
        return records.saved_answer(rows[0]) if rows else None

    def last(self) -> records.SavedAnswer | None:
        """The newest entry this role kept, or None."""
        if not self._granted:
            return None
        rows = self._rows("SELECT max(answer_id) FROM {s}.answers")
        return None if not rows or rows[0][0] is None else self.get(int(str(rows[0][0])))

    def delete(self, answer_id: int) -> bool:
        """Forget one of this role's entries and its feedback; True when it was there."""
        if not self._granted:
            return False
        return self._count("DELETE FROM {s}.answers WHERE answer_id = %s", (answer_id,)) > 0

    def clear(self) -> int:
        """Forget every entry of this role (and their feedback); returns how many there were."""
        if not self._granted:
            return 0
        return self._count("DELETE FROM {s}.answers")

    # -- feedback -------------------------------------------------------------------------
    def _write_feedback(self, values: FeedbackRow) -> None:
        self._rows(
            f"INSERT INTO {{s}}.feedback ({_FEEDBACK}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (answer_id, sentence, passage) DO UPDATE SET shown = excluded.shown,"
            " verdict = excluded.verdict, label = excluded.label, note = excluded.note,"
            " created = excluded.created",
            values,
        )

    def clear_feedback(self, answer_id: int, sentence: int, passage: int) -> None:
        """Withdraw a judgement of this role."""
        if self._granted:
            self._count(
                "DELETE FROM {s}.feedback WHERE answer_id = %s AND sentence = %s AND passage = %s",
                (answer_id, sentence, passage),
            )

    def feedback(self, answer_id: int | None = None) -> list[records.Feedback]:
        """This role's judgements of one answer (or of all), in answer then sentence order."""
        if not self._granted:
            return []
        where, params = (
            ("WHERE answer_id = %s", (answer_id,)) if answer_id is not None else ("", ())
        )
        rows = self._rows(
            f"SELECT {_FEEDBACK} FROM {{s}}.feedback {where} ORDER BY answer_id, sentence, passage",
            params,
        )
        return self._read_feedback(rows)
