"""Team collections: collections in a PostgreSQL store that the desktop app lists beside the
collections on this machine, and the check of a connection to one.

A team collection is a store URL without a password (:func:`team_url` builds it from the
app's form) and a collection name; the app keeps them in :func:`teams_path`
(``team_collections.toml`` beside ``settings.toml``, user-only) and never a password: that
comes from libpq's own sources, the system keyring
(:func:`~verifai_desktop.store.pg.credentials.keep_password`, the entry ``verifai --store``
reads) or the user (:mod:`verifai_desktop.store.pg.connect`). The app names a team collection
by its :attr:`TeamCollection.key`, ``URL#NAME``, where a collection on this machine is named by
its folder; :func:`open_team` opens one as the command line's ``--store URL --collection NAME``
does.
"""

from __future__ import annotations

import ipaddress
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import tomli_w

from verifai_desktop.errors import CollectionNotFound, SettingsError
from verifai_desktop.private import make_private_dir, write_private_text
from verifai_desktop.settings import Settings, data_root
from verifai_desktop.store.pg.connect import URL_SCHEMES, connect, is_store_url, redacted
from verifai_desktop.store.pg.credentials import PasswordPrompt, account
from verifai_desktop.store.pg.schema import schema_name
from verifai_desktop.store.pg.store import PgStore

SSLMODES = ("verify-full", "verify-ca", "require", "prefer", "allow", "disable")
"""libpq's ``sslmode`` values, the safest first (``verify-full``: encrypted, the server's
certificate signed by a trusted root and issued to the host name)."""

DEFAULT_PORT = 5432
"""PostgreSQL's port."""

LIBPQ_SSLMODE = "prefer"
"""libpq's ``sslmode`` when a URL gives none."""

TEAMS_FILE = "team_collections.toml"

_KEY_SEPARATOR = "#"


@dataclass(frozen=True, slots=True)
class TeamCollection:
    """A collection in a PostgreSQL store, as the app lists it.

    Attributes:
        url: the store's libpq URL, without a password (``postgresql://alice@db.example:5432/
            docs?sslmode=verify-full``).
        name: the collection's name in the store (its schema is ``verifai_<name>``).
    """

    url: str
    name: str

    @property
    def key(self) -> str:
        """How the app names it (``URL#NAME``): unlike a folder name, a store URL."""
        return f"{self.url}{_KEY_SEPARATOR}{self.name}"

    @property
    def sslmode(self) -> str:
        """The URL's ``sslmode`` (libpq's default, ``prefer``, when it gives none)."""
        values = parse_qs(urlsplit(self.url).query).get("sslmode")
        return values[-1] if values else LIBPQ_SSLMODE

    def server(self) -> str:
        """The server as ``user@host:port/database`` (no password, no options).

        Raises:
            MissingExtra: psycopg is not installed.
            StoreUnavailable: the URL is not a valid libpq URL (kind ``url``).
        """
        return redacted(self.url)

    def account(self) -> str:
        """The store's name in the system keyring, ``user@host:port/database``
        (:func:`~verifai_desktop.store.pg.credentials.account`, as ``verifai --store`` finds it).

        Raises:
            MissingExtra: psycopg is not installed.
            StoreUnavailable: the URL is not a valid libpq URL (kind ``url``).
        """
        self.server()
        from psycopg.conninfo import conninfo_to_dict

        return account(conninfo_to_dict(self.url))


def is_team_key(name: str) -> bool:
    """True when ``name`` (what the app calls a collection) is a :attr:`TeamCollection.key`."""
    return is_store_url(name) and _KEY_SEPARATOR in name


def team_of(key: str) -> TeamCollection:
    """The team collection a :attr:`TeamCollection.key` names.

    Raises:
        SettingsError: ``key`` is not a team collection's key.
    """
    url, _, name = key.rpartition(_KEY_SEPARATOR)
    if not is_team_key(key) or not name:
        raise SettingsError("team collection", "expected postgresql://...#COLLECTION")
    return TeamCollection(url, name)


def team_url(
    *, host: str, port: int, database: str, user: str, sslmode: str, sslrootcert: str = ""
) -> str:
    """The store URL of a server, without a password (the app's "Team collection" form).

    Args:
        host: a host name, an IP address, or a folder holding the server's Unix socket
            (an absolute path).
        port: 1 to 65535.
        database: the database holding the collections.
        user: the PostgreSQL role to connect as.
        sslmode: one of :data:`SSLMODES`.
        sslrootcert: the file of the root certificate(s) the server's is checked against; ''
            for libpq's default (``~/.postgresql/root.crt``).

    Returns:
        ``postgresql://USER@HOST:PORT/DATABASE?sslmode=...`` (a socket folder goes in the
        ``host`` parameter); every part percent-encoded.

    Raises:
        SettingsError: a field is empty or out of range, or ``sslmode`` is not libpq's.
    """
    host, database, user = host.strip(), database.strip(), user.strip()
    for field, value in (("server", host), ("database", database), ("user", user)):
        if not value:
            raise SettingsError(field, f"give the {field} of the PostgreSQL store")
    if not 1 <= port <= 65535:
        raise SettingsError("port", f"{port} is not a port; use 1 to 65535 (PostgreSQL: 5432)")
    if sslmode not in SSLMODES:
        raise SettingsError("sslmode", f"{sslmode!r} is not one of {', '.join(SSLMODES)}")
    query = {"sslmode": sslmode}
    if sslrootcert.strip():
        query["sslrootcert"] = str(Path(sslrootcert.strip()).expanduser())
    netloc = quote(user, safe="") + "@"
    if host.startswith("/"):
        query = {"host": host, "port": str(port)} | query
    else:
        netloc += f"{_bracketed(host)}:{port}"
    return (
        f"{URL_SCHEMES[0]}{netloc}/{quote(database, safe='')}?{urlencode(query, quote_via=quote)}"
    )


def _bracketed(host: str) -> str:
    """An IPv6 address in brackets, as a URL writes it; any other host as it is."""
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return quote(host, safe="")


def _holds_password(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.password) or "password" in parse_qs(parts.query)


# -- the list the app keeps ---------------------------------------------------------------


def teams_path() -> Path:
    """The file listing the team collections (``team_collections.toml`` in the data root)."""
    return data_root() / TEAMS_FILE


def load_teams(path: Path | None = None) -> list[TeamCollection]:
    """The team collections listed, in the order added (none when the file is missing).

    Raises:
        SettingsError: the file is not valid TOML or an entry is not a URL and a name.
    """
    path = path or teams_path()
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(str(path), f"not valid TOML ({exc}); fix or delete the file") from exc
    teams: list[TeamCollection] = []
    for entry in data.get("collection", []):
        url, name = (entry.get("url"), entry.get("name")) if isinstance(entry, dict) else ("", "")
        if not (isinstance(url, str) and is_store_url(url) and isinstance(name, str) and name):
            raise SettingsError(f"{path}: collection", "expected url = 'postgresql://...', name")
        teams.append(TeamCollection(url, name))
    return teams


def save_team(team: TeamCollection, path: Path | None = None) -> Path:
    """Add ``team`` to the list (kept once), user-only (mode 0600).

    Raises:
        SettingsError: its URL holds a password (never written anywhere).
        InvalidCollectionName: its name is not a PostgreSQL collection name.
        OSError: the file cannot be written.
    """
    if _holds_password(team.url):
        raise SettingsError(
            "team collection", "the URL holds a password; the system keyring keeps it instead"
        )
    schema_name(team.name)
    teams = [t for t in load_teams(path) if t != team] + [team]
    return _write(teams, path)


def forget_team(key: str, path: Path | None = None) -> None:
    """Remove the team collection named ``key`` from the list (nothing on the server changes).

    Raises:
        OSError: the file cannot be written.
    """
    _write([t for t in load_teams(path) if t.key != key], path)


def _write(teams: list[TeamCollection], path: Path | None) -> Path:
    path = path or teams_path()
    rows = [{"url": t.url, "name": t.name} for t in teams]
    make_private_dir(path.parent)
    write_private_text(path, tomli_w.dumps({"collection": rows}))
    return path


# -- opening and checking -------------------------------------------------------------------


def open_team(
    key: str,
    *,
    create: bool = False,
    settings: Settings | None = None,
    password_prompt: PasswordPrompt | None = None,
) -> PgStore:
    """Open the team collection named ``key``, as ``verifai --store URL --collection NAME``
    does (:meth:`PgStore.open`, which documents what it raises)."""
    team = team_of(key)
    return PgStore.open(
        team.url, team.name, create=create, settings=settings, password_prompt=password_prompt
    )


@dataclass(frozen=True, slots=True)
class ConnectionCheck:
    """What a successful connection test found.

    Attributes:
        server: ``user@host:port/database``.
        sslmode: the ``sslmode`` in use (:attr:`TeamCollection.sslmode`).
        encrypted: the connection is encrypted (TLS); False on a Unix socket or with a mode
            that let libpq fall back to plain text.
        socket: the connection is through a Unix socket (libpq never uses TLS there).
        documents: the documents this role may read in the collection; None when the
            database holds no collection of that name yet (adding files creates it).
    """

    server: str
    sslmode: str
    encrypted: bool
    socket: bool
    documents: int | None


def check_connection(
    team: TeamCollection, *, password_prompt: PasswordPrompt | None = None
) -> ConnectionCheck:
    """Connect to ``team``'s server and open its collection, as using it would.

    Args:
        team: the server and collection.
        password_prompt: gives the password when libpq and the system keyring have none.

    Raises:
        MissingExtra: psycopg or pgvector is not installed.
        StoreUnavailable: a kind per failure: ``url``, ``unreachable``, ``tls``,
            ``authentication``, ``extension`` (no pgvector), ``schema`` (a schema version
            this app cannot use) -- see :meth:`PgStore.open`.
        InvalidCollectionName: the name is not a PostgreSQL collection name.
    """
    schema_name(team.name)
    conn = connect(team.url, password_prompt=password_prompt)
    try:
        encrypted = bool(conn.pgconn.ssl_in_use)
        socket = conn.info.host.startswith("/")
    finally:
        conn.close()
    try:
        with PgStore.open(team.url, team.name, password_prompt=password_prompt) as store:
            documents: int | None = len(store.documents())
    except CollectionNotFound:
        documents = None
    return ConnectionCheck(team.server(), team.sslmode, encrypted, socket, documents)
