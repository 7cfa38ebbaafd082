"""Names made safe to show (names.py)."""

from __future__ import annotations

import os

from verifai_desktop.names import printable, redact_url, redact_urls


def test_undecodable_bytes_and_control_characters_are_escaped() -> None:
    assert printable(os.fsdecode(b"bad\xff\xfe.txt")) == "bad\\xff\\xfe.txt"
    assert printable("two\nlines\tand\r\x1b[31mred\x7f\x9b.txt") == (
        "two\\nlines\\tand\\r\\x1b[31mred\\x7f\\x9b.txt"
    )
    assert printable("evil\u202etxt.exe") == "evil\\u202etxt.exe"
    # Printable text, accents and emoji included, is left alone.
    assert printable("Résumé 論文 🙂 C:\\x.pdf") == "Résumé 論文 🙂 C:\\x.pdf"
    printable(os.fsdecode(b"\xff\n")).encode("utf-8")  # always valid UTF-8


def test_credentials_are_taken_out_of_urls() -> None:
    """Issue 30, row 12: a URL shown, logged or kept names the server, never its password."""
    assert redact_url("http://user:password@host/v1") == "http://***@host/v1"
    assert (
        redact_url("https://token@api.example.com:8443/v1") == "https://***@api.example.com:8443/v1"
    )
    # A password holding '@', '/' or '#' unescaped is still hidden whole.
    assert redact_url("http://me:p@ss/w#rd@10.0.0.2/v1") == "http://***@10.0.0.2/v1"
    assert redact_url("http://h/v1?api_key=SECRET&model=m&access_token=T") == (
        "http://h/v1?api_key=***&model=m&access_token=***"
    )
    for plain in ("http://127.0.0.1:8080/v1", "https://api.example.com/v1?model=m", "", "x"):
        assert redact_url(plain) == plain
    assert redact_urls("cannot reach 'http://u:pw@h/v1' nor https://a:b@c (timeout)") == (
        "cannot reach 'http://***@h/v1' nor https://***@c (timeout)"
    )
