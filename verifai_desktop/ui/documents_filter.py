"""The library panel's documents filter: words, and ``author:``, ``year:`` and ``title:`` terms
matched against the metadata of documents ingested from a reference library (issue 43).

A filter is a few terms, all of which a row must match (case and accents ignored):

* ``author:cohan``: an author's (or editor's) family name starts with it;
* ``year:2020``, ``year:2018-2020``: the entry's year, or a range of years;
* ``title:specter`` or ``title:"two words"``: in the entry's title (the document's own title
  for a document without an entry);
* any other word (or quoted phrase): in the file name, the title, the authors or the reason.

A ``year:`` or ``author:`` term never matches a document without an entry, as ``verifai
search`` does not find one with them (:mod:`verifai_desktop.index.fields`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop.reference import Reference

FIELDS = ("author", "year", "title")
FILTER_PLACEHOLDER = "Filter: words, author:name, year:2020 or 2018-2020, title:word"

_TERM = re.compile(r'(?:(\w+):)?(?:"([^"]*)"?|(\S+))')
_YEARS = re.compile(r"^(\d{4})(?:\s*[-\u2013]\s*(\d{4}))?$")


@dataclass(frozen=True, slots=True)
class FilterTerm:
    """One term of a filter: ``field`` is ``"author"``, ``"year"``, ``"title"`` or ``""``
    (any text); ``text`` is folded (lower case, accents removed)."""

    field: str
    text: str


def fold(text: str) -> str:
    """``text`` in lower case without accents (``"Sundström"`` -> ``"sundstrom"``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def parse_filter(text: str) -> tuple[FilterTerm, ...]:
    """The terms of a filter as typed; an unknown ``field:`` is read as a plain word."""
    terms = []
    for m in _TERM.finditer(text):
        name, quoted, bare = m.group(1), m.group(2), m.group(3)
        value = quoted if quoted is not None else bare or ""
        field = (name or "").lower()
        if field and field not in FIELDS:
            value, field = f"{name}:{value}", ""
        if value.strip():
            terms.append(FilterTerm(field, fold(value.strip())))
    return tuple(terms)


def _year_matches(reference: Reference | None, text: str) -> bool:
    m = _YEARS.match(text)
    year = reference.year if reference is not None else None
    if m is None or year is None:
        return False
    low = int(m.group(1))
    high = int(m.group(2) or low)
    return low <= year <= high


def matches(
    terms: tuple[FilterTerm, ...],
    *,
    source: str,
    title: str = "",
    reason: str = "",
    reference: Reference | None = None,
) -> bool:
    """Whether a document matches every term (an empty filter matches every document)."""
    authors = [fold(a) for a in reference.authors] if reference is not None else []
    shown_title = fold(reference.title if reference is not None and reference.title else title)
    for term in terms:
        if term.field == "author":
            ok = any(a.startswith(term.text) or f" {term.text}" in f" {a}" for a in authors)
        elif term.field == "year":
            ok = _year_matches(reference, term.text)
        elif term.field == "title":
            ok = term.text in shown_title
        else:
            haystack = " ".join([fold(Path(source).name), shown_title, *authors, fold(reason)])
            ok = term.text in haystack
        if not ok:
            return False
    return True
