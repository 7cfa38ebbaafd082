"""EPUB parser (ebooklib): chapters in spine order, HTML to text, chapter titles."""

from __future__ import annotations

import logging
import posixpath
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ebooklib
from ebooklib import epub

from verifai_desktop.domain import DocFormat, Document, Location, LocationKind
from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.formats import DocumentBuilder, pick_title
from verifai_desktop.ingest.text import html_blocks

log = logging.getLogger(__name__)


def _toc_titles(toc: Iterable[Any], whole: dict[str, str], part: dict[str, str]) -> None:
    """Collect TOC titles per target file: ``whole`` for entries that point at a whole file,
    ``part`` for entries that point at an anchor inside one (a poem's sections)."""
    for entry in toc:
        if isinstance(entry, tuple) and len(entry) == 2:
            section, children = entry
            _toc_titles([section], whole, part)
            _toc_titles(children, whole, part)
            continue
        href = getattr(entry, "href", None)
        title = getattr(entry, "title", None)
        if href and title:
            name, _, fragment = str(href).partition("#")
            (part if fragment else whole).setdefault(name, " ".join(str(title).split()))


def parse_epub(
    path: Path, *, password: str | None = None, deadline: float | None = None
) -> Document:
    """Extract the text of every spine document, one chapter each.

    Chapters are numbered 1.. in spine order, counting only spine documents that hold text.
    A chapter's title is its table-of-contents title, else its first heading, else the title of
    the first TOC entry pointing inside it, else empty.

    Args:
        path: the ``.epub`` file.
        password: unused (DRM-protected EPUBs are not supported).
        deadline: ``time.monotonic()`` value after which parsing stops with a ParseError.

    Returns:
        A Document with one ``Location(CHAPTER, n, heading=title)`` section per chapter.

    Raises:
        ParseError: not a readable EPUB (truncated zip, missing package file).
    """
    try:
        book = epub.read_epub(str(path), options={"ignore_ncx": False})
    except zipfile.BadZipFile as exc:
        raise ParseError(path, f"the EPUB zip archive is damaged or truncated ({exc})") from exc
    except (epub.EpubException, KeyError, OSError, ValueError, AttributeError) as exc:
        raise ParseError(path, f"not a readable EPUB ({type(exc).__name__}: {exc})") from exc
    whole: dict[str, str] = {}
    part: dict[str, str] = {}
    _toc_titles(book.toc, whole, part)
    builder = DocumentBuilder()
    chapter = 0
    for idref, _linear in book.spine:
        if deadline is not None and time.monotonic() > deadline:
            raise ParseError(path, "timed out while reading chapters")
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        try:
            blocks = html_blocks(item.get_content())
        except Exception as exc:  # a bad chapter must not lose the book
            log.warning("%s: chapter %s unreadable: %s", path.name, idref, exc)
            continue
        if not blocks:
            continue
        chapter += 1
        href = item.get_name()
        title = whole.get(href) or whole.get(posixpath.basename(href), "")
        title = title or next((b.text for b in blocks if b.heading_level), "")
        title = title or part.get(href) or part.get(posixpath.basename(href), "")
        builder.add(
            "\n\n".join(b.text for b in blocks),
            Location(LocationKind.CHAPTER, chapter, title.replace("\n", " ").strip()),
        )
    meta = book.get_metadata("DC", "title")
    meta_title = str(meta[0][0]) if meta and meta[0] and meta[0][0] else ""
    title = pick_title(meta_title, fallback=path.stem)
    return Document(path, DocFormat.EPUB, title, builder.text, builder.sections)
