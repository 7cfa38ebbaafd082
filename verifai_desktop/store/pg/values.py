"""How the PostgreSQL store's values and errors cross to the server: sources that are not
valid UTF-8, metadata records, and psycopg's errors as the app's.

PostgreSQL ``text`` and ``jsonb`` hold UTF-8 only, while a file name Python decodes with
``surrogateescape`` (PEP 383) may hold lone surrogates; the embedded store keeps such a source
as its bytes (a SQLite BLOB), this store as :data:`BYTES_PREFIX` and their hex.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from verifai_desktop.errors import StoreUnavailable

BYTES_PREFIX = "bytes:"
"""How a source that is not valid UTF-8 is stored: this prefix and the hex of its bytes (a
valid source starting with the prefix is stored so too, so that the two never collide)."""


def stored_source(source: str) -> str:
    """A source as the ``documents.source`` column keeps it (the inverse of
    :func:`read_source`): itself, or :data:`BYTES_PREFIX` and the hex of its bytes when it does
    not encode as UTF-8 (a file name decoded with ``surrogateescape``)."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return BYTES_PREFIX + os.fsencode(source).hex()
    if source.startswith(BYTES_PREFIX):
        return BYTES_PREFIX + source.encode("utf-8").hex()
    return source


def read_source(value: object) -> str:
    """The source a ``documents.source`` value stands for (the inverse of
    :func:`stored_source`)."""
    text = str(value)
    if text.startswith(BYTES_PREFIX):
        return os.fsdecode(bytes.fromhex(text[len(BYTES_PREFIX) :]))
    return text


def metadata_json(data: Mapping[str, object]) -> str:
    """A metadata record as ``jsonb`` input: its JSON object, or that JSON as a JSON string
    when it holds an undecodable file name (a lone surrogate, which ``jsonb`` refuses)."""
    text = json.dumps(dict(data))
    if "\\ud" in text.lower():  # a \udXXX escape: a surrogate, perhaps lone
        return json.dumps(text)
    return text


@contextmanager
def server_errors(where: str) -> Iterator[None]:
    """psycopg's errors as the app's: a lost connection, a statement refused for want of a
    privilege or by row-level security.

    Raises:
        StoreUnavailable: kind ``unreachable`` (the connection was lost) or ``permission``.
    """
    import psycopg

    try:
        yield
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreUnavailable(where, "permission", str(exc.diag.message_primary)) from None
    except psycopg.OperationalError:
        raise StoreUnavailable(
            where, "unreachable", "the connection to the server was lost; nothing more was written"
        ) from None
