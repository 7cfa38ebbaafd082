"""Reference lists and bibliographies: which chunks are citation entries, not body text.

A reference list is dense in exactly the words a question shares with a paper (drug names,
diseases, methods in the cited titles), so its chunks outrank the body text in BM25 and in
cosine (issue 13: for a heparin question, 6 of the 10 passages given to the generator were
reference-list chunks). Chunks are tagged at ingest and stay searchable; the answer prompt
leaves them out by default (``retrieval.exclude_references``).

A chunk is a reference chunk when

- its heading path (``Location.heading``, DOCX/MD/EPUB) names a reference section
  ("References", "Bibliography", "Literature cited", "Works cited", "Reference list", ...,
  numbered or not, any case), or
- it follows such a heading line in the document's text (PDF and plain text have no heading
  path) and at least :data:`SECTION_SHARE` of its sentences look like citation entries; the
  section ends after :data:`MAX_SECTION_MISSES` chunks in a row that do not, or
- anywhere, at least :data:`STANDALONE_SHARE` of its sentences look like citation entries and
  it mentions at least :data:`MIN_YEARS` years.

A "sentence" is a unit of :func:`~verifai_desktop.ingest.sentences.split_sentences`; in a
reference list it is a fragment of an entry (the author list, the year, the title, the venue
with volume and pages), and every fragment but the title carries a citation cue. The
thresholds were calibrated by hand on the 1,320 chunks of ``shared/data/docs/clean`` (ten
papers in PDF with Vancouver, BMC, APA, ACL, ACM, IEEE and JMLR reference styles and two DOCX
with reference lists, besides books, slides, Markdown and a manual): 185 chunks are tagged,
all of them reference-list chunks (two open with a few lines of acknowledgements before the
list fills them); one reference-list chunk of 186 is missed; no body chunk is tagged. At the
sentence level 1.0% of body sentences look like citations (page footers with the paper's own
DOI, conference headers), against 64% of reference-list sentences (titles carry no cue).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from verifai_desktop.domain import Chunk
from verifai_desktop.ingest.sentences import split_sentences

SECTION_SHARE = 0.35
"""Share of citation-like sentences that keeps a chunk after a reference heading inside the
reference section (calibrated: reference-list chunks of the clean papers score 0.40-1.0, the
appendices and publisher pages after them 0.0-0.33)."""

STANDALONE_SHARE = 0.6
"""Share of citation-like sentences that makes any chunk a reference chunk (calibrated: body
chunks of the clean documents score at most 0.5, a paper's title page; running text at most
0.4)."""

MIN_YEARS = 3
"""Years a chunk outside a reference section must mention to count as a list of entries (a
paper's own first page, with its citation line and author list, mentions one or two)."""

MAX_SECTION_MISSES = 2
"""Chunks in a row below :data:`SECTION_SHARE` that end a reference section."""

HEADING_PATH_SEPARATOR = " > "

_HEADING = re.compile(
    r"""^\s*
    (?:(?:\d{1,2}(?:\.\d{1,2})*|[IVXivx]{1,4}|[A-Z])[.):]?\s+)?   # "7.", "VII.", "A "
    (?:references?\s+(?:list|and\s+notes|cited)|references|bibliography|
       literature\s+cited|works\s+cited|cited\s+literature|notes\s+and\s+references|
       selected\s+references|literature\s+references)
    \s*$""",
    re.IGNORECASE | re.VERBOSE,
)

# -- cues of a citation entry (each regex looks at one sentence) ----------------------------
_YEAR = r"(?:19|20)\d{2}[a-z]?"
_RANGE = r"\s*[-\u2013]\s*[A-Za-z]?\d{1,6}[A-Za-z]?"
# Volume and pages after a journal word or a year: "Med 128:376-83", "Engl, 88(6): 571-75",
# "2017;105: 2295-2329", "Bioinformatics 5:113", "Suppl):338S-400S"; the word or year before
# the volume tells it from a ratio such as "(8:2)". A colon with a page range needs neither.
_VOLUME_PAGES = re.compile(
    rf"(?:\b[A-Z][A-Za-z.]*,?|[;)]|\b{_YEAR}[;,]?)\s*\d{{1,4}}\s*(?:\([^()\n]{{1,16}}\))?\s*:\s*"
    rf"[A-Za-z]?\d{{1,6}}[A-Za-z]?(?:{_RANGE})?(?![\d\]:])"
    rf"|\d\s*:\s*[A-Za-z]?\d{{1,6}}[A-Za-z]?{_RANGE}(?![\d\]:])"
)
# "421, 551-554" (volume, pages), not an in-text citation like "[2, 4-6]"
_VOLUME_COMMA_PAGES = re.compile(
    rf"(?<![\[\d,(\u2013-])(?<!\d,\s)\b\d{{1,4}},\s+[A-Za-z]?\d{{1,6}}{_RANGE}(?![\d\]])"
)
# "Computation, 9(8)", "Genetics 4(8)": volume(issue) after a journal word
_VOLUME_ISSUE = re.compile(r"\b[A-Z][A-Za-z.]*,?\s\d{1,4}\s?\(\d{1,4}\)")
# "1996;335", "2016;12", "1996, 128:" (year then volume, Vancouver and BMC styles)
_YEAR_VOLUME = re.compile(rf"\b{_YEAR}\s*[;,]\s*\d{{1,4}}\s*[(:;]")
# "(2014), 25:1-25:33", "11 (2006), 269 - 282"
_YEAR_PAGES = re.compile(rf"\({_YEAR}\)\s*,\s*[A-Za-z]?\d{{1,6}}(?::\d{{1,6}})?{_RANGE}")
# "AAAI, 2015.", "Academic Press, 1978.", "JAMA, 303(8):739-46, 2010." (year last)
_TRAILING_YEAR = re.compile(rf",\s*{_YEAR}\.?$")
_IDENTIFIER = re.compile(
    r"\bdoi\b|\b10\.\d{4,9}/\S+|\bPMID\b|\bPMCID\b|\bISBN\b|\bISSN\b"
    r"|\barXiv(?:\s+preprint\b|,?\s*abs/|:\s*\d{4}\.\d{4,5})"
    r"|\bRetrieved\s+from\b|\bAvailable\s*(?:at|from|online)?\s*:\s*\S|\bAccessed\b",
    re.IGNORECASE,
)
_PAGES = re.compile(r"\bpp?\.\s*\d{1,6}(?:\s*[-\u2013]\s*\d{1,6})?\b|\b[Vv]ol\.\s*\d")
# Author lists: "Warkentin TE, Levine MN", "Acharya, K. R., Sturrock, E. D.", "J. D. Watson"
_SURNAME = r"[A-Z][A-Za-z\u00c0-\u024f'\u2019\u00a8\u02d8-]+"
_VANCOUVER_NAME = re.compile(rf"{_SURNAME}(?:\s{_SURNAME})?\s[A-Z]{{1,3}}(?=[,.:;]|\s+and\b|$)")
_APA_NAME = re.compile(rf"{_SURNAME},\s(?:[A-Z]\.\s?-?){{1,3}}")
_INITIALS_FIRST_NAME = re.compile(rf"(?:\b[A-Z]\.\s?-?){{1,3}}\s{_SURNAME}")
# "Paykel, E. (1997).", "Norton, M. C. et al. (2011)." (one APA author, then the year)
_APA_AUTHOR_YEAR = re.compile(
    rf"^{_SURNAME},\s(?:[A-Z]\.\s?-?){{1,3}}(?:\s?et\s+al\.)?\s?\({_YEAR}\)"
)
_NAME_CONNECTORS = frozenset(
    {"and", "&", "de", "van", "von", "der", "den", "da", "di", "du", "le", "la", "del", "dos",
     "et", "al.", "al"}
)  # fmt: skip
_NAME_SHARE = 0.85  # words of a full-name author list that are capitalised or connectors
_AUTHOR_HEAD_CHARS = 200
_ANY_YEAR = re.compile(rf"\b{_YEAR}\b")
_BARE_YEAR = re.compile(rf"^\(?{_YEAR}\)?[.,;:]?$")
# "10.", "[21]" (a page number may precede it); a bare number is a page or a table cell
_ENTRY_NUMBER = re.compile(r"^(?:\d{1,4}\s+)?(?:\[\d{1,3}\]|\d{1,3}\.)(?:\s|$)")
# "... Perspective. [105]": the next entry's number (not "Smith et al. [24]")
_NEXT_ENTRY = re.compile(r"(?<!\bal)\.\s*\[\d{1,3}\]$")
# "J. Mol.", "Nat. Rev.", or one journal word alone ("Biol."), not "Results."
_ABBREVIATED = re.compile(r"^(?:[A-Z][a-z]{0,9}\.\s*){2,6}$")
_VENUE = re.compile(
    r"^In\s+(?:(?:the\s+)?Proceedings\b|Proc\.|Advances\s+in\b|[A-Z][A-Za-z-]*\s+"
    r"(?:Conference|Workshop|Symposium|Meeting)\b|[A-Z]{2,}[A-Za-z-]*(?:[\s-]\d{2,4})?\.?$)"
)
_YEAR_IN_PARENS = re.compile(rf"\({_YEAR}\)")
_JOURNAL_WORD = re.compile(
    r"\b(?:J|Med|Engl|Am|Surg|Rev|Res|Clin|Proc|Natl|Acad|Sci|Int|Biol|Chem|Phys|Lett|Trans|"
    r"Conf|Eur|Br|Ann|Arch|Intern|Assoc|Soc|Comput|Inf|Mol|Pharmacol|Neurol|Epidemiol|"
    r"Bioinform|Genet|Immunol|Oncol|Cardiol|Pediatr|Psychiatr|Radiol|Vasc|Haematol|Hematol|"
    r"Thromb|Nat|Rep|Syst|Ther|Health)\.?(?=\s|$|[,;:])"
)
_IN_TEXT_KEY = re.compile(r"\[@[^\]]*\]")  # Pandoc/Manubot in-text citation: "[@doi:10.1/x]"
# sentencex sometimes runs several entries of a PDF reference list together ("In WWW.\nCunchao
# Tu, Han Liu, ..."): a full stop at a line end also ends a unit, and a unit longer than
# _LONG_SENTENCE_WORDS that still spans lines is scored line by line.
_LINE_END_STOP = re.compile(r"(?<=\.)[ \t]*\n")
_LONG_SENTENCE_WORDS = 40


def is_reference_heading(text: str) -> bool:
    """Whether a heading (or a line on its own) names a reference section.

    Matches "References", "REFERENCES", "7. References", "Bibliography", "Literature cited",
    "Works cited", "Reference list", ... alone on the line; not "Reference" (a table column)
    nor a sentence that mentions references.
    """
    return len(text) <= 60 and _HEADING.match(text) is not None


def heading_path_is_references(heading: str) -> bool:
    """Whether a heading path (``"Paper > References"``) lies inside a reference section."""
    return any(is_reference_heading(part) for part in heading.split(HEADING_PATH_SEPARATOR))


def _is_author_list(sentence: str) -> bool:
    """Whether a sentence opens with two or more names in a citation form, or is a list of
    capitalised full names ("Alexis Conneau, Douwe Kiela, and Antoine Bordes.")."""
    head = sentence[:_AUTHOR_HEAD_CHARS]
    for pattern in (_VANCOUVER_NAME, _APA_NAME, _INITIALS_FIRST_NAME):
        if pattern.match(head) is not None and len(pattern.findall(head)) >= 2:
            return True
    if not sentence.endswith("."):  # "Results and Discussion" is a heading, not two authors
        return False
    words = sentence[:-1].replace(",", " ").split()
    if not 3 <= len(words) <= 60:
        return False
    names = sum(1 for w in words if w[:1].isupper() or w.lower() in _NAME_CONNECTORS)
    links = sentence.count(",") + sentence.count(" and ") + sentence.count(" & ")
    return names >= _NAME_SHARE * len(words) and words[0][:1].isupper() and links >= 1


def looks_like_citation(sentence: str) -> bool:
    """Whether one sentence (a fragment of a reference list) is part of a citation entry.

    Strong cues, any one enough: volume and pages ("Med 128:376-83", "421, 551-554",
    "(2014), 49-55"), volume and issue ("Computation, 9(8)"), year then volume ("1996;335"),
    a year closing the sentence after a comma ("AAAI, 2015."), a DOI, PMID, arXiv id or
    "Retrieved from", an opening author list ("Warkentin TE, Levine MN", "Acharya, K. R.,
    Sturrock, E. D.", "S. Hochreiter and J. Schmidhuber."), a year alone ("2015."), an entry
    number alone ("10.") or a bracketed one ("[21] ..."), an abbreviated journal name alone
    ("J. Mol."), a venue ("In Proceedings of ...", "In EMNLP."). Weak cues, two needed: a year
    in parentheses, "pp."/"Vol.", journal abbreviations ("N Engl J Med"). In-text citations
    ("[2,4-6]", "Smith et al. (2019) showed", "[@doi:10.1/x]") are not entries.

    Args:
        sentence: one sentence, as :func:`~verifai_desktop.ingest.sentences.split_sentences`
            cuts it.
    """
    s = " ".join(_IN_TEXT_KEY.sub(" ", sentence).split())
    number = _ENTRY_NUMBER.match(s)
    if number is not None:
        rest = s[number.end() :].lstrip()
        if not rest or "[" in number.group(0):
            return True
        s = rest  # "10. Geerts WH, Jay RM, ...": judge the entry after its number
    if not s:
        return False
    if (
        _BARE_YEAR.match(s)
        or _ABBREVIATED.match(s)
        or (s.endswith(".") and _JOURNAL_WORD.fullmatch(s) is not None)
        or _VENUE.match(s)
        or _TRAILING_YEAR.search(s)
        or _NEXT_ENTRY.search(s)
        or _VOLUME_PAGES.search(s)
        or _VOLUME_COMMA_PAGES.search(s)
        or _VOLUME_ISSUE.search(s)
        or _YEAR_VOLUME.search(s)
        or _YEAR_PAGES.search(s)
        or _APA_AUTHOR_YEAR.match(s)
        or _IDENTIFIER.search(s)
        or _is_author_list(s)
    ):
        return True
    weak = (
        bool(_YEAR_IN_PARENS.search(s))
        + bool(_PAGES.search(s))
        + (len(_JOURNAL_WORD.findall(s)) >= 2)
    )
    return weak >= 2


def _units(text: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The sentences of ``text``, also cut where a line ends with a full stop; a long one that
    still spans lines becomes its lines."""
    units: list[str] = []
    for start, end in spans:
        for part in _LINE_END_STOP.split(text[start:end]):
            if not part.strip():
                continue
            if "\n" in part and len(part.split()) > _LONG_SENTENCE_WORDS:
                units.extend(line for line in part.splitlines() if line.strip())
            else:
                units.append(part)
    return units


def citation_share(text: str, sentence_spans: Sequence[tuple[int, int]] | None = None) -> float:
    """Share of a text's sentences that look like citation entries (0..1).

    Calibrated on ``shared/data/docs/clean`` chunked for all-MiniLM-L6-v2 (256 word pieces):
    reference-list chunks of the ten papers score 0.40-1.0, body chunks at most 0.5.

    Args:
        text: a chunk's text.
        sentence_spans: its sentence offsets into ``text`` (``Chunk.sentence_spans``); split
            with :func:`~verifai_desktop.ingest.sentences.split_sentences` when None.

    Returns:
        Citation-like sentences / sentences; 0.0 for a text with no sentence.
    """
    units = _units(text, split_sentences(text) if sentence_spans is None else sentence_spans)
    if not units:
        return 0.0
    return sum(1 for unit in units if looks_like_citation(unit)) / len(units)


def _heading_line_end(text: str) -> int | None:
    """End offset of the last reference-heading line in ``text`` (None if there is none)."""
    end: int | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        if is_reference_heading(line.strip()):
            end = pos + len(line)
        pos += len(line)
    return end


def _is_entry_list(text: str, share: float) -> bool:
    """A chunk outside any reference section that is made of citation entries."""
    return share >= STANDALONE_SHARE and len(_ANY_YEAR.findall(text)) >= MIN_YEARS


def reference_flags(
    chunks: Sequence[tuple[str, str, Sequence[tuple[int, int]] | None]],
) -> tuple[bool, ...]:
    """Which chunks of one document are reference-list chunks.

    The one classifier of ingest and of the catalog migration (schema 2), so both tag alike.
    A reference section found by its heading line ends after two chunks in a row that are not
    citation-like (one is allowed: a page footer between two pages of references).

    Args:
        chunks: ``(text, heading path, sentence spans or None)`` of every chunk of ONE
            document, in document order (``Chunk.ordinal``).

    Returns:
        One flag per chunk, True for a reference chunk (see the module docstring).
    """
    flags: list[bool] = []
    in_section = False
    misses = 0
    for text, heading, spans in chunks:
        if heading_path_is_references(heading):
            flags.append(True)
            in_section = False  # the heading path, not the text, says where the section ends
            continue
        heading_end = _heading_line_end(text)
        if heading_end is not None:
            tail = text[heading_end:]
            in_section, misses = True, 0
            # The heading's own chunk counts when the list, not the body before it, fills it.
            flags.append(
                len(tail.strip()) >= len(text.strip()) / 2 and citation_share(tail) >= SECTION_SHARE
            )
            continue
        share = citation_share(text, spans)
        if in_section:
            if share >= SECTION_SHARE:
                flags.append(True)
                misses = 0
                continue
            misses += 1
            in_section = misses < MAX_SECTION_MISSES
        flags.append(_is_entry_list(text, share))
    return tuple(flags)


def tag_references(chunks: Sequence[Chunk]) -> tuple[Chunk, ...]:
    """The chunks of one document, in order, with ``is_reference`` set by
    :func:`reference_flags`."""
    flags = reference_flags([(c.text, c.location.heading, c.sentence_spans) for c in chunks])
    return tuple(
        dataclasses.replace(c, is_reference=flag) if flag != c.is_reference else c
        for c, flag in zip(chunks, flags, strict=True)
    )
