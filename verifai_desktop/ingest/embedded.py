"""OCR of the raster images a DOCX, PPTX or EPUB places in its text, at ingest.

The parsers (:mod:`.office`, :mod:`.epub`) hand over each location's content in reading
order as :data:`Piece`\\ s, text blocks and :class:`EmbeddedImage`\\ s (the pictures of a
DOCX body paragraph or table, of a PPTX slide's shapes, the ``<img>`` of an EPUB chapter);
:func:`recognise_embedded` reads the images with the engine and the loop of scanned PDF pages
(:func:`~verifai_desktop.ingest.ocr.recognise_each`: OCR off, the ``ocr_max_pages`` limit,
which counts images here, the per-file time limit, progress in unit ``"images"``) and gives
back the text runs to add at that location, an image's text as its own run carrying its
:class:`~verifai_desktop.recognition.Recognition`.

An image is read only when both its sides are at least :data:`MIN_IMAGE_SIDE_PX`; smaller
ones, vector pictures (EMF, WMF, SVG) and those where the engine finds no text (photos,
drawings) are skipped silently. Its declared size is read from its header before it is
decoded: one over ``ingest.ocr_max_pixels`` (a decompression bomb) is not decoded and, like an
image that does not decode, is recorded with its reason in ``Document.unread_images`` while
the document keeps its text. An image has no page: its recognition holds the engine and the
mean confidence, no word boxes (nothing to draw them on).

Memory is capped per picture, not only its area: a picture is decoded at full size once (a
JPEG at 1/2, 1/4 or 1/8 of it when it is to be scaled down anyway), refused when that and the
copies made to scale it down would take more than :data:`MAX_DECODE_BYTES`, and scaled down by
a whole factor to at most :data:`MAX_OCR_IMAGE_BYTES` before it is brought to RGB and handed to
the engine (whose own memory grows with the image: Tesseract took 533 MB for a 7000 x 7000
picture).
"""

from __future__ import annotations

import io
import logging
import math
import struct
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from docx.image import exceptions as header_errors
from docx.image.image import Image as ImageHeader
from numpy.typing import NDArray
from PIL import Image, UnidentifiedImageError

from verifai_desktop.ingest.ocr import (
    OcrOptions,
    PageNotRecognised,
    PageProgress,
    read_image,
    recognise_each,
)
from verifai_desktop.recognition import Recognition

log = logging.getLogger(__name__)

MIN_IMAGE_SIDE_PX = 300
"""An embedded image is read only when its width and height are both at least this. Text OCR
reads needs letters some 20 px high: an image that holds a passage (a screenshot, a pasted
scan, a labelled figure, a slide picture) is several hundred pixels each way, while icons
(256 px at most, the largest standard icon size), bullets, rules and most logos fall under
it; and each image read costs 0.3 to 10 s of CPU."""

MAX_OCR_IMAGE_BYTES = 48 * 2**20
"""Most bytes of the uint8 RGB image a picture is handed to the OCR engine as (16.7 Mpx, about
4,090 x 4,090): a larger picture is scaled down by a whole factor first (box filter,
:meth:`PIL.Image.Image.reduce`). A letter page scanned at 600 dpi (33.7 Mpx) is read at 300
dpi, the resolution scanned PDF pages are rendered at (``ingest.ocr_dpi``) and Tesseract's
best (https://tesseract-ocr.github.io/tessdoc/ImproveQuality.html: letters of 20 px and up).
Ingesting a 67 KB DOCX holding a 7000 x 7000 grey picture peaked at 1,050 MiB summed over
the processes (the parse worker 764 MiB, Tesseract 533) before this cap, 429 MiB with it
(234 and 157)."""

MAX_DECODE_BYTES = 384 * 2**20
"""Most bytes a picture may take decoded at full size, with the full-size copies made to scale
it down (Pillow keeps a colour pixel in 4 bytes, a grey or palette one in 1; a palette picture
is brought to colour, a transparent one premultiplied, before it is scaled down): every 8-bit
picture within the default ``ingest.ocr_max_pixels`` fits (a transparent one of 50 Mpx takes
381 MiB); a larger limit no longer lets one picture take gigabytes. A picture that needs more
is not decoded and is recorded with this reason."""

VECTOR_TYPES = frozenset(
    {"image/x-emf", "image/emf", "image/x-wmf", "image/wmf", "image/svg+xml", "image/x-eps"}
)
"""Content types of vector pictures: drawn, not scanned text; never read."""


@dataclass(frozen=True, slots=True)
class EmbeddedImage:
    """An image placed in a document's text.

    Attributes:
        name: its name in the file (``"word/media/image1.png"``), the same for every place
            it is shown (read once).
        content_type: its MIME type as the file declares it.
        blob: its encoded bytes.
        where: where it is shown, for the reason it was not read (``"on slide 3"``,
            ``"in section Methods"``); may be empty.
    """

    name: str
    content_type: str
    blob: bytes
    where: str = ""

    @property
    def label(self) -> str:
        """``"ppt/media/image2.png on slide 3"``: how :func:`unread_summary
        <verifai_desktop.ingest.ocr.unread_summary>` names it."""
        return f"{self.name} {self.where}".strip()


Piece = str | EmbeddedImage
"""A text block or an image of one location, in reading order."""


@dataclass(frozen=True, slots=True)
class Run:
    """Text to add to a document at one location: text blocks joined by blank lines, or
    the text OCR read from one image (``ocr`` set)."""

    text: str
    ocr: Recognition | None = None


def _open(blob: bytes) -> Image.Image:
    """The image as Pillow opens it: its header read, nothing decoded yet.

    Raises:
        PageNotRecognised: not an image Pillow reads, or it declares more pixels than Pillow
            will decode (a decompression bomb).
    """
    try:
        with warnings.catch_warnings():  # the limit here is ingest.ocr_max_pixels
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(blob))
    except Image.DecompressionBombError as exc:
        raise PageNotRecognised(f"its image is not decoded: {exc}") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise PageNotRecognised(f"its image cannot be decoded ({exc})") from exc


def declared_size(blob: bytes) -> tuple[int, int]:
    """``(width, height)`` in pixels, as the image's header declares them (nothing decoded):
    python-docx's header reader (BMP, GIF, JPEG, PNG, TIFF; no pixel cap of its own), else
    Pillow's (WebP and the rest).

    Raises:
        PageNotRecognised: neither reads its header, or Pillow refuses it as a
            decompression bomb.
    """
    try:
        header = ImageHeader.from_blob(blob)
        return int(header.px_width), int(header.px_height)
    except (
        header_errors.UnrecognizedImageError,
        header_errors.InvalidImageStreamError,
        header_errors.UnexpectedEndOfFileError,
        struct.error,
        IndexError,
        ValueError,
    ):
        width, height = _open(blob).size
        return width, height


def decode_image(blob: bytes, max_pixels: int) -> NDArray[np.uint8]:
    """Decode an embedded image for OCR, transparent parts on white, scaled down by a whole
    factor to at most :data:`MAX_OCR_IMAGE_BYTES` (see the module docstring).

    Args:
        blob: the encoded image (any format Pillow reads; the first frame).
        max_pixels: pixel limit, checked against :func:`declared_size` before decoding.

    Returns:
        uint8 RGB, shape (height, width, 3): the picture's size divided by
        :func:`reduction_factor` (rounded up).

    Raises:
        PageNotRecognised: over the pixel limit, over :data:`MAX_DECODE_BYTES` decoded, or it
            does not decode.
    """
    width, height = declared_size(blob)
    if width * height > max_pixels:
        raise PageNotRecognised(
            f"its image is {width:,} x {height:,} pixels, over the limit of {max_pixels:,} "
            "(setting ingest.ocr_max_pixels)"
        )
    image = _open(blob)
    factor = reduction_factor(*image.size)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            if factor > 1:  # a JPEG is decoded at 1/2, 1/4 or 1/8 scale; the rest ignore it
                image.draft(None, (image.width // factor, image.height // factor))
            work_mode = _work_mode(image)
            needed = decode_bytes(image.size, image.mode, work_mode)
            if needed > MAX_DECODE_BYTES:
                raise PageNotRecognised(
                    f"its image ({image.width:,} x {image.height:,} pixels, {image.mode}) "
                    f"would take {needed / 2**20:,.0f} MiB of memory to decode, over the "
                    f"limit of {MAX_DECODE_BYTES / 2**20:,.0f} MiB"
                )
            image.load()
            if image.mode != work_mode:
                image = image.convert(work_mode)
            factor = reduction_factor(*image.size)
            if factor > 1:
                image = image.reduce(factor)
            if work_mode in _ALPHA_MODES:
                page = Image.new("RGB", image.size, "white")
                page.paste(image.convert("RGBA"), mask=image.getchannel("A"))
            else:
                page = image.convert("RGB")
    except (OSError, ValueError, SyntaxError, MemoryError) as exc:
        raise PageNotRecognised(f"its image cannot be decoded ({exc})") from exc
    return np.asarray(page, dtype=np.uint8)


_ALPHA_MODES = frozenset({"LA", "RGBA"})
_KEPT_MODES = frozenset({"L", "RGB", *_ALPHA_MODES})
"""Modes a picture is scaled down in as decoded; any other is converted first."""


def _work_mode(image: Image.Image) -> str:
    """The mode a picture is scaled down in: its own when Pillow reduces it as it is (grey or
    colour, with or without alpha); grey for a bilevel one; colour (with alpha when it has
    transparency) for palette, CMYK, 16- and 32-bit ones."""
    if image.mode in _KEPT_MODES:
        return image.mode
    if image.mode == "1":
        return "L"
    transparent = "A" in image.getbands() or "transparency" in image.info
    return "RGBA" if transparent else "RGB"


def decode_bytes(size: tuple[int, int], mode: str, work_mode: str) -> int:
    """Peak bytes a picture takes at full size: decoded in ``mode`` and converted to
    ``work_mode`` (when it differs; the decoded one is then freed), or premultiplied to be
    scaled down when ``work_mode`` is transparent.

    Args:
        size: ``(width, height)`` in pixels, as it will be decoded.
        mode: the Pillow mode it decodes in.
        work_mode: the mode it is scaled down in (one of ``L``, ``LA``, ``RGB``, ``RGBA``).

    Returns:
        Bytes, counting Pillow's storage (4 per pixel for several bands, 1 for one band of
        8 bits or less, 2 for 16 bits, 4 for 32).
    """
    decoded = _stored_bytes(mode)
    converted = decoded + _stored_bytes(work_mode) if work_mode != mode else decoded
    premultiplied = _stored_bytes(work_mode) + 4 if work_mode in _ALPHA_MODES else 0
    return size[0] * size[1] * max(converted, premultiplied)


def _stored_bytes(mode: str) -> int:
    if Image.getmodebands(mode) > 1:
        return 4
    if mode in ("1", "L", "P"):
        return 1
    return 2 if mode.startswith("I;16") else 4


def reduction_factor(width: int, height: int) -> int:
    """The smallest whole factor that brings a ``width`` x ``height`` picture, as uint8 RGB,
    to at most :data:`MAX_OCR_IMAGE_BYTES`; 1 when it fits as it is."""
    factor = 1
    while math.ceil(width / factor) * math.ceil(height / factor) * 3 > MAX_OCR_IMAGE_BYTES:
        factor += 1
    return factor


def _worth_reading(image: EmbeddedImage) -> bool:
    """A raster image both of whose sides reach :data:`MIN_IMAGE_SIDE_PX` (one whose header
    does not read is kept, to be recorded with its reason)."""
    if image.content_type.lower() in VECTOR_TYPES:
        return False
    try:
        width, height = declared_size(image.blob)
    except PageNotRecognised:
        return True
    return min(width, height) >= MIN_IMAGE_SIDE_PX


def recognise_embedded(
    path: Path,
    parts: Sequence[Sequence[Piece]],
    options: OcrOptions | None,
    *,
    deadline: float | None = None,
    on_page: PageProgress | None = None,
) -> tuple[list[list[Run]], tuple[tuple[str, str], ...]]:
    """Read the images of a document's locations and lay out their text among the blocks.

    Args:
        path: the file, for the error.
        parts: each location's pieces (a slide's, a chapter's, a heading section's), in
            reading order.
        options: engine and limits; ``None``: OCR off.
        deadline: ``clock.now()`` value; checked before each image.
        on_page: progress, called before each image is read (unit ``"images"``).

    Returns:
        Per part, its runs in reading order: the text blocks between images joined by blank
        lines, each image's text where the image is; and ``(image label, reason)`` of each
        image worth reading that was not read (``Document.unread_images``).

    Raises:
        ParseError: ``deadline`` passed before an image.
    """
    options = options or OcrOptions("off")
    wanted: dict[str, EmbeddedImage] = {}  # by name, first place shown: each read once
    for piece in (p for part in parts for p in part):
        if isinstance(piece, EmbeddedImage) and piece.name not in wanted and _worth_reading(piece):
            wanted[piece.name] = piece
    images = list(wanted.values())

    def read_one(number: int, timeout_s: float) -> tuple[str, Recognition]:
        t0 = time.perf_counter()
        pixels = decode_image(images[number - 1].blob, options.max_pixels)
        left = timeout_s - (time.perf_counter() - t0)
        text, recognition = read_image(pixels, 1.0, options, timeout_s=left)
        return text, Recognition(
            recognition.engine, recognition.mean_confidence, version=recognition.version
        )

    read, unread = recognise_each(
        path,
        range(1, len(images) + 1),
        read_one,
        options,
        unit="images",
        deadline=deadline,
        on_page=on_page,
    )
    by_name = {images[n - 1].name: result for n, result in read.items()}
    runs: list[list[Run]] = []
    for part in parts:
        part_runs: list[Run] = []
        blocks: list[str] = []
        for piece in part:
            if isinstance(piece, str):
                blocks.append(piece)
            elif piece.name in by_name and by_name[piece.name][0]:
                if blocks:
                    part_runs.append(Run("\n\n".join(blocks)))
                    blocks = []
                part_runs.append(Run(*by_name[piece.name]))
        if blocks:
            part_runs.append(Run("\n\n".join(blocks)))
        runs.append(part_runs)
    for number, reason in unread:
        log.info("%s: image %s not recognised: %s", path.name, images[number - 1].name, reason)
    return runs, tuple((images[n - 1].label, reason) for n, reason in unread)
