"""Markdown and plain-text parsers, and the HTML-to-text walker shared with the EPUB parser."""

from __future__ import annotations

import codecs
import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer
import markdown
from bs4 import BeautifulSoup, Tag, XMLParsedAsHTMLWarning
from bs4.element import Comment, Doctype, NavigableString, ProcessingInstruction

from verifai_desktop.domain import DocFormat, Document, Location, LocationKind
from verifai_desktop.errors import ParseError
from verifai_desktop.ingest.formats import DocumentBuilder, clean_text, pick_title

log = logging.getLogger(__name__)

_BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "hr",
        "html",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "section",
        "summary",
        "ul",
    }
)
_SKIP_TAGS = frozenset({"script", "style", "head", "template", "noscript", "svg", "math"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class HtmlBlock:
    """One block of text from an HTML body.

    Attributes:
        text: the block's text; lines within it (``<br>``, table rows, ``<pre>``) split by "\\n".
        heading_level: 1-6 for ``<h1>``..``<h6>``, 0 for any other block.
    """

    text: str
    heading_level: int = 0


def _inline_text(tag: Tag) -> str:
    return _WS.sub(" ", tag.get_text(" ")).strip()


class _Walker:
    def __init__(self) -> None:
        self.blocks: list[HtmlBlock] = []
        self._buffer: list[str] = []

    def flush(self) -> None:
        text = "".join(self._buffer)
        self._buffer.clear()
        lines = [line.strip() for line in text.split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            self.blocks.append(HtmlBlock(text))

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, (Comment, Doctype, ProcessingInstruction)):
                continue
            if isinstance(child, NavigableString):
                self._buffer.append(_WS.sub(" ", str(child)))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower()
            if name in _SKIP_TAGS:
                continue
            if name == "br":
                self._buffer.append("\n")
            elif name in _HEADINGS:
                self.flush()
                text = _inline_text(child)
                if text:
                    self.blocks.append(HtmlBlock(text, _HEADINGS[name]))
            elif name == "table":
                self.flush()
                rows = []
                for tr in child.find_all("tr"):
                    cells = [_inline_text(c) for c in tr.find_all(["td", "th"], recursive=False)]
                    row = " | ".join(c for c in cells if c)
                    if row:
                        rows.append(row)
                cap = child.find("caption")
                if cap is not None and _inline_text(cap):
                    rows.insert(0, _inline_text(cap))
                if rows:
                    self.blocks.append(HtmlBlock("\n".join(rows)))
            elif name == "pre":
                self.flush()
                text = child.get_text().strip("\n")
                if text.strip():
                    self.blocks.append(HtmlBlock(text))
            elif name in _BLOCK_TAGS:
                self.flush()
                self.walk(child)
                self.flush()
            else:
                self.walk(child)


def html_blocks(html: str | bytes) -> list[HtmlBlock]:
    """Split an HTML/XHTML document into text blocks in reading order.

    Block elements (paragraphs, list items, headings, table rows) become separate blocks or
    lines; inline whitespace collapses to single spaces as a browser would render it.

    Args:
        html: the markup.

    Returns:
        Non-empty blocks, in document order.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)  # EPUB chapters are XHTML
        soup = BeautifulSoup(html, "lxml")
    root = soup.body or soup
    walker = _Walker()
    walker.walk(root)
    walker.flush()
    return walker.blocks


def _md_sections(blocks: list[HtmlBlock]) -> Iterator[tuple[str, list[str]]]:
    """Group blocks under their heading path (``"H1 > H2"``)."""
    stack: list[tuple[int, str]] = []
    current: list[str] = []
    path = ""
    for block in blocks:
        if block.heading_level:
            if current:
                yield path, current
            while stack and stack[-1][0] >= block.heading_level:
                stack.pop()
            stack.append((block.heading_level, block.text))
            path = " > ".join(t for _, t in stack)
            current = [block.text]
        else:
            current.append(block.text)
    if current:
        yield path, current


def parse_markdown(
    path: Path, *, password: str | None = None, deadline: float | None = None
) -> Document:
    """Render Markdown to HTML (``markdown`` library) and keep its heading path per section.

    Args:
        path: the ``.md`` file (any encoding, detected as for TXT).
        password: unused.
        deadline: unused (text files parse in one pass).

    Returns:
        A Document with one ``Location(SECTION, heading="H1 > H2")`` section per heading.

    Raises:
        ParseError: unreadable or undecodable file.
    """
    source = decode_text(path, path.read_bytes())
    html = markdown.markdown(source, extensions=["extra", "sane_lists"])
    blocks = html_blocks(html)
    builder = DocumentBuilder()
    for heading_path, texts in _md_sections(blocks):
        builder.add("\n\n".join(texts), Location(LocationKind.SECTION, None, heading_path))
    title = pick_title(next((b.text for b in blocks if b.heading_level), ""), fallback=path.stem)
    return Document(path, DocFormat.MD, title, builder.text, builder.sections)


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _utf16_by_nuls(data: bytes) -> str | None:
    """UTF-16 byte order guessed from where NUL bytes sit, or ``None`` if it does not look UTF-16.

    Mostly-ASCII (or Latin) text in UTF-16 has a NUL in every other byte: at odd offsets for
    little endian, at even offsets for big endian. charset-normalizer misses BOM-less UTF-16.
    """
    sample = data[:65536]
    if len(sample) < 4:
        return None
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    pairs = len(sample) // 2
    if odd > 0.3 * pairs and even < 0.05 * pairs:
        return "utf-16-le"
    if even > 0.3 * pairs and odd < 0.05 * pairs:
        return "utf-16-be"
    return None


_WESTERN_LANGUAGES = frozenset(
    {
        "English",
        "Dutch",
        "Portuguese",
        "French",
        "German",
        "Spanish",
        "Italian",
        "Danish",
        "Swedish",
        "Norwegian",
        "Finnish",
        "Catalan",
        "Indonesian",
    }
)
_WESTERN_CODEPAGES = frozenset({"cp1252", "latin_1", "iso8859_15", "ascii"})


def _detect_single_byte(path: Path, data: bytes) -> str:
    """Encoding of non-UTF-8 text by charset-normalizer, preferring cp1252 for Western languages.

    charset-normalizer scores cp1250 and cp1252 equally on Portuguese or Dutch text (their
    common letters coincide) and may pick cp1250, which turns "ã" into "ă"; text it recognises as
    a Western European language is decoded as cp1252 (a superset of Latin-1's printable range).
    """
    best = charset_normalizer.from_bytes(data).best()
    if best is None:
        raise ParseError(path, "not text in any known encoding (binary data?)")
    if best.encoding not in _WESTERN_CODEPAGES and best.language in _WESTERN_LANGUAGES:
        try:
            data.decode("cp1252")
        except UnicodeDecodeError:
            return str(best.encoding)
        return "cp1252"
    return str(best.encoding)


def decode_text(path: Path, data: bytes) -> str:
    """Decode text bytes: BOM, then UTF-16 NUL pattern, then UTF-8, then charset-normalizer.

    Args:
        path: the file (for error messages).
        data: its bytes.

    Returns:
        The text, with no NUL characters and ``\\n`` line ends.

    Raises:
        ParseError: the bytes are not text in any encoding the detector knows.
    """
    encoding: str | None = None
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding = name
            break
    if encoding is None:
        encoding = _utf16_by_nuls(data)
    if encoding is None:
        try:
            data.decode("utf-8")
            encoding = "utf-8"
        except UnicodeDecodeError:
            encoding = _detect_single_byte(path, data)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise ParseError(path, f"cannot decode as {encoding} ({exc})") from exc
    if text.count("\x00") > max(8, len(text) // 100):
        raise ParseError(path, f"decoded as {encoding} but full of NUL characters (binary data?)")
    log.debug("%s decoded as %s", path.name, encoding)
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def parse_txt(
    path: Path, *, password: str | None = None, deadline: float | None = None
) -> Document:
    """Read a plain-text file in any common encoding as one section.

    Args:
        path: the file.
        password: unused.
        deadline: unused (text files parse in one pass).

    Returns:
        A Document with a single ``Location(SECTION)`` section (empty text gives no section).

    Raises:
        ParseError: unreadable or undecodable file.
    """
    text = clean_text(decode_text(path, path.read_bytes()))
    builder = DocumentBuilder()
    builder.add(text, Location(LocationKind.SECTION))
    return Document(path, DocFormat.TXT, path.stem, builder.text, builder.sections)
