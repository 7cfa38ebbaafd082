"""DOCX (python-docx) and PPTX (python-pptx) parsers."""

from __future__ import annotations

import logging
import re
import time
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
from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.formats import DocumentBuilder, pick_title

log = logging.getLogger(__name__)

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
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


def parse_docx(
    path: Path, *, password: str | None = None, deadline: float | None = None
) -> Document:
    """Extract paragraphs and tables in document order, sectioned by heading path.

    Args:
        path: the ``.docx`` file.
        password: unused (encrypted Office files are not supported).
        deadline: ``time.monotonic()`` value after which parsing stops with a ParseError.

    Returns:
        A Document with one ``Location(SECTION, heading="H1 > H2")`` section per heading;
        table rows appear as ``"cell | cell"`` lines.

    Raises:
        ParseError: not a readable DOCX package.
    """
    try:
        document = docx.Document(str(path))
    except _OPEN_ERRORS as exc:
        raise ParseError(path, f"not a readable DOCX ({type(exc).__name__}: {exc})") from exc
    builder = DocumentBuilder()
    stack: list[tuple[int, str]] = []
    heading_path = ""
    blocks: list[str] = []
    first_heading = ""
    for n, item in enumerate(_iter_body(document)):
        if deadline is not None and n % 256 == 0 and time.monotonic() > deadline:
            raise ParseError(path, "timed out while reading paragraphs")
        if isinstance(item, Table):
            blocks.append("\n".join(_table_rows(item)))
            continue
        text = item.text.strip()
        if not text:
            continue
        level = _heading_level(item)
        if level:
            builder.add("\n\n".join(blocks), Location(LocationKind.SECTION, None, heading_path))
            while stack and stack[-1][0] >= level:
                stack.pop()
            heading = " ".join(text.split())
            stack.append((level, heading))
            heading_path = " > ".join(t for _, t in stack)
            first_heading = first_heading or heading
            blocks = [text]
        else:
            blocks.append(text)
    builder.add("\n\n".join(blocks), Location(LocationKind.SECTION, None, heading_path))
    title = pick_title(document.core_properties.title, first_heading, fallback=path.stem)
    return Document(path, DocFormat.DOCX, title, builder.text, builder.sections)


def _shape_texts(shapes: Any) -> Iterator[str]:
    """Text of shapes in z-order, descending into group shapes; tables as row lines."""
    for shape in shapes:
        try:
            if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
                yield from _shape_texts(shape.shapes)
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
        except (KeyError, ValueError, AttributeError, NotImplementedError) as exc:
            log.warning("skipping unreadable shape: %s", exc)


def parse_pptx(
    path: Path, *, password: str | None = None, deadline: float | None = None
) -> Document:
    """Extract slide text (shapes, groups, tables) and speaker notes, one section per slide.

    Args:
        path: the ``.pptx`` file.
        password: unused (encrypted Office files are not supported).
        deadline: ``time.monotonic()`` value after which parsing stops with a ParseError.

    Returns:
        A Document with one ``Location(SLIDE, n, heading=slide title)`` section per slide that
        has text; speaker notes follow the slide text as ``"Notes: ..."``. A deck with no slides
        gives text ``""`` and no sections.

    Raises:
        ParseError: not a readable PPTX package.
    """
    try:
        prs = pptx.Presentation(str(path))
        slides = list(prs.slides)
    except _OPEN_ERRORS as exc:
        raise ParseError(path, f"not a readable PPTX ({type(exc).__name__}: {exc})") from exc
    builder = DocumentBuilder()
    first_title = ""
    for number, slide in enumerate(slides, start=1):
        if deadline is not None and time.monotonic() > deadline:
            raise ParseError(path, f"timed out after {number - 1} slides")
        title = ""
        try:
            title_shape = slide.shapes.title
            if title_shape is not None and title_shape.has_text_frame:
                title = " ".join(title_shape.text_frame.text.split())
        except (KeyError, ValueError, AttributeError) as exc:
            log.warning("%s: slide %d title unreadable: %s", path.name, number, exc)
        try:
            parts = list(_shape_texts(slide.shapes))
        except (KeyError, ValueError, AttributeError) as exc:
            log.warning("%s: slide %d shapes unreadable: %s", path.name, number, exc)
            parts = []
        try:
            if slide.has_notes_slide:
                frame = slide.notes_slide.notes_text_frame
                notes = frame.text.strip() if frame is not None else ""
                if notes:
                    parts.append(f"Notes: {notes}")
        except (KeyError, ValueError, AttributeError) as exc:
            log.warning("%s: slide %d notes unreadable: %s", path.name, number, exc)
        first_title = first_title or title
        builder.add("\n\n".join(parts), Location(LocationKind.SLIDE, number, title))
    title = pick_title(prs.core_properties.title, first_title, fallback=path.stem)
    return Document(path, DocFormat.PPTX, title, builder.text, builder.sections)
