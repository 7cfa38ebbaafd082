"""A second connection for the PostgreSQL store's hybrid search (issue 40).

A hybrid search runs two statements: the postings of the query's words
(:data:`~.queries.POSTINGS`) and the HNSW search (:data:`~.queries.SEMANTIC`). One connection
runs them one after the other in one server process; with a second connection of the same
role the server runs them side by side on two cores, and the search takes the longer of the
two instead of their sum. :class:`SearchPeer` opens that connection on first use (same
parameters and password as the store's, autocommit) and runs statements on it in one worker
thread, so that it is only ever used from that thread. When it cannot be opened (the server's
connection limit, say) the store runs both statements on its own connection, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from verifai_desktop.store.pg.connect import open_plain

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

Rows = list[tuple[object, ...]]


class SearchPeer:
    """Statements run on a second connection of the role of ``conn``, in a worker thread."""

    def __init__(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        self._source = conn
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._unavailable = False

    def _submit(self, query: str, params: Mapping[str, object]) -> Future[Rows] | None:
        """Start ``query`` (with named ``params``) on the second connection.

        Returns:
            Its rows to come (``Future.result`` raises the statement's ``psycopg.Error``), or
            None when there is no second connection (it could not be opened; not tried again).
        """
        if self._unavailable:
            return None
        if self._pool is None:
            try:
                info = self._source.info  # its parameters (no password) and password
                self._conn = open_plain(info.dsn, info.password or None)
            except Exception as exc:  # psycopg.Error, or a password source that failed
                logger.warning(
                    "searching on one connection: a second could not be opened (%s)",
                    type(exc).__name__,
                )
                self._unavailable = True
                return None
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verifai-pg")
        return self._pool.submit(self._run, query, params)

    def both(
        self, first: tuple[str, Mapping[str, object]], second: tuple[str, Mapping[str, object]]
    ) -> tuple[Rows, Rows]:
        """The rows of two statements (each ``(query, named params)``): the first run on the
        second connection while the second runs on the store's, or both pipelined on the
        store's (one round trip) when there is no second connection.

        Raises:
            psycopg.Error: from either statement.
        """
        postponed = self._submit(*first)
        if postponed is None:
            with self._source.pipeline():
                one = self._source.execute(first[0].encode(), first[1])
                two = self._source.execute(second[0].encode(), second[1])
            return one.fetchall(), two.fetchall()
        rows = self._source.execute(second[0].encode(), second[1]).fetchall()
        return postponed.result(), rows

    def _run(self, query: str, params: Mapping[str, object]) -> Rows:
        assert self._conn is not None
        return self._conn.execute(query.encode(), params).fetchall()

    def close(self) -> None:
        """Wait for a running statement, then close the connection; idempotent."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
