"""A real PostgreSQL 16 with pgvector for the PostgreSQL store's tests, started from the
``pgserver`` package (the test extra) in a folder of the test's, with the roles of a team.

Roles: ``vowner`` (creates and ingests collections, member of both groups), groups ``team_a``
and ``team_b`` (no login), ``alice`` (in team_a), ``bob`` (in team_b) and ``eve`` (in no
group); a database ``novector`` without the pgvector extension. Also: a port refusing TLS
(:func:`tls_refused`) and an in-memory system keyring (:class:`MemoryKeyring`).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from keyring.backend import KeyringBackend

ROLES = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE ROLE vowner LOGIN;
GRANT CREATE ON DATABASE postgres TO vowner;
CREATE ROLE team_a;
CREATE ROLE team_b;
GRANT team_a, team_b TO vowner;
CREATE ROLE alice LOGIN IN ROLE team_a;
CREATE ROLE bob LOGIN IN ROLE team_b;
CREATE ROLE eve LOGIN;
CREATE DATABASE novector;
"""


class Server:
    """The running server: its socket folder, its data folder and SQL as the superuser."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.host = str(server.get_uri()).split("host=", 1)[1]
        self.pgdata = Path(server.pgdata)

    def url(self, role: str, database: str = "postgres") -> str:
        """A URL for ``role`` (no password: the socket trusts local roles)."""
        return f"postgresql://{role}@/{database}?host={self.host}"

    def psql(self, sql: str) -> str:
        return str(self.server.psql(sql))

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        """The rows of ``query`` run as the superuser."""
        import psycopg

        with psycopg.connect(str(self.server.get_uri())) as conn:
            return conn.execute(query.encode()).fetchall()


@contextmanager
def team_server(pgdata: Path) -> Iterator[Server]:
    """A server in ``pgdata`` with the roles above, stopped when the block ends."""
    from pgserver.postgres_server import get_server

    server = get_server(pgdata, cleanup_mode="stop")
    try:
        s = Server(server)
        s.psql(ROLES)
        yield s
    finally:
        server.cleanup()


@contextmanager
def tls_refused() -> Iterator[int]:
    """A TCP port whose peer answers PostgreSQL's TLS request with "no" (pgserver listens on
    a Unix socket only, where libpq never uses TLS)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(8)  # SSLRequest
            conn.sendall(b"N")
            conn.recv(1)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        listener.close()


class MemoryKeyring(KeyringBackend):
    """The system keyring of a test: entries in memory."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.kept: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.kept.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.kept[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        del self.kept[(service, username)]
