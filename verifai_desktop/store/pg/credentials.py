"""Where the password of a PostgreSQL store comes from when libpq finds none.

libpq looks first, in its own order: ``PGPASSWORD``, the password file (``PGPASSFILE``, else
``~/.pgpass``) and the service file (``PGSERVICEFILE``). When the server asks for a password and
libpq has none, the store looks in the system keyring (the ``keyring`` package; service
:data:`KEYRING_SERVICE`, user name the store's :func:`account`, ``user@host:port/database``),
and then asks the front end, when it can ask (a terminal, a dialog). The password is handed to
libpq for that one connection only: it is never written to settings, logs, the answer history
or audit records, and never shown in a message.
"""

from __future__ import annotations

import getpass
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

KEYRING_SERVICE = "verifai-desktop-postgresql"
"""The keyring service under which store passwords are looked up (user name: :func:`account`)."""

PasswordPrompt = Callable[[str], str | None]
"""Asks the user for the password of a store (given its :func:`account`); None: not given."""


@dataclass(frozen=True, slots=True)
class Lookup:
    """What the keyring gave.

    Attributes:
        password: the password kept for the store, or None.
        note: why there is none, for the user ('' when there is one): no entry, no keyring
            backend, or the ``keyring`` package missing.
    """

    password: str | None
    note: str


def account(params: Mapping[str, object]) -> str:
    """The store's keyring user name, ``user@host:port/database``, from libpq connection
    parameters (``psycopg.conninfo.conninfo_to_dict`` of its URL); the user and database
    default as libpq's do (``PGUSER``, else the login name; the user name)."""
    user = str(params.get("user") or os.environ.get("PGUSER") or getpass.getuser())
    host = str(params.get("host") or os.environ.get("PGHOST") or "localhost")
    port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
    database = str(params.get("dbname") or os.environ.get("PGDATABASE") or user)
    return f"{user}@{host}:{port}/{database}"


def keyring_password(name: str) -> Lookup:
    """The password the system keyring keeps for the store ``name`` (:func:`account`).

    Never raises: a keyring that is missing, locked or broken is a :attr:`Lookup.note`.
    """
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return Lookup(None, "the keyring package is not installed (pip install keyring)")
    try:
        password = keyring.get_password(KEYRING_SERVICE, name)
    except (KeyringError, RuntimeError) as exc:
        log.info("no system keyring for the store password: %s", type(exc).__name__)
        return Lookup(None, f"no system keyring is available ({type(exc).__name__})")
    if password is None:
        return Lookup(
            None,
            f"the system keyring has none (keep it there with: keyring set {KEYRING_SERVICE} "
            f"{name})",
        )
    return Lookup(password, "")


def keep_password(name: str, password: str) -> str:
    """Keep ``password`` in the system keyring for the store ``name`` (:func:`account`), where
    :func:`keyring_password` (the app and ``verifai --store``) finds it.

    Returns:
        '' when kept, else why not (the ``keyring`` package missing, no keyring backend).
        Never raises, and never shows the password.
    """
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return "the keyring package is not installed (pip install keyring)"
    try:
        keyring.set_password(KEYRING_SERVICE, name, password)
    except (KeyringError, RuntimeError) as exc:
        log.info("cannot keep the store password in a keyring: %s", type(exc).__name__)
        return f"no system keyring is available ({type(exc).__name__})"
    return ""
