"""Where a passage of a text file (TXT, Markdown) sits in the file as written: its offsets and
line, so that the app shows the whole file scrolled to the passage (issue 42, item 10).

A passage's text is the parsed text (Markdown rendered, whitespace folded), not the file's
bytes, so its offsets cannot be used on the file. It is found again by its letters and digits
alone: both texts are reduced to their alphanumeric characters, lower-cased, and the passage's
are searched in the file's; the match maps back to offsets into the file. Markup, spacing and
punctuation that the parser changed do not matter; a passage whose words the parser reordered
or joined (a link's URL dropped in the middle) is found by its first and its last words.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.ingest.text import decode_text

log = logging.getLogger(__name__)

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown"})
"""Files shown whole in the document view."""
MAX_SOURCE_BYTES = 2 * 1024 * 1024
"""A larger text file is not read whole for display (the passage alone is shown)."""
ANCHOR_CHARS = 40
"""Alphanumeric characters of a passage's start and end searched when the whole is not found."""


@dataclass(frozen=True, slots=True)
class _Folded:
    """A text reduced to its alphanumeric characters, lower-cased, with their offsets."""

    chars: str
    offsets: tuple[int, ...]  # offsets[i]: where chars[i] is in the original text


def _fold(text: str) -> _Folded:
    pairs = [(c.lower(), i) for i, c in enumerate(text) if c.isalnum()]
    return _Folded("".join(c for c, _ in pairs), tuple(i for _, i in pairs))


@dataclass(frozen=True, slots=True)
class SourceText:
    """A text file as written, ready to have passages found in it.

    Attributes:
        path: the file.
        text: its whole text, decoded as the parser decodes it.
    """

    path: Path
    text: str
    _folded: _Folded

    @classmethod
    def of(cls, path: Path, text: str) -> SourceText:
        """``text`` of ``path``, folded once for every search."""
        return cls(path, text, _fold(text))

    def locate(self, needle: str, *, after: int = 0) -> tuple[int, int] | None:
        """Offsets ``[start, end)`` into :attr:`text` of ``needle`` (parsed text: its letters
        and digits are compared, lower-cased), the first match at or after offset ``after``;
        None when neither it nor its first and last :data:`ANCHOR_CHARS` letters are found."""
        target = _fold(needle).chars
        folded = self._folded
        if not target:
            return None
        first = next((i for i, off in enumerate(folded.offsets) if off >= after), None)
        if first is None:
            return None
        at = folded.chars.find(target, first)
        if at >= 0:
            return folded.offsets[at], folded.offsets[at + len(target) - 1] + 1
        # Not whole: the parser dropped or reordered something inside (a link's address).
        # Found by its last letters, then the nearest start before them.
        tail = target[-ANCHOR_CHARS:]
        end = folded.chars.find(tail, first)
        if end >= 0:
            end += len(tail)
            window = max(first, end - 2 * len(target))
            for size in (ANCHOR_CHARS, ANCHOR_CHARS // 2, ANCHOR_CHARS // 4):
                start = folded.chars.rfind(target[:size], window, end)
                if start >= 0:
                    return folded.offsets[start], folded.offsets[end - 1] + 1
        head = target[:ANCHOR_CHARS]
        start = folded.chars.find(head, first)
        if start < 0:
            return None
        return folded.offsets[start], folded.offsets[start + len(head) - 1] + 1

    def line_of(self, offset: int) -> int:
        """1-based line number of offset ``offset`` into :attr:`text`."""
        return self.text.count("\n", 0, max(0, offset)) + 1


def shows_whole(path: Path) -> bool:
    """Whether ``path`` is a text file the app shows whole (:data:`TEXT_SUFFIXES`)."""
    return path.suffix.lower() in TEXT_SUFFIXES


def read_source(path: Path) -> SourceText | None:
    """The text file ``path`` as written, or None when it is no text file, is missing, larger
    than :data:`MAX_SOURCE_BYTES` or cannot be read (logged). Cached by path, size and
    modification time, so a changed file is read again."""
    if not shows_whole(path):
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    if stat.st_size > MAX_SOURCE_BYTES:
        return None
    return _read(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _read(path: Path, size_bytes: int, mtime_ns: int) -> SourceText | None:
    try:
        return SourceText.of(path, decode_text(path, path.read_bytes()))
    except Exception as exc:  # unreadable or undecodable: the passage alone is shown
        log.warning("cannot show %s whole: %s", path, exc)
        return None


def passage_line(path: Path, passage_text: str) -> int | None:
    """The 1-based line of ``path`` where ``passage_text`` (a chunk of it) starts, or None when
    the file is not shown whole or the passage is not found in it."""
    source = read_source(path)
    if source is None:
        return None
    span = source.locate(passage_text)
    return source.line_of(span[0]) if span is not None else None
