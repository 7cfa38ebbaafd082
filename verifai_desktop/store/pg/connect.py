"""Connecting to the PostgreSQL store, with a clear error for every way it can fail.

A store is given as a libpq URL without a password (``postgresql://alice@db.example/docs?
sslmode=verify-full``); the password comes from where libpq looks for it (``PGPASSWORD``, the
password file ``~/.pgpass`` or ``PGPASSFILE``, a service file ``PGSERVICEFILE``), else from the
system keyring, else from the user when the front end can ask
(:mod:`verifai_desktop.store.pg.credentials`); never from the command line, settings, logs or
records. :func:`redacted` is the form shown to the user.

psycopg is imported here, when a PostgreSQL store is first used: the embedded default needs
neither it nor pgvector (``pip install 'verifai-desktop[postgres]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifai_desktop.errors import MissingExtra, StoreUnavailable
from verifai_desktop.store.pg.credentials import PasswordPrompt, account, keyring_password

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


NO_PASSWORD = "no password supplied"
"""What libpq says when the server asks for a password and it found none."""


def _classify(message: str) -> tuple[str, str]:
    """``(kind, advice)`` for a libpq connection failure message."""
    text = message.lower()
    if "password authentication failed" in text or NO_PASSWORD in text:
        return "authentication", (
            "authentication failed; give the password in PGPASSWORD, ~/.pgpass or the system "
            "keyring (never in the URL)"
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


def connect(
    url: str, *, password_prompt: PasswordPrompt | None = None
) -> psycopg.Connection[tuple[object, ...]]:
    """Open a connection to the store, with the pgvector extension present and registered.

    When the server asks for a password and libpq finds none, the system keyring's is used,
    else ``password_prompt``'s (:mod:`~verifai_desktop.store.pg.credentials`).

    Args:
        url: a libpq URL without a password.
        password_prompt: asks the user for the password, given the store's keyring user name
            (``user@host:port/database``); None when nobody can be asked.

    Returns:
        An open connection in autocommit mode (transactions are explicit).

    Raises:
        MissingExtra: psycopg or pgvector is not installed.
        StoreUnavailable: the URL holds a password or is malformed (kind ``url``), the server
            is unreachable (``unreachable``), TLS fails (``tls``), the password or role is
            refused or none was found (``authentication``), or the ``vector`` extension is
            missing and this role cannot create it (``extension``).
    """
    where = redacted(url)
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    if params.get("password"):
        raise StoreUnavailable(
            where, "url", "the URL holds a password; remove it and set PGPASSWORD or ~/.pgpass"
        )
    try:
        conn = open_plain(url, None)
    except psycopg.OperationalError as exc:
        if NO_PASSWORD not in str(exc):
            raise _failure(where, exc) from None
        conn = _open_with_password(url, where, account(params), password_prompt)
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


def _failure(where: str, exc: Exception) -> StoreUnavailable:
    """The error for a failed connection (libpq's own text is not shown: it may hold the URL)."""
    kind, advice = _classify(str(exc))
    return StoreUnavailable(where, kind, advice)


def open_plain(url: str, password: str | None) -> psycopg.Connection[tuple[object, ...]]:
    """A connection to ``url`` in autocommit mode (libpq's own password sources when
    ``password`` is None), without the checks of :func:`connect`.

    Raises:
        psycopg.OperationalError: the server refused or could not be reached.
    """
    import psycopg

    if password is None:  # libpq's own sources (PGPASSWORD, ~/.pgpass, the service file)
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    return psycopg.connect(
        url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, password=password
    )


def _open_with_password(
    url: str, where: str, name: str, password_prompt: PasswordPrompt | None
) -> psycopg.Connection[tuple[object, ...]]:
    """Connect with the keyring's password for ``name``, else the one the user gives."""
    import psycopg

    found = keyring_password(name)
    password, source = found.password, "the system keyring's password"
    if password is None and password_prompt is not None:
        password, source = password_prompt(name), "the password given"
    if not password:
        raise StoreUnavailable(
            where,
            "authentication",
            "the server asks for a password and none was found in PGPASSWORD, ~/.pgpass or "
            f"the service file; {found.note}",
        )
    try:
        return open_plain(url, password)
    except psycopg.OperationalError as exc:
        failure = _failure(where, exc)
        if failure.kind != "authentication":
            raise failure from None
        raise StoreUnavailable(
            where, "authentication", f"the server refused {source} for {name}"
        ) from None
