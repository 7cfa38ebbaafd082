"""Rows read straight from the pages of a damaged SQLite file, without its b-tree.

SQLite finds a row by walking its table's b-tree from the root page down; when an interior
page (the root of a table with more than one leaf) is overwritten, every row below it becomes
unreachable, though the leaf pages holding them are intact. This reads every page that looks
like a table leaf and decodes its cells (with their overflow chains), as the ``sqlite3`` shell's
``.recover`` does, so the caller can take back rows the b-tree no longer reaches. Which table
a row belongs to is not known here: the caller tells its tables apart by their columns.

File format: https://www.sqlite.org/fileformat2.html (database header, b-tree pages, cell
payload and overflow, record format). Only what a table leaf needs is decoded.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

_MAGIC = b"SQLite format 3\x00"
DEFAULT_PAGE_BYTES = 4096
"""Page size assumed when the database header is unreadable (SQLite's default since 3.12.0)."""
_TABLE_LEAF = 0x0D

Value = int | float | str | bytes | None
"""A column value as SQLite stores it."""


class _Unreadable(Exception):
    """A cell that does not decode (a damaged page, a broken overflow chain)."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A SQLite varint at ``data[at]``: (value, offset after it)."""
    value = 0
    for i in range(9):
        if at + i >= len(data):
            raise _Unreadable("varint past the end")
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")  # pragma: no cover


def _geometry(data: bytes) -> tuple[int, int]:
    """(page size, usable bytes per page) from the header, or the defaults when it is damaged."""
    if data[:16] == _MAGIC and len(data) >= 100:
        size = struct.unpack(">H", data[16:18])[0]
        size = 65536 if size == 1 else size
        if size >= 512 and size & (size - 1) == 0:
            return size, size - data[20]
    return DEFAULT_PAGE_BYTES, DEFAULT_PAGE_BYTES


def table_leaf_rows(path: Path) -> Iterator[tuple[int, tuple[Value, ...]]]:
    """``(rowid, values)`` of every cell of every page of ``path`` that is a table b-tree leaf
    and decodes whole; cells that do not decode are passed over.

    Args:
        path: a SQLite database file, possibly damaged (its write-ahead log is not read).

    Yields:
        Rowid and column values (``None``, ``int``, ``float``, ``str``, ``bytes``), in page
        order. Text is decoded as UTF-8, strictly.

    Raises:
        OSError: the file cannot be read.
    """
    data = path.read_bytes()
    page_bytes, usable = _geometry(data)
    for number in range(1, len(data) // page_bytes + 1):
        base = (number - 1) * page_bytes
        head = base + (100 if number == 1 else 0)
        if data[head] != _TABLE_LEAF:
            continue
        cells = struct.unpack(">H", data[head + 3 : head + 5])[0]
        pointers = head + 8
        if pointers + 2 * cells > base + page_bytes:
            continue
        for i in range(cells):
            offset = struct.unpack(">H", data[pointers + 2 * i : pointers + 2 * i + 2])[0]
            if not head + 8 <= base + offset < base + usable:
                continue
            try:
                yield _cell(data, base + offset, base + usable, page_bytes, usable)
            except (_Unreadable, UnicodeDecodeError, struct.error):
                continue


def _cell(
    data: bytes, at: int, page_end: int, page_bytes: int, usable: int
) -> tuple[int, tuple[Value, ...]]:
    """Decode the table leaf cell at ``data[at]`` (payload size, rowid, payload, overflow)."""
    size, at = _varint(data, at)
    rowid, at = _varint(data, at)
    most_local = usable - 35
    if size <= most_local:
        local = size
    else:
        least = (usable - 12) * 32 // 255 - 23
        local = least + (size - least) % (usable - 4)
        local = local if local <= most_local else least
    if at + local > page_end:
        raise _Unreadable("cell past its page")
    payload = bytearray(data[at : at + local])
    if local < size:
        page = struct.unpack(">I", data[at + local : at + local + 4])[0]
        seen: set[int] = set()
        while len(payload) < size:
            if page < 2 or page in seen or page * page_bytes > len(data):
                raise _Unreadable("broken overflow chain")
            seen.add(page)
            start = (page - 1) * page_bytes
            page = struct.unpack(">I", data[start : start + 4])[0]
            payload += data[start + 4 : start + usable][: size - len(payload)]
    return rowid, _record(bytes(payload))


def _record(payload: bytes) -> tuple[Value, ...]:
    """The column values of a record (header of serial types, then the values)."""
    header_size, at = _varint(payload, 0)
    if not 0 < header_size <= len(payload):
        raise _Unreadable("bad record header")
    types: list[int] = []
    while at < header_size:
        serial, at = _varint(payload, at)
        types.append(serial)
    body = header_size
    values: list[Value] = []
    for serial in types:
        value, body = _value(payload, body, serial)
        values.append(value)
    if body != len(payload):
        raise _Unreadable("record length does not match its payload")
    return tuple(values)


_INT_BYTES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _value(payload: bytes, at: int, serial: int) -> tuple[Value, int]:
    """One value of serial type ``serial`` at ``payload[at]``: (value, offset after it)."""
    if serial == 0:
        return None, at
    if serial in _INT_BYTES:
        n = _INT_BYTES[serial]
        if at + n > len(payload):
            raise _Unreadable("value past the end")
        return int.from_bytes(payload[at : at + n], "big", signed=True), at + n
    if serial == 7:
        return struct.unpack(">d", payload[at : at + 8])[0], at + 8
    if serial in (8, 9):
        return serial - 8, at
    if serial < 12:
        raise _Unreadable(f"reserved serial type {serial}")
    n = (serial - 12) // 2
    if at + n > len(payload):
        raise _Unreadable("value past the end")
    raw = payload[at : at + n]
    return (raw.decode("utf-8") if serial % 2 else bytes(raw)), at + n
