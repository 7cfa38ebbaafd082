"""Content words of a text, shared by the prompt's sentence ranking and the verifier's gate.

A content word is a lower-cased run of letters, digits and hyphens that starts with a letter
or a digit and is not one of :data:`STOP_WORDS` (English function words and question words).
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset(
    (  # noqa: SIM905 (a word list reads better as words)
        "a an and are as at be been by did do does for from had has have how in into is "
        "it its many much of on or than that the their there these this those to was were "
        "what when where which who whom why with"
    ).split()
)
"""Words that never count as content (English function words and question words)."""

_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")

STEM_CHARS = 5
"""Characters a word is cut to when compared by :func:`content_stems` ("associated" and
"association" share "assoc")."""


def content_stems(text: str) -> frozenset[str]:
    """The content words of ``text``, each cut to its first :data:`STEM_CHARS` characters
    (a crude stem, enough to tell whether two texts share a word); figures ("48", "3-year")
    count as words."""
    return frozenset(w[:STEM_CHARS] for w in _WORD.findall(text.lower()) if w not in STOP_WORDS)
