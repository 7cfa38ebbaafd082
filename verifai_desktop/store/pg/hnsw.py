"""pgvector's HNSW search settings of one PostgreSQL store connection.

Row-level security filters the HNSW index's candidates after the index search: pgvector before
0.8 returns at most ``hnsw.ef_search`` candidates, so a role that reads a small part of a large
collection gets fewer than ``limit`` hits from one search. :class:`HnswScan` asks for ``limit``
candidates (pgvector's default is 40); with pgvector 0.8 or later it turns on iterative index
scans (``hnsw.iterative_scan = strict_order``: the index is scanned on, in distance order,
until ``limit`` rows pass the filter or ``hnsw.max_scan_tuples`` were read); before 0.8 the
store searches once more with the widest list, :data:`EF_SEARCH_MAX`, when the filter left too
few (:meth:`HnswScan.widest`). Older pgvector reserves the ``hnsw.`` prefix without the
iterative setting, so that one is set only where the extension has it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

EF_SEARCH_MAX = 1000
"""pgvector's largest ``hnsw.ef_search``: the HNSW candidates one vector search can return."""

EF_SEARCH_MIN = 40
"""pgvector's default ``hnsw.ef_search``."""


class HnswScan:
    """The ``hnsw.*`` settings of one connection (session settings, set when they change).

    Args:
        one: runs a statement with parameters on the connection and returns its first value.
    """

    def __init__(self, one: Callable[[str, Sequence[object]], object]) -> None:
        self._one = one
        self.ef_search = 0
        """The session's ``hnsw.ef_search`` as set here (0: not yet)."""

    def widen(self, limit: int) -> None:
        """Let one HNSW search return ``limit`` candidates (at most :data:`EF_SEARCH_MAX`);
        on the first call, turn on iterative scans where pgvector has them (>= 0.8)."""
        ef = min(max(limit, EF_SEARCH_MIN), EF_SEARCH_MAX)
        if ef <= self.ef_search:
            return
        if self.ef_search == 0 and self._one(
            "SELECT string_to_array(extversion, '.')::int[] >= '{0,8}'"
            " FROM pg_extension WHERE extname = 'vector'",
            (),
        ):
            self._one("SELECT set_config('hnsw.iterative_scan', 'strict_order', false)", ())
        self._set(ef)

    @contextmanager
    def widest(self) -> Iterator[None]:
        """The block's searches return up to :data:`EF_SEARCH_MAX` candidates; the setting
        before is restored after."""
        before = self.ef_search
        self._set(EF_SEARCH_MAX)
        try:
            yield
        finally:
            self._set(before)

    def _set(self, ef: int) -> None:
        self._one("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef),))
        self.ef_search = ef
