"""File names (and other short text from the disk or from documents) made safe to show.

A POSIX file name is any bytes; Python decodes the ones that are not valid UTF-8 with
``surrogateescape`` (PEP 383), so ``b"bad\\xff.txt"`` becomes ``"bad\\udcff.txt"``, which no
terminal, SQLite text column or Qt label accepts. Names may also hold newlines and terminal
escape sequences (ESC), which would break or forge the lines the CLI prints.

A name that is not valid UTF-8 goes into JSON (``--json`` output, exports, the history) as
two fields (:func:`name_json`): the name shown (:func:`shown_name`) and its exact bytes in
base64 (``path_bytes_b64``), from which :func:`name_from_json` gives the name back.

URLs are shown without the credentials they may carry (``http://user:password@host/v1``,
``?api_key=...``): :func:`redact_url` for one URL, :func:`redact_urls` for a message that may
quote one (a client library's error).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 control characters (newline, ESC, ...), DEL, lone surrogates (undecodable bytes)
and the Unicode bidirectional overrides, which can make a name read as another."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character that could garble a terminal line or a label escaped.

    Undecodable bytes of a file name show as ``\\xff``, control characters as ``\\n``,
    ``\\t``, ``\\x1b``; everything else (accents, CJK, emoji) is kept as is.

    Args:
        text: a file name, path or reason, possibly holding surrogate-escaped bytes.

    Returns:
        Valid UTF-8 text with no control characters, safe to print on one line.
    """
    return _UNSAFE.sub(_escape, text)


_SURROGATE = re.compile("[\ud800-\udfff]")

BYTES_SUFFIX = "_bytes_b64"
"""Suffix of the JSON field that holds a name's exact bytes (``path`` -> ``path_bytes_b64``)."""


def _escape_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def is_valid_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: it holds no lone surrogate (no undecodable byte of a
    file name kept by ``surrogateescape``)."""
    return _SURROGATE.search(text) is None


def valid_utf8(text: str) -> str:
    """``text`` made valid UTF-8: each undecodable byte (``"\\udcff"``) becomes ``\\xff``, any
    other lone surrogate ``\\ud800``; everything else, newlines included, is kept.

    For text that must be stored or sent but need not be the exact bytes: a title taken from a
    file name, a reason quoting one, a question given on a command line of another encoding.
    """
    return _SURROGATE.sub(_escape_surrogate, text)


def shown_name(name: str | os.PathLike[str]) -> str:
    """A file name or path as JSON shows it: the name itself when it is valid UTF-8, else
    :func:`printable` (``r\\xe9sum\\xe9.txt``), whose exact bytes :func:`name_json` adds."""
    text = os.fspath(name)
    return text if is_valid_utf8(text) else printable(text)


def name_json(key: str, name: str | os.PathLike[str]) -> dict[str, str]:
    """The JSON fields of a file name or path: ``{key: shown}``, and, only when the name is not
    valid UTF-8, ``{key + "_bytes_b64": base64 of its exact bytes}`` (``os.fsencode``).

    ``b"/d/caf\\xe9/r\\xe9sum\\xe9 \\xff.txt"`` gives ``{"path": "/d/caf\\xe9/r\\xe9sum\\xe9
    \\xff.txt", "path_bytes_b64": "L2QvY2Fm6S9y6XN1bekg/y50eHQ="}``; a valid name, one field
    (``{"path": "/d/notes.txt"}``).
    Every ``--json`` output and export writes names through this; :func:`name_from_json`
    reads them back.

    Args:
        key: the field name (``"path"``, ``"source"``).
        name: the name, as Python decodes it (``surrogateescape``).

    Returns:
        One field, or two when the name is not valid UTF-8; always valid UTF-8 text.
    """
    text = os.fspath(name)
    if is_valid_utf8(text):
        return {key: text}
    raw = base64.b64encode(os.fsencode(text)).decode("ascii")
    return {key: printable(text), key + BYTES_SUFFIX: raw}


def names_json(key: str, names: Iterable[str | os.PathLike[str]]) -> dict[str, list[str | None]]:
    """The JSON fields of a list of names: ``{key: [shown, ...]}``, and, only when some name is
    not valid UTF-8, ``{key + "_bytes_b64": [base64 or null, ...]}`` in the same order (null
    for the names that are valid UTF-8).

    Args:
        key: the field name (``"removed"``).
        names: the names, as Python decodes them.
    """
    fields = [name_json(key, name) for name in names]
    out: dict[str, list[str | None]] = {key: [f[key] for f in fields]}
    if any(key + BYTES_SUFFIX in f for f in fields):
        out[key + BYTES_SUFFIX] = [f.get(key + BYTES_SUFFIX) for f in fields]
    return out


def name_from_json(data: Mapping[str, object], key: str) -> str:
    """The exact name :func:`name_json` wrote under ``key`` (decoded as Python decodes file
    names, so ``Path(name)`` opens the same file).

    Raises:
        KeyError: ``data`` has no ``key``.
        ValueError: ``key`` or its ``_bytes_b64`` field is not a text, or not base64.
    """
    raw = data.get(key + BYTES_SUFFIX)
    if raw is None:
        value = data[key]
        if not isinstance(value, str):
            raise ValueError(f"field {key!r} is not a text")
        return value
    if not isinstance(raw, str):
        raise ValueError(f"field {key + BYTES_SUFFIX!r} is not a text")
    try:
        return os.fsdecode(base64.b64decode(raw, validate=True))
    except binascii.Error as exc:
        raise ValueError(f"field {key + BYTES_SUFFIX!r} is not base64 ({exc})") from exc


def dumps_json(
    data: object,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    default: Callable[[Any], object] | None = None,
) -> str:
    """``json.dumps(data, ensure_ascii=False, indent=..., sort_keys=..., default=...)``, always
    valid UTF-8.

    A lone surrogate left in some text (an undecodable byte that no :func:`name_json` field
    carries) is written as ``\\xff`` (:func:`valid_utf8`), never as a raw byte or as a
    ``\\udcff`` escape, which strict JSON readers refuse.
    """
    text = json.dumps(data, ensure_ascii=False, indent=indent, sort_keys=sort_keys, default=default)
    return _SURROGATE.sub(lambda m: "\\" + _escape_surrogate(m), text)


REDACTED = "***"
"""What stands in a shown URL for its user name and password, or a secret query value."""

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s\"'<>]*@")
"""``scheme://`` and everything up to the last ``@`` before a blank or quote: the user
information of a URL. Greedy on purpose: a password may hold ``@``, ``/`` or ``#`` unescaped,
and showing too little of a URL is better than showing a password."""

_SECRET_QUERY = re.compile(
    r"(?i)([?&;](?:[a-z0-9_.-]*(?:key|token|secret|password|passwd|pwd|auth|sig|signature)"
    r"[a-z0-9_.-]*)=)[^&;#\s\"'<>]*"
)
"""A query parameter whose name says it holds a secret (``api_key``, ``access_token``,
``sig``) and its value."""


def redact_url(url: str) -> str:
    """``url`` without its credentials, safe to print, log or keep in a record.

    The user name and password (``http://user:password@host/v1``) become
    :data:`REDACTED` (``http://***@host/v1``), as does the value of a query parameter named
    like a secret (``?api_key=...``); everything else is kept, so the host and path still say
    which server is meant. A URL with no credentials comes back unchanged.

    Args:
        url: any URL, well formed or not.

    Returns:
        The URL with every credential replaced by :data:`REDACTED`.
    """
    return redact_urls(url)


def redact_urls(text: str) -> str:
    """``text`` (a message, a reason) with every URL in it passed through :func:`redact_url`.

    Args:
        text: text that may quote URLs with credentials.

    Returns:
        The text with every credential of a URL replaced by :data:`REDACTED`.
    """
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _SECRET_QUERY.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
