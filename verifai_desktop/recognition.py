"""Provenance of text read by optical character recognition (OCR) from a page image.

A PDF page without a text layer is rendered and recognised at ingest
(:mod:`verifai_desktop.ingest.ocr`), as are the images of DOCX, PPTX and EPUB files
(:mod:`verifai_desktop.ingest.embedded`, without word boxes); its section, the chunks cut from
it and the passages retrieved from them carry a :class:`Recognition`: which engine read it, the
engine's mean confidence, and where each recognised word sits on the page, so the page view can
highlight recognised words at their boxes. Stored in the catalog as JSON
(:meth:`Recognition.to_json`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class WordBox:
    """One recognised word (Tesseract) or text line (RapidOCR) and where it was read.

    Attributes:
        char_start: start offset of the word in the text that holds the :class:`Recognition`
            (``Document.text`` for a ``Section``, ``Chunk.text`` for a ``Chunk`` or
            ``Passage``).
        char_end: end offset (exclusive), same text.
        x0: left edge in PDF points from the left edge of the page as shown (rendered
            with its rotation; for an unrotated page, the coordinates of PyMuPDF's text
            boxes, so the evidence highlight can draw them).
        y0: top edge in PDF points from the page's top edge.
        x1: right edge, points.
        y1: bottom edge, points.
        confidence: the engine's confidence for this word, 0..1.
    """

    char_start: int
    char_end: int
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float


@dataclass(frozen=True, slots=True)
class Recognition:
    """Text that OCR read from a page image, not a text layer.

    Attributes:
        engine: the OCR engine, ``"rapidocr"`` or ``"tesseract"``.
        mean_confidence: mean of the words' confidences, 0..1 (0 when there are none).
        words: recognised words with their boxes, in text order; none for an image of a
            DOCX, PPTX or EPUB (:mod:`verifai_desktop.ingest.embedded`), which has no page to
            draw them on.
        version: the engine's version (``"5.3.0"``; ``""`` for text recognised before
            versions were kept): the same engine of another version may read a page
            differently, so an audit check re-reads with it in mind.
    """

    engine: str
    mean_confidence: float
    words: tuple[WordBox, ...] = ()
    version: str = ""

    def shifted(self, offset: int) -> Recognition:
        """The same recognition with every word offset moved by ``offset`` characters."""
        words = tuple(
            WordBox(
                w.char_start + offset,
                w.char_end + offset,
                w.x0,
                w.y0,
                w.x1,
                w.y1,
                w.confidence,
            )
            for w in self.words
        )
        return Recognition(self.engine, self.mean_confidence, words, self.version)

    def within(self, char_start: int, char_end: int) -> Recognition:
        """The words inside ``[char_start, char_end)``, offsets shifted by ``-char_start``,
        with the mean confidence over them (the whole page's when none is inside): the
        recognition of a chunk cut from a recognised section."""
        inside = Recognition(
            self.engine,
            self.mean_confidence,
            tuple(w for w in self.words if w.char_start >= char_start and w.char_end <= char_end),
            self.version,
        ).shifted(-char_start)
        if not inside.words:
            return inside
        mean = sum(w.confidence for w in inside.words) / len(inside.words)
        return Recognition(self.engine, mean, inside.words, self.version)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form: ``{"engine", "version", "confidence", "words": [[start, end, x0,
        y0, x1, y1, confidence], ...]}``, boxes rounded to 0.1 pt and confidences to 0.001
        (about 35 bytes a word in JSON); ``version`` only when known, so text recognised
        before versions were kept reads back unchanged."""
        return {
            "engine": self.engine,
            **({"version": self.version} if self.version else {}),
            "confidence": round(self.mean_confidence, 4),
            "words": [
                [
                    w.char_start,
                    w.char_end,
                    round(w.x0, 1),
                    round(w.y0, 1),
                    round(w.x1, 1),
                    round(w.y1, 1),
                    round(w.confidence, 3),
                ]
                for w in self.words
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recognition:
        """The inverse of :meth:`as_dict`.

        Raises:
            ValueError: not the data :meth:`as_dict` makes.
        """
        try:
            words = tuple(
                WordBox(int(s), int(e), float(x0), float(y0), float(x1), float(y1), float(c))
                for s, e, x0, y0, x1, y1, c in data["words"]
            )
            version = data.get("version", "")
            if not isinstance(version, str):
                raise TypeError(f"version is {type(version).__name__}, not a text")
            return cls(str(data["engine"]), float(data["confidence"]), words, version)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a stored OCR recognition: {exc}") from exc

    def to_json(self) -> str:
        """:meth:`as_dict` as compact JSON text (the catalog's ``chunks.ocr``)."""
        return json.dumps(self.as_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Recognition:
        """The inverse of :meth:`to_json`.

        Raises:
            ValueError: not the JSON :meth:`to_json` writes.
        """
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not a stored OCR recognition: {exc}") from exc
        if not isinstance(data, Mapping):
            raise ValueError("not a stored OCR recognition: not a JSON object")
        return cls.from_dict(data)
