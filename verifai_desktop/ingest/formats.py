"""File-type detection and the text/section builder shared by the format parsers.

Detection sniffs the content with the ``filetype`` library (magic numbers) and, for zip
packages, looks at member names (``word/document.xml``, ``ppt/presentation.xml``, the EPUB
``mimetype`` member); the file extension decides only for plain text (MD, TXT), which has no
magic number, and for damaged zips whose directory cannot be read.
"""

from __future__ import annotations

import logging
import re
import zipfile
from pathlib import Path

import filetype

from verifai_desktop.domain import DocFormat, Location, Section
from verifai_desktop.errors import ParseError, UnsupportedFormat
from verifai_desktop.recognition import Recognition

log = logging.getLogger(__name__)

EXTENSIONS: dict[str, DocFormat] = {
    ".pdf": DocFormat.PDF,
    ".docx": DocFormat.DOCX,
    ".pptx": DocFormat.PPTX,
    ".epub": DocFormat.EPUB,
    ".md": DocFormat.MD,
    ".markdown": DocFormat.MD,
    ".txt": DocFormat.TXT,
    ".text": DocFormat.TXT,
}
"""File extensions (lower case, with the dot) the ingest pipeline reads."""

_ZIP_KINDS = frozenset({"zip", "docx", "pptx", "xlsx", "epub", "odt", "odp", "ods"})


def _zip_format(path: Path) -> DocFormat | None:
    """Office/EPUB format of a zip package from its member names; ``None`` if it is neither."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if "mimetype" in names:
                mime = zf.read("mimetype")[:64].strip()
                if mime == b"application/epub+zip":
                    return DocFormat.EPUB
            if "[Content_Types].xml" in names:
                if any(n.startswith("word/") for n in names):
                    return DocFormat.DOCX
                if any(n.startswith("ppt/") for n in names):
                    return DocFormat.PPTX
            if "META-INF/container.xml" in names:
                return DocFormat.EPUB
    except (zipfile.BadZipFile, OSError, KeyError, RuntimeError) as exc:
        log.debug("zip directory of %s unreadable: %s", path, exc)
        return None
    return None


def detect_format(path: Path) -> DocFormat:
    """Detect a file's format from its content, falling back to its extension.

    Args:
        path: the file.

    Returns:
        The format to parse the file as.

    Raises:
        ParseError: the file is empty (0 bytes) or cannot be read.
        UnsupportedFormat: the content or extension is none of PDF, DOCX, PPTX, EPUB, MD, TXT.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ParseError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    if size == 0:
        raise ParseError(path, "empty file (0 bytes)")
    by_ext = EXTENSIONS.get(path.suffix.lower())
    try:
        kind = filetype.guess(str(path))
    except OSError as exc:
        raise ParseError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    if kind is None:
        if by_ext in (DocFormat.MD, DocFormat.TXT):
            return by_ext
        if by_ext is not None:
            # A .pdf/.docx/... whose header is not that format: let its parser explain why.
            return by_ext
        raise UnsupportedFormat(path, path.suffix.lower() or "no extension")
    if kind.extension == "pdf":
        return DocFormat.PDF
    if kind.extension in _ZIP_KINDS:
        fmt = _zip_format(path)
        if fmt is not None:
            return fmt
        if by_ext in (DocFormat.DOCX, DocFormat.PPTX, DocFormat.EPUB):
            return by_ext  # a damaged package: the parser reports what is wrong with it
        raise UnsupportedFormat(path, kind.mime)
    raise UnsupportedFormat(path, kind.mime)


_SPACES = re.compile(r"[ \t\f\v\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")


def clean_text(text: str) -> str:
    """Normalise extracted text: no NULs or control chars, single spaces, at most one blank line.

    Line structure is kept (sentence splitting uses it); each line is stripped.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = text.replace("\u00ad", "")  # soft hyphen: invisible, breaks words for BM25
    text = "".join(ch for ch in text if ch >= " " or ch == "\n" or ch == "\t")
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return _MANY_NEWLINES.sub("\n\n", "\n".join(lines)).strip()


_TITLE_WORD = re.compile(r"[^\W\d_]{3,}")
_PLACEHOLDER_TITLES = frozenset(
    {"powerpoint presentation", "presentation", "untitled", "document", "title", "slide 1"}
)
_FILE_NAME = re.compile(r"\.(?:pdf|docx?|pptx?|txt|md|tex|dvi|indd|qxd)$", re.IGNORECASE)


def pick_title(*candidates: str | None, fallback: str) -> str:
    """The first candidate that looks like a real title, else ``fallback`` (the file stem).

    Metadata titles are often junk ("6489122611071476 1..10", "ipg1300180a",
    "PowerPoint Presentation", "zen_of_python.txt"): a title needs two words of 3+ letters,
    or one such word and no digits, and must not be a file name or a placeholder.
    """
    for candidate in candidates:
        title = " ".join((candidate or "").split())
        if not title or len(title) > 300 or _FILE_NAME.search(title):
            continue
        if title.lower() in _PLACEHOLDER_TITLES:
            continue
        words = _TITLE_WORD.findall(title)
        if len(words) >= 2 or (len(words) == 1 and not any(ch.isdigit() for ch in title)):
            return title
    return fallback


class DocumentBuilder:
    """Concatenates cleaned section texts with blank lines and records their offsets.

    Sections with no text after cleaning are dropped.
    """

    SEPARATOR = "\n\n"

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._sections: list[Section] = []
        self._length = 0

    def add(self, text: str, location: Location, ocr: Recognition | None = None) -> None:
        """Append one section's text (cleaned here) at ``location``.

        Args:
            text: the section text.
            location: where it is in the file.
            ocr: for text recognised by OCR, its words with offsets into ``text``, which
                must then be clean already (:func:`clean_text` leaves it as it is).

        Raises:
            ValueError: ``ocr`` is given and cleaning would move its words.
        """
        cleaned = clean_text(text)
        if ocr is not None and cleaned != text:
            raise ValueError("recognised text must be clean text, or its word boxes move")
        if not cleaned:
            return
        if self._parts:
            self._parts.append(self.SEPARATOR)
            self._length += len(self.SEPARATOR)
        start = self._length
        self._parts.append(cleaned)
        self._length += len(cleaned)
        if ocr is not None:  # word offsets into the document text from here on
            ocr = ocr.shifted(start)
        self._sections.append(Section(start, self._length, location, ocr))

    @property
    def text(self) -> str:
        """The document text so far."""
        return "".join(self._parts)

    @property
    def sections(self) -> tuple[Section, ...]:
        """Sections so far, offsets into :attr:`text`."""
        return tuple(self._sections)
