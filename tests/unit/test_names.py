"""Names made safe to show (names.py)."""

from __future__ import annotations

import base64
import json
import os

import pytest

from verifai_desktop.names import (
    dumps_json,
    name_from_json,
    name_json,
    names_json,
    printable,
    redact_url,
    redact_urls,
    valid_utf8,
)


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


ODD = os.fsdecode(b"/docs/caf\xe9/r\xe9sum\xe9 \xff.txt")
"""A Latin-1 folder and file name, as Python decodes it (surrogateescape)."""


def test_a_name_that_is_not_utf8_goes_into_json_shown_escaped_with_its_exact_bytes() -> None:
    """Issue 30, row 2: one helper writes every name into JSON; valid names are untouched."""
    fields = name_json("path", ODD)
    assert fields == {
        "path": "/docs/caf\\xe9/r\\xe9sum\\xe9 \\xff.txt",
        "path_bytes_b64": base64.b64encode(b"/docs/caf\xe9/r\xe9sum\xe9 \xff.txt").decode(),
    }
    assert name_from_json(fields, "path") == ODD
    for valid in ("/docs/résumé.txt", "two\nlines.txt", "/docs/bad\\xff.txt"):
        assert name_json("path", valid) == {"path": valid}
        assert name_from_json({"path": valid}, "path") == valid
    assert names_json("removed", ["/a.txt", ODD]) == {
        "removed": ["/a.txt", fields["path"]],
        "removed_bytes_b64": [None, fields["path_bytes_b64"]],
    }
    assert names_json("removed", ["/a.txt"]) == {"removed": ["/a.txt"]}
    with pytest.raises(ValueError, match="not base64"):
        name_from_json({"path": "x", "path_bytes_b64": "%%%"}, "path")
    # Any undecodable byte left in other text is escaped: the JSON is always strict UTF-8.
    text = dumps_json({"title": ODD, "lone": "\ud800"}, indent=2)
    text.encode("utf-8")
    assert json.loads(text) == {"title": fields["path"], "lone": "\\ud800"}
    assert valid_utf8(ODD + "\n") == fields["path"] + "\n"
