"""Connecting to the PostgreSQL store, with a clear error for every way it can fail.

A store is given as a libpq URL without a password (``postgresql://alice@db.example/docs?
sslmode=verify-full``); the password comes from where libpq looks for it (``PGPASSWORD``, the
password file ``~/.pgpass`` or ``PGPASSFILE``, a service file ``PGSERVICEFILE``), never from the
command line, settings, logs or records. :func:`redacted` is the form shown to the user.

psycopg is imported here, when a PostgreSQL store is first used: the embedded default needs
neither it nor pgvector (``pip install 'verifai-desktop[postgres]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifai_desktop.errors import MissingExtra, StoreUnavailable

if TYPE_CHECKING:
    import psycopg

URL_SCHEMES = ("postgresql://", "postgres://")
"""What makes a ``--store`` value a PostgreSQL store."""

CONNECT_TIMEOUT_S = 10
"""How long a connection attempt waits for the server (seconds)."""


def is_store_url(value: str | None) -> bool:
    """True when ``value`` names a PostgreSQL store (a ``postgresql://`` URL)."""
    return value is not None and value.startswith(URL_SCHEMES)


def _import_psycopg() -> None:
    try:
        import pgvector.psycopg  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise MissingExtra("a PostgreSQL store", "postgres", "psycopg 3 and pgvector") from exc


def redacted(url: str) -> str:
    """The server of ``url`` as ``user@host:port/database`` (no password, no options).

    Raises:
        StoreUnavailable: ``url`` is not a valid libpq URL (kind ``url``).
    """
    _import_psycopg()
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(url)
    except Exception as exc:  # psycopg.ProgrammingError: its message repeats the URL
        raise StoreUnavailable("(the URL given)", "url", "not a valid postgresql:// URL") from exc
    user = f"{params['user']}@" if params.get("user") else ""
    host = str(params.get("host") or "localhost")
    port = f":{params['port']}" if params.get("port") else ""
    return f"{user}{host}{port}/{params.get('dbname') or ''}"


def _classify(message: str) -> tuple[str, str]:
    """``(kind, advice)`` for a libpq connection failure message."""
    text = message.lower()
    if "password authentication failed" in text or "no password supplied" in text:
        return "authentication", (
            "authentication failed; give the password in PGPASSWORD or ~/.pgpass (never in the URL)"
        )
    if "authentication" in text or ("role" in text and "does not exist" in text):
        return "authentication", "the server refused this role; ask its administrator"
    if "ssl" in text or "certificate" in text or "tls" in text:
        return "tls", (
            "the TLS connection failed (sslmode, sslrootcert); with sslmode=verify-full the "
            "server certificate must match the host name"
        )
    if "database" in text and "does not exist" in text:
        return "unreachable", "the database does not exist on the server"
    return "unreachable", (
        "cannot reach the server (is it running, are host and port right, does a firewall "
        "block it?)"
    )


def connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    """Open a connection to the store, with the pgvector extension present and registered.

    Args:
        url: a libpq URL without a password.

    Returns:
        An open connection in autocommit mode (transactions are explicit).

    Raises:
        MissingExtra: psycopg or pgvector is not installed.
        StoreUnavailable: the URL holds a password or is malformed (kind ``url``), the server
            is unreachable (``unreachable``), TLS fails (``tls``), the password or role is
            refused (``authentication``), or the ``vector`` extension is missing and this role
            cannot create it (``extension``).
    """
    where = redacted(url)
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.conninfo import conninfo_to_dict

    if conninfo_to_dict(url).get("password"):
        raise StoreUnavailable(
            where, "url", "the URL holds a password; remove it and set PGPASSWORD or ~/.pgpass"
        )
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.OperationalError as exc:
        kind, advice = _classify(str(exc))
        raise StoreUnavailable(where, kind, advice) from None  # libpq's text may hold the URL
    try:
        row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is None:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise StoreUnavailable(
                    where,
                    "extension",
                    "the pgvector extension is not installed in this database and this role "
                    f"cannot create it ({exc.diag.message_primary}); ask the administrator "
                    "to run CREATE EXTENSION vector",
                ) from None
        register_vector(conn)
    except BaseException:
        conn.close()
        raise
    return conn
