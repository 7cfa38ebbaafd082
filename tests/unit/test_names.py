"""Names made safe to show (names.py)."""

from __future__ import annotations

import os

from verifai_desktop.names import printable


def test_undecodable_bytes_and_control_characters_are_escaped() -> None:
    assert printable(os.fsdecode(b"bad\xff\xfe.txt")) == "bad\\xff\\xfe.txt"
    assert printable("two\nlines\tand\r\x1b[31mred\x7f\x9b.txt") == (
        "two\\nlines\\tand\\r\\x1b[31mred\\x7f\\x9b.txt"
    )
    assert printable("evil\u202etxt.exe") == "evil\\u202etxt.exe"
    # Printable text, accents and emoji included, is left alone.
    assert printable("Résumé 論文 🙂 C:\\x.pdf") == "Résumé 論文 🙂 C:\\x.pdf"
    printable(os.fsdecode(b"\xff\n")).encode("utf-8")  # always valid UTF-8
