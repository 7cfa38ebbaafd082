"""A scientist's library (issue 43): author-year citations of real answers, and the ingest time
of a large .bib.

1. ``--answers``: the papers of ``docs/clean`` are ingested through
   ``tests/data/library/docs_clean.bib`` (their real metadata, typed by hand from each paper's
   first page) into a throw-away VERIFAI_HOME with the bundled embedder; a few questions, one
   per paper, are asked with the bundled generator and verifier (the app's settings). For each
   answer that is given (not abstained): are its citations author-year (every cited passage
   named "(Family et al., Year, p. N)", none by its file name), and correct (the named first
   author and year are those of the .bib entry whose file the passage comes from, read here
   with bibtexparser directly, not through the app's reader)? The questions were written from
   the papers' abstracts, not tuned: docs/clean is never tuned on.
2. ``--large N``: a .bib of N entries whose ``file`` fields point at N hard
   links (copies where links cannot be made) of a few sample PDFs; the time of ``verifai
   ingest``'s library path (``ingest_sources``): reading the .bib, keeping the metadata,
   parsing, chunking, embedding and indexing every file; then the time of a second run over
   the unchanged library (every entry skipped). ``--metadata-only``: only what the library
   path adds to an ingest of the same files (reading the .bib, keeping the entries' metadata).
   With the ``uptime`` load beside each figure: the box is shared.

Usage::

    python benchmarks/library_citations.py --answers
    python benchmarks/library_citations.py --large 2000 [--pdfs a.pdf b.pdf]
    python benchmarks/library_citations.py --large 2000 --metadata-only

The files' own cost (parsing and, mostly, embedding some 40 chunks a PDF) dominates the full
run: 2,000 copies of the three sample PDFs take hours on a shared 2-core box. ``--pdfs`` with a
one-page PDF keeps the 2,000 entries, documents and references (what grows with the library)
and takes the embedding out of the way.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from verifai_desktop.citations import Citer, cited_passages  # noqa: E402
from verifai_desktop.domain import Answer  # noqa: E402
from verifai_desktop.settings import Settings  # noqa: E402
from verifai_desktop.store.collection import Collection  # noqa: E402
from verifai_desktop.store.library import ingest_sources  # noqa: E402

SHARED = Path(os.environ.get("VERIFAI_SHARED_DATA", REPO.parent / "shared" / "data"))
DOCS_CLEAN = SHARED / "docs" / "clean"
LIBRARY = REPO / "tests" / "data" / "library" / "docs_clean.bib"
SAMPLE_PDFS = (
    "bmc_trauma_2010_dvt_prophylaxis_review.pdf",
    "int_psychogeriatrics_2014.pdf",
    "naacl2018_literature_graph_semantic_scholar.pdf",
)
"""The smallest PDFs of docs/clean (3 to 8 pages), linked over and over for the large .bib."""

QUESTIONS = (
    "What does SPECTER use citations for?",
    "How many papers does the S2ORC corpus contain?",
    "What is the literature graph in Semantic Scholar?",
    "Which model is used for early detection of sepsis?",
    "What does Paper Plain help readers of medical papers do?",
    "What does VESPA analyse?",
    "Which stressful life events were studied in relation to dementia?",
    "What is fragment-based drug design?",
)
"""One question per paper, from its abstract (not tuned)."""

LABEL = re.compile(r"^(?P<first>[^,&]+?)(?: et al\.| & [^,]+)?, (?P<year>\d{4}[a-z]?)(?:, |$)")


def uptime() -> str:
    """The ``uptime`` line (load averages over 1, 5, 15 minutes)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


# ---------------------------------------------------------------------------------------------
# 1. author-year citations of real answers


def truth() -> dict[str, tuple[str, int]]:
    """File name -> (first author's family name, year), from docs_clean.bib by bibtexparser."""
    import bibtexparser

    out = {}
    from bibtexparser.middlewares import LatexDecodingMiddleware

    text = LIBRARY.read_text(encoding="utf-8")
    parsed = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    for entry in parsed.entries:
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        first = fields["author"].split(" and ")[0].split(",")[0].strip().strip("{}")
        file_name = Path(fields["file"].split(":")[1]).name
        out[file_name] = (first, int(fields["year"]))
    return out


@dataclass(frozen=True, slots=True)
class Judged:
    """One answer judged: its cited passages, how many were named author-year, how many
    correctly (the right first author and year for the passage's file)."""

    question: str
    abstained: bool
    cited: int
    author_year: int
    correct: int
    example: str


def judge(answer: Answer, expected: dict[str, tuple[str, int]]) -> Judged:
    """Judge the citations of one answer (see the module docstring)."""
    citer = Citer(answer.passages, Settings().citations)
    passages = cited_passages(answer)
    author_year = correct = 0
    example = ""
    for p in passages:
        label = citer.label(p)
        m = LABEL.match(label)
        if m is None or label == p.source_label():
            continue
        author_year += 1
        example = example or f"({label})"
        first, year = expected.get(p.path.name, ("", 0))
        if m.group("first").strip() == first and int(m.group("year")[:4]) == year:
            correct += 1
    return Judged(answer.question, answer.abstained, len(passages), author_year, correct, example)


def run_answers(home: Path) -> None:
    """Ingest docs/clean through docs_clean.bib and judge the answers to :data:`QUESTIONS`."""
    from verifai_desktop.pipeline import AskSession

    os.environ["VERIFAI_HOME"] = str(home)
    settings = Settings()
    print(f"ingest docs/clean through {LIBRARY.name}; {uptime()}", flush=True)
    t0 = time.perf_counter()
    with Collection.open("papers", create=True, settings=settings) as col:
        report = ingest_sources(col, [LIBRARY])
        print(
            f"ingested {report.counts} in {time.perf_counter() - t0:.0f} s; {uptime()}\n",
            flush=True,
        )
        expected = truth()
        session = AskSession(settings)
        rows = []
        print("| question | given | cited | author-year | correct | first citation | s | uptime |")
        print("|---|---|---|---|---|---|---|---|")
        for q in QUESTIONS:
            t1 = time.perf_counter()
            answer = session.ask(col, q)
            j = judge(answer, expected)
            rows.append(j)
            print(
                f"| {q} | {'no' if j.abstained else 'yes'} | {j.cited} | {j.author_year} | "
                f"{j.correct} | {j.example} | {time.perf_counter() - t1:.0f} | {uptime()} |",
                flush=True,
            )
    given = [j for j in rows if not j.abstained and j.cited]
    all_ay = sum(1 for j in given if j.author_year == j.cited)
    all_ok = sum(1 for j in given if j.correct == j.cited)
    print(
        f"\nanswers given with citations: {len(given)} of {len(rows)}; all citations "
        f"author-year: {all_ay}/{len(given)}; all author-year and correct: {all_ok}/{len(given)} "
        f"({100 * all_ok / max(1, len(given)):.0f} %); citations correct: "
        f"{sum(j.correct for j in given)}/{sum(j.cited for j in given)}"
    )


# ---------------------------------------------------------------------------------------------
# 2. a large .bib


def large_library(folder: Path, entries: int, pdfs: list[Path]) -> Path:
    """A .bib of ``entries`` entries, each with its own hard link (or copy) of a sample PDF."""
    files = folder / "files"
    files.mkdir(parents=True)
    lines = []
    for i in range(entries):
        source = pdfs[i % len(pdfs)]
        target = files / f"paper{i:05d}.pdf"
        try:
            os.link(source, target)
        except OSError:
            target.write_bytes(source.read_bytes())
        lines.append(
            f"@article{{paper{i:05d},\n  author = {{Author{i % 97}, Ann and Other, Bo}},\n"
            f"  title = {{Sample paper {i}}},\n  journal = {{Journal {i % 13}}},\n"
            f"  year = {{{1990 + i % 35}}},\n  file = {{Full Text PDF:files/paper{i:05d}.pdf:"
            "application/pdf}},\n}\n"
        )
    bib = folder / "large.bib"
    bib.write_text("\n".join(lines), encoding="utf-8")
    return bib


def run_large(home: Path, entries: int, pdfs: list[Path], *, metadata_only: bool) -> None:
    """Time the ingest of a ``entries``-entry .bib, then of the same library unchanged; with
    ``metadata_only``, only what the library path adds to an ingest of its files: reading the
    .bib and keeping every entry's metadata in the catalog (twice: new, then unchanged)."""
    from verifai_desktop.ingest.library import read_library

    os.environ["VERIFAI_HOME"] = str(home)
    bib = large_library(home / "library", entries, pdfs)
    t0 = time.perf_counter()
    read = read_library(bib)
    read_s = time.perf_counter() - t0
    print(f"{entries:,} entries, files linked to {', '.join(p.name for p in pdfs)}")
    print(
        "| run | entries | indexed | skipped | chunks | wall s | parse s | embed s | index s "
        "| uptime after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| read the .bib only | {len(read):,} | | | | {read_s:.1f} | | | | {uptime()} |")
    with Collection.open("large", create=True, settings=Settings()) as col:
        if metadata_only:
            items = [(str(f), e.reference) for e in read for f in e.files]
            for run in ("keep the metadata", "again, unchanged"):
                t1 = time.perf_counter()
                col.set_references(items)
                wall = time.perf_counter() - t1
                print(f"| {run} | {len(items):,} | | | | {wall:.1f} | | | | {uptime()} |")
            return
        for run in ("first ingest", "again, unchanged"):
            t1 = time.perf_counter()
            report = ingest_sources(col, [bib])
            wall = time.perf_counter() - t1
            print(
                f"| {run} | {entries:,} | {report.counts.get('indexed', 0):,} | "
                f"{report.counts.get('skipped', 0):,} | {report.chunks_indexed:,} | {wall:.0f} | "
                f"{report.parse_ms / 1000:.0f} | {report.embed_ms / 1000:.0f} | "
                f"{report.index_ms / 1000:.0f} | {uptime()} |",
                flush=True,
            )


def main() -> None:
    """Run the parts asked for."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", action="store_true", help="part 1")
    parser.add_argument("--large", type=int, default=0, metavar="N", help="part 2: N entries")
    parser.add_argument("--pdfs", nargs="+", type=Path, help="PDFs the large .bib links to")
    parser.add_argument(
        "--metadata-only",
        action="store_true",
        help="part 2 without ingesting the files: reading the .bib and keeping the metadata",
    )
    args = parser.parse_args()
    if not args.answers and not args.large:
        parser.error("give --answers and/or --large N")
    if Path("/work/BENCH_LOCK").exists():
        print("note: /work/BENCH_LOCK is present (the lead is taking figures)", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="verifai-library-") as tmp:
        if args.answers:
            run_answers(Path(tmp) / "answers")
        if args.large:
            pdfs = args.pdfs or [DOCS_CLEAN / name for name in SAMPLE_PDFS]
            run_large(Path(tmp) / "large", args.large, pdfs, metadata_only=args.metadata_only)


if __name__ == "__main__":
    main()
