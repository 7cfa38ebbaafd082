"""OCR of PDF pages without a text layer (scans), offline on the CPU, in the parser worker.

:func:`recognise_pages` renders each such page with PyMuPDF and reads it with one engine
behind :class:`OcrEngine`, picked by name from :data:`ENGINES` (setting ``ingest.ocr_engine``);
the images a DOCX, PPTX or EPUB places in its text go through the same engines and the same
loop (:func:`recognise_each`: limits, time, progress) from :mod:`.embedded`:

- ``"tesseract"``: Tesseract 5 (Debian ``tesseract-ocr``, English data) through
  ``pytesseract``'s ``image_to_data``: word boxes and per-word confidences.
- ``"rapidocr"``: RapidOCR on ONNX Runtime (``rapidocr-onnxruntime``, the ``ocr`` extra; the
  PP-OCRv4 detection and recognition models ship inside the package): line boxes and per-line
  confidences; it scales a page to 2000 px on its long side, reads the lines of a two-column
  page across both columns, and drops the spaces between words on some scans (the nasty
  lexmark scan: "FaculdadedeEngenharia").

A page is not recognised, and is recorded with its reason, when OCR is off, the file has more
scanned pages than ``ingest.ocr_max_pages``, an embedded image declares more pixels than
``ingest.ocr_max_pixels`` (a decompression bomb is never decoded), its image cannot be decoded,
the engine is missing or fails, or it finds no text. Running in the parser worker
(:class:`~verifai_desktop.ingest.parse.ParserPool`), OCR is under the per-file time limit; the
pages the limit would cut are left out (and recorded) so the file keeps those read.
"""

from __future__ import annotations

import logging
import math
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.errors import ParseError
from verifai_desktop.ingest import clock
from verifai_desktop.ingest.formats import clean_text
from verifai_desktop.ingest.unread import unread_summary as unread_summary
from verifai_desktop.recognition import Recognition, WordBox
from verifai_desktop.settings import IngestSettings

log = logging.getLogger(__name__)

PageProgress = Callable[[int, int, int, str], None]
"""Called before a page or image is recognised with ``(done, total, number, unit)``: those of
the file recognised so far, how many it has to recognise, the 1-based number of the one now
read (its page number, or its place among the file's images), and ``unit`` (``"pages"`` for
scanned PDF pages, ``"images"`` for the images of a DOCX, PPTX or EPUB)."""

MIN_DPI = 100
"""Lowest resolution a page is recognised at: below it body text is too small to read."""

_IMAGE_ERROR = re.compile(
    r"^(?=.*(?:jpeg|jbig2|jpx|openjpeg|png|tiff|image|flate|zlib|lzw|ccitt|fax))"
    r"(?=.*(?:error|cannot|corrupt|premature|truncated|invalid|unexpected)).*$",
    re.IGNORECASE | re.MULTILINE,
)
"""MuPDF warnings that say a page's image did not decode (rendered blank or in part)."""


_DEFAULTS = IngestSettings()

OCR_OFF_REASON = "OCR is off (setting ingest.ocr_engine, or --no-ocr)"
"""Why a scanned page was not recognised when the engine is ``"off"``."""
TIME_LIMIT_REASON = "not reached within the time limit per file (verifai ingest --timeout)"
"""Why the scanned pages left when the time limit drew near were not recognised (in the parser
worker, which does not know the limit; the ingest records :func:`time_limit_reason`)."""
_CUT_BY_LIMIT = re.compile(r"not reached within the time limit of ([0-9.e+]+) s per file")
PAGE_TIME_MARGIN = 1.5
"""A page is started only with this many times the slowest page's time left."""
_OVER_PAGES = re.compile(r"(\d+) (?:scanned pages|embedded images), over the OCR limit")
_UNITS = {"pages": ("page", "scanned pages"), "images": ("image", "embedded images")}
"""What a unit of :data:`PageProgress` counts: one of it, and many in messages."""


class PageNotRecognised(Exception):
    """OCR did not read a page; ``reason`` says why (stored with the document)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class OcrOptions:
    """How :func:`recognise_pages` reads scanned pages (from :class:`IngestSettings`).

    Attributes:
        engine: ``"tesseract"``, ``"rapidocr"`` or ``"off"``.
        dpi: render resolution, dots per inch.
        max_pixels: pixel limit of an embedded page image and of the rendered page.
        max_pages: most scanned pages recognised in one file.
    """

    engine: str = _DEFAULTS.ocr_engine
    dpi: int = _DEFAULTS.ocr_dpi
    max_pixels: int = _DEFAULTS.ocr_max_pixels
    max_pages: int = _DEFAULTS.ocr_max_pages

    @classmethod
    def from_settings(cls, ingest: IngestSettings, *, enabled: bool = True) -> OcrOptions:
        """The options of the ``ingest`` settings; engine ``"off"`` unless ``enabled``
        (``verifai ingest --no-ocr``)."""
        engine = ingest.ocr_engine if enabled else "off"
        return cls(engine, ingest.ocr_dpi, ingest.ocr_max_pixels, ingest.ocr_max_pages)


@dataclass(frozen=True, slots=True)
class Token:
    """What an engine read at one box of the page image.

    Attributes:
        text: a word (Tesseract) or a text line (RapidOCR).
        box: ``(x0, y0, x1, y1)`` in pixels of the rendered image, top-left origin.
        confidence: the engine's confidence, 0..1.
    """

    text: str
    box: tuple[float, float, float, float]
    confidence: float


class OcrEngine(Protocol):
    """One OCR engine: reads the text lines of a page image."""

    name: str

    def version(self) -> str:
        """The engine's version (``"5.3.0"``), ``""`` when it is not installed."""
        ...

    def read(self, image: NDArray[np.uint8], *, timeout_s: float) -> list[list[Token]]:
        """Read a page image.

        Args:
            image: uint8 RGB, shape (height, width, 3).
            timeout_s: seconds left for this page (an engine that cannot stop early
                ignores it; the parser worker's time limit stops it).

        Returns:
            Text lines in reading order, each its tokens left to right.

        Raises:
            PageNotRecognised: the engine is missing or failed on the image.
        """
        ...


class TesseractEngine:
    """Tesseract through ``pytesseract`` (English), per-word boxes and confidences."""

    name = "tesseract"
    LANGUAGE = "eng"

    def version(self) -> str:
        """See :meth:`OcrEngine.version` (``tesseract --version``, read once per process)."""
        try:
            import pytesseract
        except ImportError:
            return ""
        tess: Any = pytesseract
        if shutil.which(tess.pytesseract.tesseract_cmd) is None:  # the version is cached
            return ""
        try:
            return str(tess.get_tesseract_version())
        except (tess.TesseractNotFoundError, OSError, SystemExit):  # SystemExit: odd output
            return ""

    def read(self, image: NDArray[np.uint8], *, timeout_s: float) -> list[list[Token]]:
        """See :meth:`OcrEngine.read`."""
        try:
            import pytesseract
            from PIL import Image
        except ImportError as exc:
            raise PageNotRecognised(
                "the OCR engine tesseract is not installed (pip install pytesseract, and "
                "Tesseract itself: apt-get install tesseract-ocr); or set ingest.ocr_engine"
            ) from exc
        tess: Any = pytesseract
        try:
            data = tess.image_to_data(
                Image.fromarray(image),
                lang=self.LANGUAGE,
                output_type=tess.Output.DICT,
                timeout=max(1.0, timeout_s) if math.isfinite(timeout_s) else 0,  # 0: none
            )
        except tess.TesseractNotFoundError as exc:
            raise PageNotRecognised(
                "the Tesseract program is not installed (apt-get install tesseract-ocr); "
                "or set ingest.ocr_engine to rapidocr"
            ) from exc
        except (tess.TesseractError, RuntimeError, OSError) as exc:
            raise PageNotRecognised(f"Tesseract failed on it ({exc})") from exc
        lines: dict[tuple[int, int, int], list[Token]] = {}
        for i, text in enumerate(data["text"]):
            conf = float(data["conf"][i])
            if conf < 0 or not str(text).strip():
                continue  # page, block, paragraph and line rows, and empty words
            x, y, w, h = (float(data[k][i]) for k in ("left", "top", "width", "height"))
            key = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
            lines.setdefault(key, []).append(Token(str(text), (x, y, x + w, y + h), conf / 100))
        return list(lines.values())


class RapidOcrEngine:
    """RapidOCR on ONNX Runtime, per-line boxes and confidences; its models load on the
    first page (about a second) and stay loaded in the worker."""

    name = "rapidocr"

    def __init__(self) -> None:
        self._ocr: Any = None

    def version(self) -> str:
        """See :meth:`OcrEngine.version` (the ``rapidocr-onnxruntime`` package's)."""
        from importlib import metadata

        try:
            return metadata.version("rapidocr-onnxruntime")
        except metadata.PackageNotFoundError:
            return ""

    def read(self, image: NDArray[np.uint8], *, timeout_s: float) -> list[list[Token]]:
        """See :meth:`OcrEngine.read`."""
        if self._ocr is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise PageNotRecognised(
                    "the OCR engine rapidocr is not installed (pip install "
                    "'verifai-desktop[ocr]'); or set ingest.ocr_engine to tesseract"
                ) from exc
            self._ocr = RapidOCR()
        try:
            result, _ = self._ocr(np.ascontiguousarray(image[:, :, ::-1]))  # it wants BGR
        except Exception as exc:  # an ONNX Runtime or OpenCV failure on this image
            raise PageNotRecognised(f"RapidOCR failed on it ({type(exc).__name__})") from exc
        lines = []
        for points, text, score in result or ():
            xs = [float(p[0]) for p in points]
            ys = [float(p[1]) for p in points]
            box = (min(xs), min(ys), max(xs), max(ys))
            lines.append([Token(str(text), box, float(score))])
        return lines


ENGINES: dict[str, Callable[[], OcrEngine]] = {
    "tesseract": TesseractEngine,
    "rapidocr": RapidOcrEngine,
}
"""OCR engines by setting value (``ingest.ocr_engine``)."""

_loaded: dict[str, OcrEngine] = {}  # one per worker process: RapidOCR loads its models once


def get_engine(name: str) -> OcrEngine:
    """The engine of that name, created once per process.

    Raises:
        KeyError: no engine of that name.
    """
    if name not in _loaded:
        _loaded[name] = ENGINES[name]()
    return _loaded[name]


def page_text_and_words(
    lines: Sequence[Sequence[Token]], scale: float, engine: str, version: str = ""
) -> tuple[str, Recognition]:
    """Join what an engine read into clean page text with word boxes in PDF points.

    Args:
        lines: text lines in reading order, as :meth:`OcrEngine.read` returns them.
        scale: rendered pixels per PDF point (dpi / 72).
        engine: the engine's name.
        version: the engine's version (:meth:`OcrEngine.version`).

    Returns:
        The page text (tokens joined by a space, lines by a newline; already
        :func:`~verifai_desktop.ingest.formats.clean_text`) and its recognition, word offsets
        into that text.
    """
    parts: list[str] = []
    words: list[WordBox] = []
    length = 0
    for line in lines:
        first = True
        for token in line:
            text = " ".join(clean_text(token.text).split())
            if not text:
                continue
            sep = "" if not parts else (" " if not first else "\n")
            parts.append(sep + text)
            length += len(sep)
            x0, y0, x1, y1 = (v / scale for v in token.box)
            words.append(WordBox(length, length + len(text), x0, y0, x1, y1, token.confidence))
            length += len(text)
            first = False
    mean = sum(w.confidence for w in words) / len(words) if words else 0.0
    return "".join(parts), Recognition(engine, mean, tuple(words), version)


def _check_images(page: Any, max_pixels: int) -> None:
    """Refuse a page whose embedded image declares more than ``max_pixels`` pixels (read
    from the image's dictionary; nothing is decoded)."""
    for image in page.get_images(full=True):
        width, height = int(image[2]), int(image[3])
        if width * height > max_pixels:
            raise PageNotRecognised(
                f"its image is {width:,} x {height:,} pixels, over the limit of "
                f"{max_pixels:,} (setting ingest.ocr_max_pixels)"
            )


def render_page(page: Any, options: OcrOptions) -> tuple[NDArray[np.uint8], float]:
    """Render a page for OCR at ``options.dpi``, lower when that passes the pixel limit.

    Args:
        page: a PyMuPDF page.
        options: resolution and pixel limit.

    Returns:
        The image (uint8 RGB, shape (height, width, 3)) and its scale in pixels per point.

    Raises:
        PageNotRecognised: an embedded image over the pixel limit or that cannot be decoded,
            or a page so large it would render under :data:`MIN_DPI`.
    """
    import pymupdf

    mu: Any = pymupdf
    _check_images(page, options.max_pixels)
    area_pt2 = max(1.0, float(page.rect.width) * float(page.rect.height))
    dpi = min(float(options.dpi), 72.0 * math.sqrt(options.max_pixels / area_pt2))
    if dpi < MIN_DPI:
        raise PageNotRecognised(
            f"the page is {page.rect.width / 72:.0f} x {page.rect.height / 72:.0f} in; under "
            f"the pixel limit of {options.max_pixels:,} it renders below {MIN_DPI} dpi "
            "(setting ingest.ocr_max_pixels)"
        )
    seen = len(mu.TOOLS.mupdf_warnings(reset=False))  # the parser reads earlier ones later
    try:
        pix = page.get_pixmap(dpi=int(dpi), colorspace=mu.csRGB, alpha=False)
    except (RuntimeError, ValueError, MemoryError) as exc:
        raise PageNotRecognised(f"the page cannot be rendered ({exc})") from exc
    damage = _IMAGE_ERROR.search(mu.TOOLS.mupdf_warnings(reset=False)[seen:])
    if damage is not None:
        raise PageNotRecognised(
            f"its image cannot be decoded (MuPDF: {damage.group(0).strip()}); the scan is "
            "damaged: get a complete copy"
        )
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    return image, pix.width / float(page.rect.width)


def read_image(
    image: NDArray[np.uint8], scale: float, options: OcrOptions, *, timeout_s: float
) -> tuple[str, Recognition]:
    """Read a page image or an embedded image with the engine of ``options``.

    Args:
        image: uint8 RGB, shape (height, width, 3).
        scale: image pixels per PDF point of the page (1.0 for an image without a page).
        options: the engine; not ``"off"``.
        timeout_s: seconds left for it.

    Returns:
        Its text (``""`` when the engine found none) and recognition, as
        :func:`page_text_and_words` joins them.

    Raises:
        PageNotRecognised: the engine is missing or failed on it.
    """
    engine = get_engine(options.engine)
    lines = engine.read(image, timeout_s=timeout_s)
    return page_text_and_words(lines, scale, engine.name, engine.version())


def recognise_page(page: Any, options: OcrOptions, *, timeout_s: float) -> tuple[str, Recognition]:
    """Render and read one page.

    Args:
        page: a PyMuPDF page without a text layer.
        options: engine, resolution and limits; the engine is not ``"off"``.
        timeout_s: seconds left for this page.

    Returns:
        The page text and its recognition (word offsets into that text, boxes in points).

    Raises:
        PageNotRecognised: with the reason (see the module docstring).
    """
    image, scale = render_page(page, options)
    text, recognition = read_image(image, scale, options, timeout_s=timeout_s)
    if not text:
        raise PageNotRecognised(f"{recognition.engine} found no text on it")
    return text, recognition


def recognise_pages(
    path: Path,
    doc: Any,
    page_indexes: Sequence[int],
    options: OcrOptions,
    *,
    deadline: float | None = None,
    on_page: PageProgress | None = None,
) -> tuple[dict[int, tuple[str, Recognition]], list[tuple[int, str]]]:
    """Recognise the scanned pages of a PDF (:func:`recognise_each` of its pages).

    Args:
        path: the PDF file, for the error.
        doc: its open PyMuPDF document.
        page_indexes: 0-based indexes of the pages without a text layer that hold images.
        options: engine, resolution and limits.
        deadline: ``clock.now()`` value; checked before each page.
        on_page: progress, called before each page is read (unit ``"pages"``).

    Returns:
        ``({page index: (text, recognition)}, [(page number, reason), ...])``: the pages
        read, and the 1-based numbers of those not read with why.

    Raises:
        ParseError: ``deadline`` passed before a page (the page and how many were read).
    """
    read, unread = recognise_each(
        path,
        [i + 1 for i in page_indexes],
        lambda number, timeout_s: recognise_page(doc[number - 1], options, timeout_s=timeout_s),
        options,
        unit="pages",
        deadline=deadline,
        on_page=on_page,
    )
    return {number - 1: result for number, result in read.items()}, unread


def recognise_each(
    path: Path,
    numbers: Sequence[int],
    read_one: Callable[[int, float], tuple[str, Recognition]],
    options: OcrOptions,
    *,
    unit: str,
    deadline: float | None = None,
    on_page: PageProgress | None = None,
) -> tuple[dict[int, tuple[str, Recognition]], list[tuple[int, str]]]:
    """Recognise a file's scanned pages or embedded images one by one, within its limits.

    None is read when OCR is off or there are more than ``options.max_pages`` of them (each
    recorded with that reason); one that ``read_one`` refuses is recorded with its reason.

    Args:
        path: the file, for the error.
        numbers: 1-based numbers of those to read (page numbers, or image numbers).
        read_one: reads one, given its number and the seconds left; raises
            :class:`PageNotRecognised` with the reason it cannot.
        options: engine and limits.
        unit: ``"pages"`` or ``"images"``, for progress and messages.
        deadline: ``clock.now()`` value; checked before each one.
        on_page: progress, called before each one is read.

    Returns:
        ``({number: (text, recognition)}, [(number, reason), ...])``: those read, and those
        not read with why. When the time left is under :data:`PAGE_TIME_MARGIN` times the
        slowest one so far, those not yet read are left out (:data:`TIME_LIMIT_REASON`), so
        the file keeps those read.

    Raises:
        ParseError: ``deadline`` passed before one (which, and how many were read).
    """
    one, many = _UNITS[unit]
    total = len(numbers)
    if options.engine == "off":
        return {}, [(n, OCR_OFF_REASON) for n in numbers]
    if total > options.max_pages:
        limit = "pages" if unit == "pages" else "pages or images"
        reason = (
            f"{total} {many}, over the OCR limit of {options.max_pages} {limit} per file "
            "(setting ingest.ocr_max_pages)"
        )
        return {}, [(n, reason) for n in numbers]
    read: dict[int, tuple[str, Recognition]] = {}
    unread: list[tuple[int, str]] = []
    slowest_s = 0.0
    for done, number in enumerate(numbers):
        left = math.inf if deadline is None else deadline - clock.now()
        if left <= 0:
            raise ParseError(
                path,
                f"timed out before recognising {one} {number} ({done} of {total} {many} "
                "read); raise the time limit (verifai ingest --timeout)",
            )
        if left < PAGE_TIME_MARGIN * slowest_s:
            # The worker would be killed in the middle of the next one, losing those read.
            unread.extend((n, TIME_LIMIT_REASON) for n in numbers[done:])
            break
        if on_page is not None:
            on_page(done, total, number, unit)
        t0 = time.perf_counter()
        try:
            read[number] = read_one(number, left)
        except PageNotRecognised as exc:
            log.info("%s %d not recognised: %s", one, number, exc.reason)
            unread.append((number, exc.reason))
            continue
        finally:
            slowest_s = max(slowest_s, time.perf_counter() - t0)
        log.info(
            "%s %d recognised by %s in %.1f s (mean confidence %.2f)",
            one,
            number,
            options.engine,
            time.perf_counter() - t0,
            read[number][1].mean_confidence,
        )
    return read, unread


def time_limit_reason(timeout_s: float) -> str:
    """Why pages or images were left out when the per-file time limit drew near, as the
    ingest records it: the limit it had (seconds), so a run with a larger one reads them
    (:func:`worth_retrying`); the file is indexed in part until then."""
    return (
        f"not reached within the time limit of {timeout_s:g} s per file; indexed in part: "
        "ingest it again with a larger --timeout to read them"
    )


def worth_retrying(reason: str, options: OcrOptions | None, timeout_s: float | None = None) -> bool:
    """Whether an unchanged file whose scanned pages or embedded images were left out for
    ``reason`` (its stored status reason) would be read now: OCR was off and is on, the file
    had more of them than the page limit then and fits the one in ``options``, or the time
    limit per file cut OCR short (:func:`time_limit_reason`) and ``timeout_s`` (seconds) is
    larger now."""
    if options is None or options.engine == "off":
        return False
    if OCR_OFF_REASON in reason:
        return True
    cut = _CUT_BY_LIMIT.search(reason)
    if cut is not None and timeout_s is not None and timeout_s > float(cut.group(1)):
        return True
    over = _OVER_PAGES.search(reason)
    return over is not None and int(over.group(1)) <= options.max_pages
