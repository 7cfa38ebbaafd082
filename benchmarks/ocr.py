"""OCR accuracy and speed: Tesseract vs RapidOCR on rendered born-digital pages (issue 28).

    nice -n 19 .venv/bin/python benchmarks/ocr.py [--pages N] [--dpi 150,300]
        [--engines tesseract,rapidocr] [--scans]

Each page in :data:`PAGES` (a two-column paper page, a table page, a page of formulas, then
more) is rendered to an image at each resolution and read by each engine through the app's own
OCR interface (:mod:`verifai_desktop.ingest.ocr`); the page's text layer, as ingest extracts
it, is the ground truth. Both texts are compared after Unicode NFKC normalisation (ligatures),
line-end hyphens joined and whitespace collapsed: character error rate (CER) and word error rate
(WER, both from ``jiwer``: edit distance over the truth's length, so reading order counts) and
word recall (share of the truth's words found, in any order: what BM25 search needs). Speed is
pages per second of recognition (rendering excluded, the engine's model load timed apart). The
1-minute load average is printed beside each row and ``uptime`` before and after: on a shared
CPU the speed is only comparable at the same load. ``--scans`` also prints what each engine
reads on the two scanned PDFs of ``../shared/data/docs/nasty`` (no ground truth: check by eye).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jiwer
import numpy as np
import pymupdf
from numpy.typing import NDArray

from verifai_desktop.ingest.ocr import get_engine, page_text_and_words
from verifai_desktop.ingest.pdf import page_text

DOCS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "docs"


@dataclass(frozen=True, slots=True)
class Page:
    """One benchmark page: what it is, the file in ``docs/clean`` and its 1-based number."""

    kind: str
    file: str
    number: int


PAGES: tuple[Page, ...] = (
    Page("two-column paper", "acl2020_specter.pdf", 2),
    Page("table", "acl2020_specter.pdf", 7),  # Table 1: the SCIDOCS results grid
    Page("formulas", "mlhc2017_futoma_gp_rnn_sepsis.pdf", 5),  # multitask GP equations
    Page("one-column article", "bmc_trauma_2010_dvt_prophylaxis_review.pdf", 2),
    Page("formulas, one column", "peerj_cs_2017_vespa_evolutionary_analysis.pdf", 8),
    Page("two-column paper", "acl2020_s2orc.pdf", 3),
    Page("clinical article", "int_psychogeriatrics_2014.pdf", 3),
    Page("review", "hindawi_rehab_res_pract_2010.pdf", 2),
)
"""Pages in the order ``--pages N`` takes them: the first three are the two-column, table and
formula pages the issue names."""

SCANS = ("scanned_image_only_lexmark_2p.pdf", "scanned_image_only_jbig2.pdf")
_HYPHEN = re.compile(r"(?<=[a-z])-\s*\n\s*(?=[a-z])")
_mu: Any = pymupdf


def normalise(text: str) -> str:
    """NFKC, line-end hyphens joined, whitespace collapsed to single spaces."""
    text = unicodedata.normalize("NFKC", text)
    return " ".join(_HYPHEN.sub("", text).split())


def word_recall(truth: str, hypothesis: str) -> float:
    """Share of the truth's words (with multiplicity) found in the hypothesis, any order."""
    want = Counter(truth.split())
    have = Counter(hypothesis.split())
    return sum((want & have).values()) / max(1, sum(want.values()))


def render(page: Any, dpi: int) -> tuple[NDArray[np.uint8], float]:
    """The page as uint8 RGB, shape (height, width, 3), and its pixels per point."""
    pix = page.get_pixmap(dpi=dpi, colorspace=_mu.csRGB, alpha=False)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    return image, pix.width / float(page.rect.width)


def read(engine_name: str, image: NDArray[np.uint8], scale: float) -> tuple[str, float, float]:
    """Recognised text, mean confidence and seconds spent in the engine."""
    engine = get_engine(engine_name)
    t0 = time.perf_counter()
    lines = engine.read(image, timeout_s=600.0)
    elapsed = time.perf_counter() - t0
    text, recognition = page_text_and_words(lines, scale, engine_name)
    return text, recognition.mean_confidence, elapsed


def load_engine(name: str) -> float:
    """Seconds to create the engine and read a blank image (RapidOCR loads its models)."""
    t0 = time.perf_counter()
    get_engine(name).read(np.full((64, 64, 3), 255, dtype=np.uint8), timeout_s=60.0)
    return time.perf_counter() - t0


def uptime() -> str:
    """The ``uptime`` line (load averages over 1, 5 and 15 minutes)."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=len(PAGES), help="first N pages of PAGES")
    ap.add_argument("--dpi", default="150,300", help="render resolutions, comma-separated")
    ap.add_argument("--engines", default="tesseract,rapidocr")
    ap.add_argument("--scans", action="store_true", help="also print what the nasty scans read")
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    resolutions = [int(d) for d in args.dpi.split(",") if d]
    pages = PAGES[: max(1, args.pages)]
    print(f"uptime before: {uptime()}")
    print(f"pages: {', '.join(f'{p.file} p. {p.number} ({p.kind})' for p in pages)}")
    for name in engines:
        print(f"{name}: engine load {load_engine(name):.1f} s")
    header = f"{'engine':<10} {'dpi':>4} {'page':<44} {'CER':>6} {'WER':>6} {'recall':>6}"
    print(f"{header} {'conf':>5} {'s':>6} {'load1':>5}")
    totals: dict[tuple[str, int], list[float]] = {}
    for page in pages:
        doc = _mu.open(DOCS / "clean" / page.file)
        pdf_page = doc[page.number - 1]
        truth = normalise(page_text(pdf_page))
        for dpi in resolutions:
            image, scale = render(pdf_page, dpi)
            for name in engines:
                text, confidence, elapsed = read(name, image, scale)
                hyp = normalise(text)
                cer, wer = jiwer.cer(truth, hyp), jiwer.wer(truth, hyp)
                recall = word_recall(truth, hyp)
                totals.setdefault((name, dpi), []).extend([cer, wer, recall, elapsed])
                label = f"{page.file[:30]} p. {page.number} {page.kind}"[:44]
                print(
                    f"{name:<10} {dpi:>4} {label:<44} {cer:6.3f} {wer:6.3f} {recall:6.3f} "
                    f"{confidence:5.2f} {elapsed:6.1f} {os.getloadavg()[0]:5.2f}",
                    flush=True,
                )
        doc.close()
    print(f"{'engine':<10} {'dpi':>4} {'pages':>5} {'mean CER':>8} {'mean WER':>8} {'recall':>6}")
    for (name, dpi), values in totals.items():
        cers, wers, recalls, seconds = (values[i::4] for i in range(4))
        n = len(cers)
        print(
            f"{name:<10} {dpi:>4} {n:>5} {sum(cers) / n:8.3f} {sum(wers) / n:8.3f} "
            f"{sum(recalls) / n:6.3f}  {n / sum(seconds):.3f} pages/s"
        )
    if args.scans:
        for scan in SCANS:
            doc = _mu.open(DOCS / "nasty" / scan)
            for number, pdf_page in enumerate(doc, start=1):
                image, scale = render(pdf_page, max(resolutions))
                for name in engines:
                    text, confidence, elapsed = read(name, image, scale)
                    print(f"\n{scan} p. {number}, {name} ({confidence:.2f}, {elapsed:.1f} s):")
                    print(" ".join(text.split())[:600])
            doc.close()
    print(f"uptime after: {uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
