"""When a file an earlier ingest refused is worth reading again although it is unchanged: a
file refused as too large that the chunk limit now takes, a file the time limit stopped that a
longer limit may finish (:func:`verifai_desktop.store.writer.ingest_paths`)."""

from __future__ import annotations

import re

from verifai_desktop.domain import DocStatus
from verifai_desktop.store.records import DocumentRecord


def too_large_reason(chunks: int, limit: int) -> str:
    """The reason a file making ``chunks`` chunks, over ``limit``, is refused."""
    return (
        f"too large: {chunks:,} chunks, over the limit of {limit:,} per file "
        "(setting ingest.max_chunks_per_file); nothing indexed"
    )


_TOO_LARGE = re.compile(r"^too large: ([\d,]+) chunks")


def fits_now(record: DocumentRecord | None, limit: int | None) -> bool:
    """True for a file refused as too large that the current limit would take (retried
    although unchanged)."""
    if record is None or record.status is not DocStatus.FAILED:
        return False
    m = _TOO_LARGE.match(record.reason)
    return m is not None and (limit is None or int(m.group(1).replace(",", "")) <= limit)


_TIMED_OUT = re.compile(r"^timed out after ([0-9.e+]+) s")


def longer_limit_now(record: DocumentRecord | None, timeout_s: float | None) -> bool:
    """Whether a file that failed because the time limit per file stopped it (the parser
    worker's ``"timed out after N s"``) would get a longer limit now (``timeout_s``)."""
    if record is None or record.status is not DocStatus.FAILED or timeout_s is None:
        return False
    m = _TIMED_OUT.match(record.reason)
    return m is not None and timeout_s > float(m.group(1))
