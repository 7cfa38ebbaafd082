"""File names (and other short text from the disk or from documents) made safe to show.

A POSIX file name is any bytes; Python decodes the ones that are not valid UTF-8 with
``surrogateescape`` (PEP 383), so ``b"bad\\xff.txt"`` becomes ``"bad\\udcff.txt"``, which no
terminal, SQLite text column or Qt label accepts. Names may also hold newlines and terminal
escape sequences (ESC), which would break or forge the lines the CLI prints.

URLs are shown without the credentials they may carry (``http://user:password@host/v1``,
``?api_key=...``): :func:`redact_url` for one URL, :func:`redact_urls` for a message that may
quote one (a client library's error).
"""

from __future__ import annotations

import re

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
