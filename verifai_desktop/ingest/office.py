"""DOCX (python-docx) and PPTX (python-pptx) parsers; the pictures of a DOCX body and of the
slides are read by OCR where they are shown (:mod:`verifai_desktop.ingest.embedded`)."""

from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pptx
from docx.document import Document as DocxDocument
from docx.opc.exceptions import PackageNotFoundError as DocxPackageNotFound
from docx.table import Table, _Cell
from docx.text.paragraph import Paragraph
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.exc import PackageNotFoundError as PptxPackageNotFound

from verifai_desktop.domain import DocFormat, Document, Location, LocationKind
from verifai_desktop.errors import NeedsOcr, ParseError
from verifai_desktop.ingest import clock
from verifai_desktop.ingest.embedded import EmbeddedImage, Piece, recognise_embedded
from verifai_desktop.ingest.formats import DocumentBuilder, pick_title
from verifai_desktop.ingest.ocr import OcrOptions, PageProgress, unread_summary

log = logging.getLogger(__name__)

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_BLIP = "{http://schemas.openxmlformats.org/drawingml/2006/main}blip"
_VML_IMAGE = "{urn:schemas-microsoft-com:vml}imagedata"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_OPEN_ERRORS = (
    zipfile.BadZipFile,
    DocxPackageNotFound,
    PptxPackageNotFound,
    KeyError,
    ValueError,
    OSError,
    AttributeError,
    TypeError,
)


def _cell_text(cell: _Cell) -> str:
    """A cell's paragraphs and nested tables, in order, on one line."""
    parts: list[str] = []
    for item in cell.iter_inner_content():
        if isinstance(item, Table):
            parts.extend(_table_rows(item))
        else:
            parts.append(item.text)
    return " ".join(" ".join(parts).split())


def _table_rows(table: Table) -> list[str]:
    """Table rows as ``"cell | cell"`` lines; horizontally merged cells are not repeated."""
    rows = []
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            key = id(cell._tc)  # merged cells share one <w:tc>
            if key in seen:
                continue
            seen.add(key)
            text = _cell_text(cell)
            if text:
                cells.append(text)
        if cells:
            rows.append(" | ".join(cells))
    return rows


def _heading_level(paragraph: Paragraph) -> int:
    """Nesting depth of a heading: 1 for ``Title``, N + 1 for ``Heading N``, 0 for body text."""
    try:
        style = paragraph.style
    except (KeyError, ValueError):
        return 0
    name = (style.name or "") if style is not None else ""
    if name.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(name.strip())
    return int(match.group(1)) + 1 if match else 0


def _iter_body(document: DocxDocument) -> Iterator[Paragraph | Table]:
    """Paragraphs and tables of the body, in document order."""
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            yield Paragraph(child, document)
        elif tag == "tbl":
            yield Table(child, document)
        elif tag == "sdt":  # content controls (e.g. a table of contents) wrap paragraphs
            for inner in child.iter():
                if inner.tag.rsplit("}", 1)[-1] == "p":
                    yield Paragraph(inner, document)


def _pictures(element: Any, part: Any, where: str) -> list[EmbeddedImage]:
    """The images an element of a DOCX body or a slide shows (DrawingML pictures and picture
    fills, legacy VML images), in document order; linked (not embedded) ones are left out.

    Args:
        element: the paragraph's, table's or shape's XML element.
        part: the package part holding it (its relationships name the image parts).
        where: where it is shown, for the reason an image was not read.
    """
    images = []
    for node in element.iter(_BLIP, _VML_IMAGE):
        rid = node.get(f"{_R}embed" if node.tag == _BLIP else f"{_R}id")
        try:
            target = part.rels[rid].target_part
        except (KeyError, ValueError, AttributeError):  # no such or an external relationship
            continue
        content_type = str(getattr(target, "content_type", ""))
        blob = getattr(target, "blob", None)
        if isinstance(blob, bytes) and content_type.startswith("image/"):
            name = str(target.partname).lstrip("/")
            images.append(EmbeddedImage(name, content_type, blob, where))
    return images


def _document(
    path: Path,
    fmt: DocFormat,
    title: str,
    parts: list[tuple[Location, list[Piece]]],
    ocr: OcrOptions | None,
    deadline: float | None,
    on_page: PageProgress | None,
) -> Document:
    """The document of ``parts`` (each location's text blocks and images) once OCR read the
    images.

    Raises:
        NeedsOcr: no text but images OCR did not read (the reasons).
    """
    runs, unread = recognise_embedded(
        path, [pieces for _, pieces in parts], ocr, deadline=deadline, on_page=on_page
    )
    builder = DocumentBuilder()
    for (location, _), part_runs in zip(parts, runs, strict=True):
        for run in part_runs:
            builder.add(run.text, location, run.ocr)
    if not builder.sections and unread:
        raise NeedsOcr(path, unread_summary((), unread))
    return Document(path, fmt, title, builder.text, builder.sections, unread_images=unread)


def parse_docx(
    path: Path,
    *,
    password: str | None = None,
    deadline: float | None = None,
    ocr: OcrOptions | None = None,
    on_page: PageProgress | None = None,
) -> Document:
    """Extract paragraphs and tables in document order, sectioned by heading path; the text of
    the pictures in them is recognised by OCR and placed where they are.

    Args:
        path: the ``.docx`` file.
        password: unused (encrypted Office files are not supported).
        deadline: ``clock.now()`` value after which parsing stops with a ParseError.
        ocr: how the pictures are read (:mod:`~verifai_desktop.ingest.embedded`);
            ``None``: OCR off.
        on_page: progress of OCR, called before each picture is recognised.

    Returns:
        A Document with one ``Location(SECTION, heading="H1 > H2")`` section per heading (and
        one more for the text of each picture read, its ``Section.ocr`` set, between the text
        before and after it); table rows appear as ``"cell | cell"`` lines. The pictures OCR
        did not read are in ``unread_images``.

    Raises:
        ParseError: not a readable DOCX package.
        NeedsOcr: no text, and pictures OCR did not read.
    """
    try:
        document = docx.Document(str(path))
    except _OPEN_ERRORS as exc:
        raise ParseError(path, f"not a readable DOCX ({type(exc).__name__}: {exc})") from exc
    parts: list[tuple[Location, list[Piece]]] = []
    stack: list[tuple[int, str]] = []
    heading_path = ""
    pieces: list[Piece] = []
    first_heading = ""
    for n, item in enumerate(_iter_body(document)):
        if deadline is not None and n % 256 == 0 and clock.now() > deadline:
            raise ParseError(path, "timed out while reading paragraphs")
        if isinstance(item, Table):
            pieces.append("\n".join(_table_rows(item)))
        elif text := item.text.strip():
            level = _heading_level(item)
            if level:
                parts.append((Location(LocationKind.SECTION, None, heading_path), pieces))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                heading = " ".join(text.split())
                stack.append((level, heading))
                heading_path = " > ".join(t for _, t in stack)
                first_heading = first_heading or heading
                pieces = []
            pieces.append(text)
        where = f"in section {heading_path}" if heading_path else ""
        pieces.extend(_pictures(item._element, document.part, where))
    parts.append((Location(LocationKind.SECTION, None, heading_path), pieces))
    title = pick_title(document.core_properties.title, first_heading, fallback=path.stem)
    return _document(path, DocFormat.DOCX, title, parts, ocr, deadline, on_page)


def _shape_texts(shapes: Any, where: str) -> Iterator[Piece]:
    """Text and pictures of shapes in z-order, descending into group shapes; tables as row
    lines; ``where`` says where the pictures are shown."""
    for shape in shapes:
        try:
            if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
                yield from _shape_texts(shape.shapes, where)
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                rows = []
                for row in shape.table.rows:
                    cells = [" ".join(c.text.split()) for c in row.cells]
                    line = " | ".join(c for c in cells if c)
                    if line:
                        rows.append(line)
                if rows:
                    yield "\n".join(rows)
                continue
            if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                text = shape.text_frame.text.replace("\x0b", "\n").strip()
                if text:
                    yield text
            yield from _pictures(shape.element, shape.part, where)
        except (KeyError, ValueError, AttributeError, NotImplementedError) as exc:
            log.warning("skipping unreadable shape: %s", exc)


def parse_pptx(
    path: Path,
    *,
    password: str | None = None,
    deadline: float | None = None,
    ocr: OcrOptions | None = None,
    on_page: PageProgress | None = None,
) -> Document:
    """Extract slide text (shapes, groups, tables) and speaker notes, one section per slide;
    the text of the slides' pictures is recognised by OCR and placed where they are.

    Args:
        path: the ``.pptx`` file.
        password: unused (encrypted Office files are not supported).
        deadline: ``clock.now()`` value after which parsing stops with a ParseError.
        ocr: how the pictures are read (:mod:`~verifai_desktop.ingest.embedded`);
            ``None``: OCR off.
        on_page: progress of OCR, called before each picture is recognised.

    Returns:
        A Document with one ``Location(SLIDE, n, heading=slide title)`` section per slide that
        has text (and one more for the text of each picture read, its ``Section.ocr`` set, in
        shape order); speaker notes follow the slide text as ``"Notes: ..."``. A deck with no
        slides gives text ``""`` and no sections. The pictures OCR did not read are in
        ``unread_images``.

    Raises:
        ParseError: not a readable PPTX package.
        NeedsOcr: no text, and pictures OCR did not read.
    """
    try:
        prs = pptx.Presentation(str(path))
        slides = list(prs.slides)
    except _OPEN_ERRORS as exc:
        raise ParseError(path, f"not a readable PPTX ({type(exc).__name__}: {exc})") from exc
    parts: list[tuple[Location, list[Piece]]] = []
    first_title = ""
    for number, slide in enumerate(slides, start=1):
        if deadline is not None and clock.now() > deadline:
            raise ParseError(path, f"timed out after {number - 1} slides")
        title = ""
        try:
            title_shape = slide.shapes.title
            if title_shape is not None and title_shape.has_text_frame:
                title = " ".join(title_shape.text_frame.text.split())
        except (KeyError, ValueError, AttributeError) as exc:
            log.warning("%s: slide %d title unreadable: %s", path.name, number, exc)
        try:
            pieces = list(_shape_texts(slide.shapes, f"on slide {number}"))
        except (KeyError, ValueError, AttributeError) as exc:
            log.warning("%s: slide %d shapes unreadable: %s", path.name, number, exc)
            pieces = []
        try:
            if slide.has_notes_slide:
                frame = slide.notes_slide.notes_text_frame
                notes = frame.text.strip() if frame is not None else ""
                if notes:
                    pieces.append(f"Notes: {notes}")
        except (KeyError, ValueError, AttributeError) as exc:
            log.warning("%s: slide %d notes unreadable: %s", path.name, number, exc)
        first_title = first_title or title
        parts.append((Location(LocationKind.SLIDE, number, title), pieces))
    title = pick_title(prs.core_properties.title, first_title, fallback=path.stem)
    return _document(path, DocFormat.PPTX, title, parts, ocr, deadline, on_page)
