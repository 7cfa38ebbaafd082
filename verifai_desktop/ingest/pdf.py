"""PDF parser (PyMuPDF): text per page, with the 1-based page number; pages without a text
layer are recognised by OCR (:mod:`verifai_desktop.ingest.ocr`)."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pymupdf

from verifai_desktop.domain import DocFormat, Document, Location, LocationKind
from verifai_desktop.errors import EncryptedDocument, NeedsOcr, ParseError
from verifai_desktop.ingest import clock
from verifai_desktop.ingest.formats import DocumentBuilder, clean_text, pick_title
from verifai_desktop.ingest.ocr import OcrOptions, PageProgress, recognise_pages, unread_summary

log = logging.getLogger(__name__)

# PyMuPDF's functions are untyped; going through Any keeps mypy --strict quiet without ignores.
_mu: Any = pymupdf

# Keep MuPDF's own messages off stderr; they are collected and logged per file instead.
_mu.TOOLS.mupdf_display_errors(False)
_mu.TOOLS.mupdf_display_warnings(False)

TEXT_FLAGS: int = (
    pymupdf.TEXT_DEHYPHENATE | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
)
"""MuPDF extraction flags of the indexed text (and of the glyph boxes that highlight it)."""
_EOF_TAIL_BYTES = 2048
_MAX_UNKNOWN_GLYPH_SHARE = 0.3  # U+FFFD share above which the text layer is garbage
# "appro-\npriately" -> "appropriately"; TEXT_DEHYPHENATE does not apply to "text" output.
_LINE_END_HYPHEN = re.compile(r"(?<=[a-z])-[ \t]*\n[ \t]*(?=[a-z])")


def _has_eof_marker(path: Path) -> bool:
    """Whether the file ends with ``%%EOF`` (within the last 2 KiB), i.e. is not truncated."""
    with path.open("rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - _EOF_TAIL_BYTES))
        return b"%%EOF" in fh.read()


_STREAM_ERROR = re.compile(
    r"^.*(?:zlib error|syntax error in content stream|cannot inflate).*$",
    re.IGNORECASE | re.MULTILINE,
)


def page_text(page: pymupdf.Page) -> str:
    """The text of one page as it is indexed (its section of ``Document.text``): MuPDF's
    plain text, line-end hyphens joined, cleaned by :func:`~.formats.clean_text`.

    Args:
        page: the page.

    Returns:
        The page text, ``""`` for a page without text.

    Raises:
        RuntimeError, ValueError: MuPDF cannot read the page's content stream.
    """
    raw: str = page.get_text("text", flags=TEXT_FLAGS)  # type: ignore[no-untyped-call]
    return clean_text(_LINE_END_HYPHEN.sub("", raw))


def _why_no_text(path: Path, doc: Any) -> ParseError:
    """The error for a PDF whose pages gave no text: a damaged content stream (the real
    reason, e.g. MuPDF's "zlib error: incorrect header check"), scanned images (needs OCR),
    or pages that hold neither text nor images."""
    damage = _STREAM_ERROR.search(_mu.TOOLS.mupdf_warnings())
    if damage is not None:
        return ParseError(
            path,
            f"its page contents cannot be decoded (MuPDF: {damage.group(0).strip()}); the file "
            "is damaged: get a complete copy or export it again",
        )
    if any(doc[i].get_images() for i in range(doc.page_count)):
        return NeedsOcr(path)
    return NeedsOcr(
        path,
        "no text and no scanned images on any page (only drawings); if its text is drawn "
        "as outlines, run OCR on it",
    )


def parse_pdf(
    path: Path,
    *,
    password: str | None = None,
    deadline: float | None = None,
    ocr: OcrOptions | None = None,
    on_page: PageProgress | None = None,
) -> Document:
    """Extract the text of every page; recognise the pages without a text layer (OCR).

    Args:
        path: the PDF file.
        password: user or owner password for an encrypted file.
        deadline: ``clock.now()`` value after which parsing stops with a ParseError
            (checked between pages).
        ocr: how pages without a text layer that hold images are read
            (:func:`~verifai_desktop.ingest.ocr.recognise_pages`); ``None``: OCR off.
        on_page: progress of OCR, called before each page is recognised.

    Returns:
        A Document with one ``Location(PAGE, n)`` section per page that has text (recognised
        pages carry their ``Section.ocr``) and the pages OCR did not read in
        ``unrecognised``.

    Raises:
        EncryptedDocument: encrypted and no password or a wrong one was given.
        NeedsOcr: no page has text: scanned images that OCR did not read (the reasons).
        ParseError: damaged, truncated or unreadable file, or timed out.
    """
    _mu.TOOLS.reset_mupdf_warnings()
    try:
        doc = _mu.open(path, filetype="pdf")
    except (pymupdf.FileDataError, pymupdf.EmptyFileError, RuntimeError, ValueError) as exc:
        raise ParseError(path, f"not a readable PDF ({exc})") from exc
    try:
        if doc.needs_pass:
            if password is None:
                raise EncryptedDocument(path)
            if not doc.authenticate(password):
                raise EncryptedDocument(path, wrong_password=True)
        if doc.page_count == 0 or (doc.is_repaired and not _has_eof_marker(path)):
            raise ParseError(
                path,
                "the file is truncated or damaged beyond repair (no end-of-file marker, "
                f"{doc.page_count} pages recoverable); get a complete copy of it",
            )
        texts: list[str | None] = []  # None: the page could not be read
        for index in range(doc.page_count):
            if deadline is not None and clock.now() > deadline:
                raise ParseError(path, f"timed out after reading {index} of {doc.page_count} pages")
            try:
                texts.append(page_text(doc[index]))
            except (RuntimeError, ValueError) as exc:
                log.warning("%s: page %d unreadable: %s", path.name, index + 1, exc)
                texts.append(None)
        if all(text is None for text in texts):
            raise ParseError(path, "no page could be read (damaged content streams)")
        scanned = [i for i, text in enumerate(texts) if text == "" and doc[i].get_images()]
        read, unread = recognise_pages(
            path, doc, scanned, ocr or OcrOptions("off"), deadline=deadline, on_page=on_page
        )
        builder = DocumentBuilder()
        for index, text in enumerate(texts):
            if index in read:
                builder.add(read[index][0], Location(LocationKind.PAGE, index + 1), read[index][1])
            elif text:
                builder.add(text, Location(LocationKind.PAGE, index + 1))
        if not builder.sections:
            raise NeedsOcr(path, unread_summary(unread)) if unread else _why_no_text(path, doc)
        text = builder.text
        if text.count("\ufffd") > _MAX_UNKNOWN_GLYPH_SHARE * len(text):
            raise ParseError(
                path,
                "its text layer is unreadable (fonts without a Unicode mapping); "
                "run OCR on it or export it again",
            )
        title = str((doc.metadata or {}).get("title", "") or "")
        warnings = _mu.TOOLS.mupdf_warnings()
        if warnings:
            log.info("%s: MuPDF warnings: %s", path.name, warnings[:500])
        return Document(
            path=path,
            format=DocFormat.PDF,
            title=pick_title(title, fallback=path.stem),
            text=text,
            sections=builder.sections,
            unrecognised=tuple(unread),
        )
    finally:
        doc.close()
