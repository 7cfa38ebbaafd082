"""Ingest throughput: pages/s, chunks/s, peak RSS and the time split parse/chunk/embed/index.

Runs the real pipeline (ParserPool parsing, sentence-aware chunking, the bundled
all-MiniLM-L6-v2 embedder, SQLite + Tantivy + usearch) into a throw-away VERIFAI_HOME on

* ``docs/clean`` (26 files: PDF, DOCX, PPTX, EPUB, MD, TXT) via ``ingest_paths``;
* the SciFact BEIR corpus (5,183 abstracts) via ``ingest_documents``.

"Beyond embedding" is the share of the run's wall time (model loading excluded) not spent
computing embeddings; the target is under 25 %.

Usage::

    python benchmarks/ingest.py                 # both corpora, in full
    python benchmarks/ingest.py --limit 6 --scifact-limit 500
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from verifai_desktop.domain import (  # noqa: E402 - after the sys.path entry
    DocFormat,
    Document,
    Location,
    LocationKind,
    Section,
)
from verifai_desktop.settings import load_settings  # noqa: E402
from verifai_desktop.store.collection import Collection  # noqa: E402
from verifai_desktop.store.writer import IngestReport, Outcome  # noqa: E402

SHARED = Path(os.environ.get("VERIFAI_SHARED_DATA", REPO.parent / "shared" / "data"))


def _scifact_docs(path: Path, limit: int | None) -> Iterator[tuple[str, Document]]:
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                break
            row = json.loads(line)
            text = f"{row['title']}\n\n{row['text']}".strip()
            key = f"beir:{row['_id']}"
            section = Section(0, len(text), Location(LocationKind.SECTION, None, row["title"]))
            yield key, Document(Path(key), DocFormat.TXT, row["title"], text, (section,))


def _rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0  # Linux: KiB


def _row(name: str, report: IngestReport) -> dict[str, object]:
    work_ms = report.elapsed_ms - report.load_ms
    seconds = work_ms / 1000.0
    indexed = [o for o in report.outcomes if o.status is Outcome.INDEXED]
    pages = sum(o.section_count for o in indexed)
    chunks = report.chunks_indexed
    pct = (lambda ms: 100.0 * ms / work_ms) if work_ms > 0 else (lambda ms: 0.0)
    return {
        "corpus": name,
        "docs": len(indexed),
        "pages": pages,
        "chunks": chunks,
        "seconds": seconds,
        "pages_per_s": pages / seconds if seconds else 0.0,
        "chunks_per_s": chunks / seconds if seconds else 0.0,
        "parse_pct": pct(report.parse_ms),
        "chunk_pct": pct(report.chunk_ms),
        "embed_pct": pct(report.embed_ms),
        "index_pct": pct(report.index_ms),
        "beyond_embed_pct": 100.0 - pct(report.embed_ms),
        "load_s": report.load_ms / 1000.0,
        "rss_main_mb": _rss_mb(resource.RUSAGE_SELF),
        "rss_parser_mb": _rss_mb(resource.RUSAGE_CHILDREN),
    }


def _print_table(rows: list[dict[str, object]]) -> None:
    cols = [
        ("corpus", "corpus", "{}"),
        ("docs", "docs", "{}"),
        ("pages", "pages*", "{}"),
        ("chunks", "chunks", "{}"),
        ("seconds", "time s", "{:.1f}"),
        ("pages_per_s", "pages/s", "{:.1f}"),
        ("chunks_per_s", "chunks/s", "{:.1f}"),
        ("parse_pct", "parse %", "{:.1f}"),
        ("chunk_pct", "chunk %", "{:.1f}"),
        ("embed_pct", "embed %", "{:.1f}"),
        ("index_pct", "index %", "{:.1f}"),
        ("beyond_embed_pct", "beyond embed %", "{:.1f}"),
        ("rss_main_mb", "peak RSS MB", "{:.0f}"),
        ("rss_parser_mb", "parser RSS MB", "{:.0f}"),
    ]
    print("| " + " | ".join(h for _, h, _ in cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for row in rows:
        print("| " + " | ".join(fmt.format(row[key]) for key, _, fmt in cols) + " |")
    print(
        "\n* pages: PDF pages, slides, EPUB chapters and MD/DOCX/TXT sections parsed. Times exclude"
        " loading the embedding model ("
        + ", ".join(f"{r['corpus']}: {r['load_s']:.1f} s" for r in rows)
        + ")."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N files of docs/clean")
    parser.add_argument("--scifact-limit", type=int, default=None, help="first N SciFact abstracts")
    parser.add_argument("--skip-clean", action="store_true")
    parser.add_argument("--skip-scifact", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)

    home = Path(tempfile.mkdtemp(prefix="verifai-bench-ingest-"))
    os.environ["VERIFAI_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings = load_settings()  # the throw-away data root has none: the defaults

    rows: list[dict[str, object]] = []
    if not args.skip_clean:
        files = sorted(p for p in (SHARED / "docs" / "clean").iterdir() if p.is_file())
        files = files[: args.limit] if args.limit else files
        with Collection.open("bench-clean", create=True, settings=settings) as col:
            report = col.add_paths(files)
        rows.append(_row(f"docs/clean ({len(files)} files)", report))
    if not args.skip_scifact:
        corpus = SHARED / "scifact" / "beir" / "corpus.jsonl"
        with Collection.open("bench-scifact", create=True, settings=settings) as col:
            report = col.add_documents(_scifact_docs(corpus, args.scifact_limit))
        rows.append(_row("SciFact corpus", report))
    print(f"CPU threads: {os.cpu_count()}; data root: {home}\n")
    _print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
