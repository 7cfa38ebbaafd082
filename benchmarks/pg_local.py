"""Shared by the PostgreSQL benchmarks (``pg_retrieval.py``, ``scale.py``): a throw-away local
PostgreSQL 16 with pgvector from the ``pgserver`` package (the test extra), the server's
settings as a line, progress on stderr and the machine's load.

The server runs in a folder of the caller's (stopped when the block ends; the caller deletes
the folder) and listens on a Unix socket only. The benchmarks connect as ``bench``, a plain
login role that may create schemas (a collection's owner, as in a deployment): a superuser would
skip row-level security, which every search of the PostgreSQL store pays for.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from verifai_desktop.domain import Progress

BENCH_ROLE = "bench"
"""The role the benchmarks connect as (owner of the collections they create)."""

SHOWN_SETTINGS = ("shared_buffers", "work_mem", "maintenance_work_mem", "max_wal_size")
"""Server settings printed beside the figures."""


@contextmanager
def local_server(pgdata: Path, conf: Mapping[str, str] | None = None) -> Iterator[str]:
    """Start PostgreSQL with pgvector in ``pgdata`` and yield the URL of :data:`BENCH_ROLE`.

    Args:
        pgdata: an empty (or missing) folder whose parent exists; short, since the server's
            Unix socket lives in it (at most about 100 characters).
        conf: server settings (``ALTER SYSTEM``; the server is restarted to apply them), e.g.
            ``{"shared_buffers": "4GB"}``.

    Yields:
        ``postgresql://bench@/postgres?host=<socket folder>`` (no password: the socket
        trusts local roles).

    Raises:
        ImportError: ``pgserver`` is not installed (``pip install -e '.[test]'``).
        subprocess.CalledProcessError: the server did not start or a setting was refused.
    """
    from pgserver.postgres_server import get_server

    server = get_server(pgdata, cleanup_mode="stop")
    try:
        if conf:
            server.psql("".join(f"ALTER SYSTEM SET {k} = '{v}';\n" for k, v in conf.items()))
            server.cleanup()
            server = get_server(pgdata, cleanup_mode="stop")
        server.psql(
            "CREATE EXTENSION IF NOT EXISTS vector;\n"
            f"CREATE ROLE {BENCH_ROLE} LOGIN;\n"
            f"GRANT CREATE ON DATABASE postgres TO {BENCH_ROLE};\n"
        )
        host = str(server.get_uri()).split("host=", 1)[1]
        yield f"postgresql://{BENCH_ROLE}@/postgres?host={host}"
    finally:
        server.cleanup()


def stderr_progress(every_s: float = 10.0) -> Callable[[Progress], None]:
    """A progress callback printing to stderr at most every ``every_s`` seconds."""
    last = 0.0

    def report(p: Progress) -> None:
        nonlocal last
        if time.monotonic() - last >= every_s or (p.total is not None and p.done == p.total):
            last = time.monotonic()
            of = f"/{p.total}" if p.total is not None else ""
            print(f"  {p.stage}: {p.done}{of} {p.unit} (load {load()})", file=sys.stderr)

    return report


@contextmanager
def postgres_url(store: str | None) -> Iterator[str]:
    """``store``, or the URL of a throw-away local server (stopped and deleted at the end)."""
    if store is not None:
        yield store
        return
    with (
        tempfile.TemporaryDirectory(prefix="pgb") as folder,
        local_server(Path(folder) / "pgdata") as url,
    ):
        yield url


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store URL``: the PostgreSQL server to use instead of a throw-away local one."""
    parser.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="a PostgreSQL server to use (default: a throw-away local one)",
    )


def server_line(url: str) -> str:
    """The server's version, pgvector's and :data:`SHOWN_SETTINGS`, as one line."""
    import psycopg

    with psycopg.connect(url) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        shown = [
            f"{name} {row[0] if row else '?'}"
            for name in SHOWN_SETTINGS
            for row in [conn.execute(f"SHOW {name}".encode()).fetchone()]
        ]
    return (
        f"PostgreSQL {version[0] if version else '?'}, pgvector {vector[0] if vector else '?'}, "
        + ", ".join(shown)
    )


def uptime() -> str:
    """The ``uptime`` line (load averages over 1, 5 and 15 minutes)."""
    done = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def load() -> str:
    """The 1-minute load average now, e.g. ``"1.52"`` (2 cores: above 2 means waiting)."""
    return f"{os.getloadavg()[0]:.2f}"
