"""EPUB parser (ebooklib): chapters in spine order, HTML to text, chapter titles; the images
a chapter shows are read by OCR (:mod:`verifai_desktop.ingest.embedded`)."""

from __future__ import annotations

import logging
import posixpath
import warnings
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import ebooklib
from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from ebooklib import epub

from verifai_desktop.domain import DocFormat, Document, Location, LocationKind
from verifai_desktop.errors import NeedsOcr, ParseError
from verifai_desktop.ingest import clock
from verifai_desktop.ingest.embedded import EmbeddedImage, Piece, recognise_embedded
from verifai_desktop.ingest.formats import DocumentBuilder, pick_title
from verifai_desktop.ingest.ocr import OcrOptions, PageProgress, unread_summary
from verifai_desktop.ingest.text import HtmlBlock, html_blocks

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


def _chapter_images(book: Any, item: Any, html: bytes) -> list[EmbeddedImage]:
    """The images of the book a spine document shows (``<img src>``, SVG ``<image href>``),
    in document order; those outside the book or missing from it are left out."""
    if b"<img" not in html and b"<image" not in html and b":image" not in html:
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)  # chapters are XHTML
        soup = BeautifulSoup(html, "lxml")
    chapter = item.get_name()
    images = []
    for tag in soup.find_all(["img", "image", "svg:image"]):
        src = tag.get("src") or tag.get("xlink:href") or tag.get("href")
        if not isinstance(src, str) or urlsplit(src).scheme:  # data: or http: URLs
            continue
        href = posixpath.normpath(posixpath.join(posixpath.dirname(chapter), unquote(src)))
        target = book.get_item_with_href(href.split("#")[0])
        if target is None or not str(target.media_type).startswith("image/"):
            continue
        images.append(
            EmbeddedImage(href, str(target.media_type), target.get_content(), f"in {chapter}")
        )
    return images


def parse_epub(
    path: Path,
    *,
    password: str | None = None,
    deadline: float | None = None,
    ocr: OcrOptions | None = None,
    on_page: PageProgress | None = None,
) -> Document:
    """Extract the text of every spine document, one chapter each; the text of the images a
    chapter shows is recognised by OCR and added at the end of that chapter.

    Chapters are numbered 1.. in spine order, counting only spine documents that hold text
    (recognised text included: a page that is one image of text is a chapter when OCR reads
    it). A chapter's title is its table-of-contents title, else its first heading, else the
    title of the first TOC entry pointing inside it, else empty.

    Args:
        path: the ``.epub`` file.
        password: unused (DRM-protected EPUBs are not supported).
        deadline: ``clock.now()`` value after which parsing stops with a ParseError.
        ocr: how the images are read (:mod:`~verifai_desktop.ingest.embedded`); ``None``:
            OCR off.
        on_page: progress of OCR, called before each image is recognised.

    Returns:
        A Document with one ``Location(CHAPTER, n, heading=title)`` section per chapter (and
        one more for the text of each image read, its ``Section.ocr`` set). The images OCR
        did not read are in ``unread_images``.

    Raises:
        ParseError: not a readable EPUB (truncated zip, missing package file).
        NeedsOcr: no text, and images OCR did not read.
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
    spine: list[tuple[str, list[HtmlBlock], list[Piece]]] = []  # name, blocks, pieces
    for idref, _linear in book.spine:
        if deadline is not None and clock.now() > deadline:
            raise ParseError(path, "timed out while reading chapters")
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        try:
            content = item.get_content()
            blocks = html_blocks(content)
            images = _chapter_images(book, item, content)
        except Exception as exc:  # a bad chapter must not lose the book
            log.warning("%s: chapter %s unreadable: %s", path.name, idref, exc)
            continue
        text = ["\n\n".join(b.text for b in blocks)] if blocks else []
        spine.append((item.get_name(), blocks, [*text, *images]))
    runs, unread = recognise_embedded(
        path, [pieces for *_, pieces in spine], ocr, deadline=deadline, on_page=on_page
    )
    builder = DocumentBuilder()
    chapter = 0
    for (href, blocks, _), chapter_runs in zip(spine, runs, strict=True):
        if not chapter_runs:
            continue
        chapter += 1
        title = whole.get(href) or whole.get(posixpath.basename(href), "")
        title = title or next((b.text for b in blocks if b.heading_level), "")
        title = title or part.get(href) or part.get(posixpath.basename(href), "")
        location = Location(LocationKind.CHAPTER, chapter, title.replace("\n", " ").strip())
        for run in chapter_runs:
            builder.add(run.text, location, run.ocr)
    if not builder.sections and unread:
        raise NeedsOcr(path, unread_summary((), unread))
    meta = book.get_metadata("DC", "title")
    meta_title = str(meta[0][0]) if meta and meta[0] and meta[0][0] else ""
    title = pick_title(meta_title, fallback=path.stem)
    return Document(
        path, DocFormat.EPUB, title, builder.text, builder.sections, unread_images=unread
    )
