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
"""

from __future__ import annotations

import io
import logging
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
    """Decode an embedded image for OCR, transparent parts on white.

    Args:
        blob: the encoded image (any format Pillow reads; the first frame).
        max_pixels: pixel limit, checked against :func:`declared_size` before decoding.

    Returns:
        uint8 RGB, shape (height, width, 3).

    Raises:
        PageNotRecognised: over the pixel limit, or it does not decode.
    """
    width, height = declared_size(blob)
    if width * height > max_pixels:
        raise PageNotRecognised(
            f"its image is {width:,} x {height:,} pixels, over the limit of {max_pixels:,} "
            "(setting ingest.ocr_max_pixels)"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            rgba = _open(blob).convert("RGBA")
    except (OSError, ValueError, SyntaxError, MemoryError) as exc:
        raise PageNotRecognised(f"its image cannot be decoded ({exc})") from exc
    page = Image.new("RGB", rgba.size, "white")
    page.paste(rgba, mask=rgba.getchannel("A"))
    return np.asarray(page, dtype=np.uint8)


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
        deadline: ``time.monotonic()`` value; checked before each image.
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
