"""Search terms on a document's bibliographic metadata: ``author:``, ``year:`` and ``title:``.

A search may name metadata beside its free text (issue 43): ``author:cohan``,
``author:"van der Berg"``, ``year:2020``, ``year:2018-2020``, ``title:specter``, combined with
AND; the rest of the query is searched as before. They match the fields the lexical index keeps
per chunk from its document's reference-manager entry
(:class:`~verifai_desktop.reference.Reference`; :mod:`verifai_desktop.index.lexical`): authors'
family names (lower-cased, accents folded), the title (analysed like the text) and the year.
A document without an entry matches no field term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FIELD_NAMES = ("author", "year", "title")
"""The metadata fields a query can name."""

_TERM = re.compile(r'(?<!\S)(author|year|title):(?:"([^"]*)"|(\S+))', re.IGNORECASE)
_YEARS = re.compile(r"^(\d{4})(?:\s*(?:-|\u2013|\.\.)\s*(\d{4}))?$")


@dataclass(frozen=True, slots=True)
class FieldTerm:
    """One metadata term of a query.

    Attributes:
        field: ``"author"``, ``"title"`` or ``"year"``.
        value: the text searched for (author, title), as typed.
        years: for ``year``: the inclusive range ``(first, last)``.
    """

    field: str
    value: str
    years: tuple[int, int] = (0, 0)


def split_fields(query: str) -> tuple[str, tuple[FieldTerm, ...]]:
    """A query's free text and its metadata terms.

    A ``year:`` value that is not a year or a range of years (``year:recent``) is left in the
    free text, as are unknown prefixes (``doi:...``).

    Returns:
        ``(free text, terms)``: the free text with the terms cut out, whitespace collapsed.
    """
    terms: list[FieldTerm] = []

    def take(m: re.Match[str]) -> str:
        field = m.group(1).lower()
        value = (m.group(2) if m.group(2) is not None else m.group(3)).strip()
        if not value:
            return m.group(0)
        if field == "year":
            ym = _YEARS.match(value)
            if ym is None:
                return m.group(0)
            first = int(ym.group(1))
            last = int(ym.group(2)) if ym.group(2) else first
            terms.append(FieldTerm(field, value, (min(first, last), max(first, last))))
        else:
            terms.append(FieldTerm(field, value))
        return " "

    free = _TERM.sub(take, query)
    return " ".join(free.split()), tuple(terms)


def fields_only(terms: tuple[FieldTerm, ...]) -> str:
    """The terms written back as a query without free text (``author:"x" year:2020``)."""
    return " ".join(f'{t.field}:"{t.value}"' for t in terms)
