"""File names (and other short text from the disk or from documents) made safe to show.

A POSIX file name is any bytes; Python decodes the ones that are not valid UTF-8 with
``surrogateescape`` (PEP 383), so ``b"bad\\xff.txt"`` becomes ``"bad\\udcff.txt"``, which no
terminal, SQLite text column or Qt label accepts. Names may also hold newlines and terminal
escape sequences (ESC), which would break or forge the lines the CLI prints.
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
