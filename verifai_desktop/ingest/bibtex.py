"""BibTeX and CSL-JSON files as sources: their entries, their metadata, their attached files.

``verifai ingest library.bib`` reads a reference manager's export: every entry becomes a
:class:`LibraryEntry` with its metadata as a :class:`~verifai_desktop.reference.Reference` and
the files attached to it. BibTeX is read with bibtexparser 2 (``@string`` macros expanded,
LaTeX accents decoded by pylatexenc); CSL-JSON with the standard library.

Attached files come from the ``file`` field as the reference managers write it:

* Zotero's own BibTeX export: ``Full Text PDF:files/12/paper.pdf:application/pdf``, paths
  relative to the exported file, ``;`` between attachments;
* Better BibTeX: absolute paths, ``;`` between them (``/home/u/Zotero/storage/AB12CD34/p.pdf``);
* JabRef: ``description:path:type`` with ``\\:`` and ``\\\\`` escaped
  (``:C\\:/papers/p.pdf:PDF``), relative paths resolved against the .bib file's folder;
* Mendeley: ``:home/u/papers/p.pdf:pdf`` (the leading ``/`` dropped) and
  ``$\\backslash$`` for a Windows backslash.

The ``pdf`` field (older JabRef and BibDesk) is read when there is no ``file``. A CSL-JSON item
has no standard field for files; a ``file`` string in the same syntax is read when present.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.formats import EXTENSIONS
from verifai_desktop.reference import Reference

if TYPE_CHECKING:
    from pylatexenc.latex2text import LatexNodes2Text

READABLE = "PDF, DOCX, PPTX, EPUB, MD, TXT"


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    """One entry of a reference library and what can be ingested of it.

    Attributes:
        reference: its metadata (key, CSL-JSON item, original BibTeX, library path).
        files: its attached files in a format VerifAI reads, absolute, that exist (in the
            order the entry lists them; may be empty).
        reason: why nothing of it can be ingested ('' when ``files`` is not empty).
    """

    reference: Reference
    files: tuple[Path, ...]
    reason: str = ""

    @property
    def source(self) -> str:
        """The catalog key under which an entry without a readable file is listed:
        ``"<library>#<key>"``."""
        return f"{self.reference.library}#{self.reference.key}"


_BIB_TO_CSL_TYPE = {
    "article": "article-journal",
    "inproceedings": "paper-conference",
    "conference": "paper-conference",
    "proceedings": "book",
    "book": "book",
    "inbook": "chapter",
    "incollection": "chapter",
    "phdthesis": "thesis",
    "mastersthesis": "thesis",
    "thesis": "thesis",
    "techreport": "report",
    "report": "report",
    "online": "webpage",
    "unpublished": "manuscript",
    "manual": "report",
}
_CSL_TO_BIB_TYPE = {
    "article-journal": "article",
    "paper-conference": "inproceedings",
    "book": "book",
    "chapter": "incollection",
    "thesis": "phdthesis",
    "report": "techreport",
    "webpage": "online",
    "manuscript": "unpublished",
}
_PLAIN_FIELDS = {
    "volume": "volume",
    "number": "issue",
    "publisher": "publisher",
    "isbn": "ISBN",
    "issn": "ISSN",
    "url": "URL",
    "doi": "DOI",
    "edition": "edition",
    "address": "publisher-place",
    "abstract": "abstract",
}
_CONTAINERS = ("journal", "journaltitle", "booktitle")
_UNESCAPED = re.compile(r"(?<!\\)([;:])")
_LATEX = re.compile(r"[\\{}~$%&]|--|``|''")
"""What LaTeX would change in a field's value (a value without any is taken as it is)."""
_WEB = re.compile(r"^(https?|ftp)://", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _latex_converter() -> LatexNodes2Text:
    """One converter per process: building its macro tables took ~1 ms per call, 20 s for a
    2,000-entry .bib (benchmarks/library_citations.py)."""
    from pylatexenc.latex2text import LatexNodes2Text  # deferred: only a .bib needs it

    return LatexNodes2Text()


def _latex_to_text(value: str) -> str:
    if not _LATEX.search(value):
        return " ".join(value.split())  # nothing for LaTeX to do
    return " ".join(_latex_converter().latex_to_text(value).split())


def _names(value: str) -> list[dict[str, str]]:
    """A BibTeX name list as CSL names: ``{"family", "given"}`` (particles kept with the
    family name), or ``{"literal"}`` for a name wholly in braces (an organisation)."""
    from bibtexparser.middlewares.names import (
        InvalidNameError,
        parse_single_name_into_parts,
        split_multiple_persons_names,
    )

    out: list[dict[str, str]] = []
    for raw in split_multiple_persons_names(value):
        raw = raw.strip()
        if raw.startswith("{") and raw.endswith("}") and raw.count("{") == 1:
            out.append({"literal": _latex_to_text(raw[1:-1])})
            continue
        try:
            parts = parse_single_name_into_parts(raw)
        except InvalidNameError:
            out.append({"literal": _latex_to_text(raw)})
            continue
        name = {"family": _latex_to_text(" ".join([*parts.von, *parts.last]))}
        if parts.first:
            name["given"] = _latex_to_text(" ".join(parts.first))
        if parts.jr:
            name["suffix"] = _latex_to_text(" ".join(parts.jr))
        out.append(name)
    return out


def _issued(fields: dict[str, str]) -> dict[str, Any] | None:
    """CSL ``issued`` from BibTeX ``year`` (and ``month``) or biblatex ``date``."""
    for raw in (fields.get("date", ""), fields.get("year", "")):
        m = re.match(r"\s*(\d{4})(?:-(\d{1,2}))?", raw)
        if m:
            parts = [int(m.group(1))] + ([int(m.group(2))] if m.group(2) else [])
            return {"date-parts": [parts]}
    return None


def bibtex_to_csl(key: str, entry_type: str, fields: dict[str, str]) -> dict[str, Any]:
    """A BibTeX entry's fields (raw values, braces and LaTeX kept) as a CSL-JSON item.

    Args:
        key: the citation key (the item's ``id``).
        entry_type: ``article``, ``inproceedings``, ... (any case).
        fields: field name (lower case) -> raw value.

    Returns:
        The CSL-JSON item: ``id``, ``type``, ``title``, ``author``/``editor``, ``issued``,
        ``container-title``, ``page``, ``DOI`` and the other fields present.
    """
    item: dict[str, Any] = {
        "id": key,
        "type": _BIB_TO_CSL_TYPE.get(entry_type.lower(), "document"),
    }
    if fields.get("title"):
        item["title"] = _latex_to_text(fields["title"])
    for role in ("author", "editor"):
        if fields.get(role):
            item[role] = _names(fields[role])
    issued = _issued(fields)
    if issued:
        item["issued"] = issued
    container = next((fields[f] for f in _CONTAINERS if fields.get(f)), "")
    if container:
        item["container-title"] = _latex_to_text(container)
    if fields.get("pages"):
        item["page"] = _latex_to_text(re.sub(r"\s*-+\s*", "-", fields["pages"]))
    for bib, csl in _PLAIN_FIELDS.items():
        if fields.get(bib):
            item[csl] = _latex_to_text(fields[bib]) if bib not in ("url", "doi") else fields[bib]
    if item.get("DOI"):
        item["DOI"] = re.sub(r"^https?://(dx\.)?doi\.org/", "", str(item["DOI"]).strip("{} "))
    if "institution" in fields and "publisher" not in item:
        item["publisher"] = _latex_to_text(fields["institution"])
    return item


def csl_to_bibtex(item: dict[str, Any]) -> str:
    """A CSL-JSON item written as a BibTeX entry (for CSL-JSON and Zotero sources, which have
    no BibTeX of their own). Values are braced; characters BibTeX reads specially are left as
    they are (UTF-8 BibTeX, as biber and Better BibTeX write)."""
    kind = _CSL_TO_BIB_TYPE.get(str(item.get("type", "")), "misc")
    lines = [f"@{kind}{{{item['id']},"]

    def names(people: list[dict[str, str]]) -> str:
        parts = []
        for p in people:
            if "literal" in p:
                parts.append("{" + p["literal"] + "}")
            else:
                parts.append(", ".join(x for x in (p.get("family", ""), p.get("given", "")) if x))
        return " and ".join(parts)

    fields: list[tuple[str, str]] = []
    if item.get("title"):
        fields.append(("title", str(item["title"])))
    for role in ("author", "editor"):
        if item.get(role):
            fields.append((role, names(item[role])))
    if item.get("container-title"):
        container = "journal" if kind == "article" else "booktitle"
        fields.append((container, str(item["container-title"])))
    parts = (item.get("issued") or {}).get("date-parts") or [[]]
    if parts and parts[0]:
        fields.append(("year", str(parts[0][0])))
    if item.get("page"):
        fields.append(("pages", str(item["page"]).replace("-", "--")))
    for bib, csl in _PLAIN_FIELDS.items():
        if item.get(csl) and bib != "abstract":
            fields.append((bib, str(item[csl])))
    lines += [f"  {name} = {{{value}}}," for name, value in fields]
    lines.append("}")
    return "\n".join(lines)


def _unescape(path: str) -> str:
    return path.replace("$\\backslash$", "\\").replace("\\:", ":").replace("\\\\", "\\")


def file_field_paths(value: str) -> list[str]:
    """The paths named in a ``file`` field, as written (not resolved), in order.

    Handles Zotero's and JabRef's ``description:path:type`` triples (``;`` between them,
    ``\\:`` escaped), Better BibTeX's plain ``;``-separated paths and Mendeley's
    ``$\\backslash$``; an unescaped Windows drive colon (``C:/x.pdf``) stays in the path.
    """
    parts: list[str] = []
    fields: list[str] = []
    start = 0
    for m in _UNESCAPED.finditer(value):
        if m.group(1) == ":":
            fields.append(value[start : m.start()])
        else:
            fields.append(value[start : m.start()])
            parts.append(_join_file_triple(fields))
            fields = []
        start = m.end()
    fields.append(value[start:])
    parts.append(_join_file_triple(fields))
    return [_unescape(p).strip() for p in parts if p.strip()]


def _join_file_triple(fields: list[str]) -> str:
    """The path of one attachment split at its unescaped colons."""
    if len(fields) >= 3:  # description:path:type; a drive letter adds a colon to the path
        return ":".join(fields[1:-1])
    return ":".join(fields)  # a plain path (C:/x.pdf splits in two)


def resolve_attachment(path_text: str, base: Path) -> Path:
    """An attachment path as written, made absolute: relative to ``base`` (the library's
    folder); Mendeley's ``home/u/p.pdf`` (leading ``/`` dropped) is tried from the root when
    the relative path does not exist."""
    path = Path(path_text).expanduser()
    if path.is_absolute():
        return path
    candidate = base / path
    rooted = Path("/") / path
    if not candidate.exists() and rooted.exists():
        return rooted
    return candidate


def entry_files(
    key: str, paths: Iterable[Path], library: Path, links: Sequence[str] = ()
) -> tuple[tuple[Path, ...], str]:
    """The attachments of entry ``key`` that can be ingested, or why none can.

    Returns:
        ``(files, reason)``: readable files of a format VerifAI reads (``reason`` ''), or no
        files and the reason naming the entry and its library.
    """
    found: list[Path] = []
    missing: list[Path] = []
    other: list[Path] = []
    for path in paths:
        if path.suffix.lower() not in EXTENSIONS:
            other.append(path)
        elif path.is_file():
            found.append(path)
        else:
            missing.append(path)
    if found:
        return tuple(dict.fromkeys(found)), ""
    where = f"entry {key!r} of {library.name}"
    if missing:
        return (), f"{where}: attached file {missing[0]} not found"
    if other:
        return (), f"{where}: attachment {other[0].name} is not a format VerifAI reads ({READABLE})"
    if links:
        return (), f"{where}: only a web link ({links[0]}), no file on this computer"
    return (), f"{where}: no file attached"


def _attachments(value: str, base: Path) -> tuple[list[Path], list[str]]:
    """Local paths (resolved against ``base``) and web links of a ``file`` field."""
    written = file_field_paths(value)
    links = [p for p in written if _WEB.match(p)]
    return [resolve_attachment(p, base) for p in written if not _WEB.match(p)], links


def read_bibtex(path: Path) -> list[LibraryEntry]:
    """The entries of a BibTeX file (``@string`` macros expanded), each with its attachments.

    An entry that bibtexparser could not read is returned with the reason (key ``line N``)
    so it is listed with the other refusals.

    Raises:
        ParseError: the file cannot be read, is not UTF-8 text, or holds no BibTeX entry.
    """
    from bibtexparser.entrypoint import parse_string  # deferred: only a .bib needs it

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParseError(path, f"cannot be read as UTF-8 BibTeX ({exc})") from exc
    library = parse_string(text)
    library_text = str(path)
    out: list[LibraryEntry] = []
    for entry in library.entries:
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        item = bibtex_to_csl(entry.key, entry.entry_type, fields)
        ref = Reference.from_item(item, bibtex=(entry.raw or "").strip(), library=library_text)
        file_value = fields.get("file") or fields.get("pdf") or fields.get("localfile") or ""
        paths, links = _attachments(file_value, path.parent)
        files, reason = entry_files(entry.key, paths, path, links)
        out.append(LibraryEntry(ref, files, reason))
    for block in library.failed_blocks:
        line = (block.start_line or 0) + 1
        key = f"line {line}"
        ref = Reference(key, json.dumps({"id": key}), (block.raw or "").strip(), library_text)
        reason = f"entry at line {line} of {path.name} is not valid BibTeX"
        out.append(LibraryEntry(ref, (), reason))
    if not out:
        raise ParseError(path, "no BibTeX entry in the file")
    return out


def read_csl_json(path: Path) -> list[LibraryEntry]:
    """The items of a CSL-JSON file (a list of items, or ``{"items": [...]}``).

    Raises:
        ParseError: the file is not JSON, or not a list of CSL items with an ``id`` each.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParseError(path, f"cannot be read as CSL-JSON ({exc})") from exc
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(i, dict) and "id" in i for i in items):
        raise ParseError(path, "not CSL-JSON: expected a list of items, each with an 'id'")
    out = []
    for raw in items:
        item = {k: v for k, v in raw.items() if k != "file"}
        item["id"] = str(item["id"])
        ref = Reference.from_item(item, bibtex=csl_to_bibtex(item), library=str(path))
        paths, links = _attachments(str(raw.get("file", "")), path.parent)
        files, reason = entry_files(item["id"], paths, path, links)
        out.append(LibraryEntry(ref, files, reason))
    return out
