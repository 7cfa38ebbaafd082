"""Scale: search latency, index build time, memory and disk of the embedded store and the
PostgreSQL store at 10k, 100k and 1M chunks; ingest throughput of docs/clean.

What is measured, per size and store (``--sizes``, default 10000,100000,1000000):

- **Build**: seconds to write ``N`` chunks through the store's real write path: an ingest run
  (``IngestRun.commit``, as ``ingest_documents`` drives it) committing documents of
  ``--doc-chunks`` chunks in batches of about 256 chunks (one transaction each), with the
  run's index flushes; embedded: SQLite catalog + Tantivy BM25 + usearch HNSW (flushed every
  2 s and at the end); PostgreSQL: ``PgStore.commit`` into ``chunks`` with its GIN
  (``tsvector``) and HNSW (pgvector, cosine) indexes and the lexical ``postings`` maintained
  on insert, then ``VACUUM (ANALYZE)``, what autovacuum does after a bulk write (timed apart;
  it sets the visibility map, so the postings index can be read without the heap). Making
  the texts and vectors is not timed. After the searches, PostgreSQL's HNSW and GIN indexes
  are also rebuilt in bulk (``REINDEX``, timed; ``--no-reindex``: not), what a bulk load that
  creates the indexes last would take. ``--pg-build bulk`` builds that way instead: the two
  indexes dropped, the chunks written, the indexes created (build = both),
  for sizes where the inserts take hours here (1M).
- **Search**: p50/p95 milliseconds of ``Retriever.search`` (the app's call: top 10 passages,
  100 candidates per engine, the default settings) in lexical, semantic and hybrid mode, over
  ``--queries`` SciFact claims (test split) whose vectors are computed once, before timing
  (so the times are the store's: each engine's query, the chunk records fetched, fusion).
  PostgreSQL's hybrid mode is one round trip (both engines' statements pipelined); the
  embedded store's is two index calls. ``--warmup`` claims are searched untimed first.
- **Memory**: embedded, the peak resident set of this process while building and while
  searching (``VmHWM``, reset before each step), with what it held before; PostgreSQL, the
  relation sizes (heap with TOAST, HNSW index, GIN index, total) and, for the local server, the
  proportional set size of its processes after the searches (``Pss``, MB).
- **Disk**: the collection folder (embedded) and ``pg_total_relation_size`` of the collection's
  tables with their indexes (PostgreSQL, WAL not counted), in MB and per million chunks.

Data: chunk texts are the NLI training pool's premises (``shared/data/nli_train/*.jsonl``,
unique, at most 1,000 characters: about 47k; they repeat beyond that, every chunk keeps its
own vector). Vectors: the bundled embedder's (``all-MiniLM-L6-v2``) for sizes up to
``--embed-limit`` chunks, else seeded random unit vectors (float32, normal, L2-normalised;
the same for both stores). The ``vectors`` column says which. Random vectors have no cluster
structure, a hard case for HNSW: expect slower builds and searches than on real embeddings.
One size is built, measured and deleted before the next (disk: the largest size alone).

``--json``: one JSON object a line on stdout per size and store, ``{"store", "chunks",
"vectors", "lexical": {"p50_ms", "p95_ms", "load"}, "semantic": {...}, "hybrid": {...},
"build_s", "disk_mb"}`` (``load``: the 1-minute load after the mode); the tables and the rest go
to stderr.

``--ingest``: ingest throughput (chunks/s over the wall time of the whole run, model loading
included) of ``shared/data/docs/clean`` through ``ingest_paths``: embedded, PostgreSQL single
process, and with ``--ray`` PostgreSQL with the files read on a local Ray cluster
(``ray.init(num_cpus=2)``, its start-up timed apart; ``store/spread.py``): ``scale_ingest.py``.

Without ``--store`` a throw-away PostgreSQL with pgvector runs in ``--work`` (``pgserver``,
the test extra; settings ``--pg-conf``); the collections are written as a plain login role
(row-level security applies, as in a deployment). Every table is markdown; each figure has the
1-minute load beside it (2 cores: compare figures taken under like load) and ``uptime`` is
printed before and after; progress goes to stderr. A 1M run needs about 10 GB of disk in
``--work`` and 8 GB of RAM.

Usage::

    python benchmarks/scale.py                                  # 10k, 100k, 1M
    python benchmarks/scale.py --sizes 2000,5000 --queries 50   # a small trial
    python benchmarks/scale.py --sizes none --ingest --ray      # ingest throughput only
    python benchmarks/scale.py --sizes 10000,100000 --json      # rows for the issue-40 bar
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"

if __package__ in (None, ""):
    sys.path.insert(0, str(REPO))

from pg_local import add_store_argument, load, local_server, server_line, uptime  # noqa: E402
from scale_ingest import fresh_pg, ingest_throughput  # noqa: E402
from scale_report import SEARCH, Measured, json_rows, print_tables  # noqa: E402

from verifai_desktop.domain import Chunk, DocFormat, DocStatus, Location, LocationKind  # noqa: E402
from verifai_desktop.evaluate.beir import load_beir  # noqa: E402
from verifai_desktop.evaluate.retrieval import PrimedEmbedder  # noqa: E402
from verifai_desktop.retrieve import Retriever  # noqa: E402
from verifai_desktop.settings import RetrievalSettings, Settings  # noqa: E402
from verifai_desktop.store.base import CollectionStore  # noqa: E402
from verifai_desktop.store.catalog import CommitItem, DocumentMeta  # noqa: E402
from verifai_desktop.store.ingest_run import IngestRun  # noqa: E402
from verifai_desktop.store.sources import BENCHMARK_SOURCE_PREFIX  # noqa: E402
from verifai_desktop.store.target import IngestTarget  # noqa: E402
from verifai_desktop.store.writer import DOCUMENT_BATCH_CHUNKS  # noqa: E402

MAX_TEXT_CHARS = 1000
"""Premises longer than this are left out (a chunk of the app holds at most 256 word pieces)."""
PG_CONF = "shared_buffers=4GB,maintenance_work_mem=3GB,max_wal_size=4GB"
"""Settings of the throw-away server (pgserver's own defaults: shared_buffers 128MB); a 1M
HNSW graph (~2 GB) fits in ``maintenance_work_mem`` for the bulk rebuild."""
MB = 1024 * 1024


# ----- data --------------------------------------------------------------------------------


def premises(folder: Path) -> list[str]:
    """The unique premises of the NLI pool (files in name order), at most 1,000 characters."""
    seen: dict[str, None] = {}
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                text = str(json.loads(line)["premise"]).strip()
                if 0 < len(text) <= MAX_TEXT_CHARS:
                    seen[text] = None
    return list(seen)


@dataclass(frozen=True, slots=True)
class Corpus:
    """The chunks written: texts (cycled), vectors (the embedder's for the first texts, else
    random)."""

    texts: Sequence[str]
    embedded: NDArray[np.float32]
    """Real vectors of ``texts[:len(embedded)]``, float32, shape (n, dim), L2-normalised."""
    seed: int

    def real(self, size: int) -> bool:
        """True when a collection of ``size`` chunks gets the embedder's vectors."""
        return size <= len(self.embedded)

    def vectors(self, start: int, stop: int, size: int) -> NDArray[np.float32]:
        """Vectors of chunks ``start..stop`` of a collection of ``size`` chunks, float32,
        shape (stop - start, dim), L2-normalised; random ones seeded by ``start``."""
        if self.real(size):
            return self.embedded[start:stop]
        rng = np.random.default_rng((self.seed, start))
        v = rng.standard_normal((stop - start, self.embedded.shape[1]), dtype=np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return v

    def batches(self, size: int, doc_chunks: int) -> Iterator[list[CommitItem]]:
        """Documents of ``doc_chunks`` chunks, about :data:`DOCUMENT_BATCH_CHUNKS` chunks per
        batch (one transaction, as ``ingest_documents`` writes)."""
        per_batch = max(1, DOCUMENT_BATCH_CHUNKS // doc_chunks) * doc_chunks
        for start in range(0, size, per_batch):
            stop = min(start + per_batch, size)
            vectors = self.vectors(start, stop, size)
            items: list[CommitItem] = []
            for first in range(start, stop, doc_chunks):
                last = min(first + doc_chunks, stop)
                chunks = self.document(first, last)
                meta = DocumentMeta(
                    f"{BENCHMARK_SOURCE_PREFIX}scale-{first // doc_chunks}",
                    f"scale document {first // doc_chunks}",
                    f"{first:064x}",
                    chunks[-1].char_end,
                    0,
                    DocFormat.TXT,
                )
                items.append(
                    (meta, DocStatus.INDEXED, "", chunks, vectors[first - start : last - start])
                )
            yield items

    def document(self, first: int, last: int) -> tuple[Chunk, ...]:
        """Chunks ``first..last`` of a collection as one document's, in the order of a text
        made of their texts (cycled) with a blank line between; each is one sentence."""
        chunks: list[Chunk] = []
        offset = 0
        for i in range(first, last):
            text = self.texts[i % len(self.texts)]
            spans = ((0, len(text)),)
            location = Location(LocationKind.SECTION)
            chunks.append(Chunk(i - first, text, offset, offset + len(text), location, spans))
            offset += len(text) + 2
        return tuple(chunks)


# ----- measuring ---------------------------------------------------------------------------


def reset_peak_rss() -> None:
    """Restart this process's peak resident set (``VmHWM``) from its current size (Linux)."""
    with suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def rss_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process in MB; 0.0 where unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def folder_parts_mb(path: Path) -> dict[str, float]:
    """MB of the files under ``path`` by the first part of their top-level name
    (``catalog.sqlite-wal`` -> ``catalog``, ``lexical/...`` -> ``lexical``)."""
    parts: dict[str, float] = {}
    for p in path.rglob("*"):
        if p.is_file():
            key = p.relative_to(path).parts[0].split(".")[0]
            parts[key] = parts.get(key, 0.0) + p.stat().st_size / MB
    return parts


def server_pss_mb(pgdata: Path) -> float | None:
    """Proportional set size of the server in ``pgdata`` and its processes, MB (None when
    unknown, e.g. a server given by ``--store``); a process that ends meanwhile counts 0."""
    import psutil

    try:
        main = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
        procs = [main, *main.children(recursive=True)]
    except (OSError, ValueError, IndexError, psutil.Error):
        return None
    total = 0.0
    for proc in procs:
        with suppress(psutil.Error):
            total += float(proc.memory_full_info().pss)
    return total / MB


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    """(p50, p95) of ``samples``."""
    arr = np.asarray(samples, dtype=np.float64)
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def build(store: IngestTarget, corpus: Corpus, size: int, doc_chunks: int, label: str) -> float:
    """Write ``size`` chunks through an ingest run; seconds spent in the store's writes."""
    store.acquire_write_lock()
    run = IngestRun(store, None, None)
    done = 0
    last = time.monotonic()
    for items in corpus.batches(size, doc_chunks):
        run.commit(items)
        done += sum(len(item[3]) for item in items)
        if time.monotonic() - last >= 10.0:
            last = time.monotonic()
            print(f"  {label} {size}: {done} chunks written (load {load()})", file=sys.stderr)
    run.finish()
    return run.timer.index


@dataclass(frozen=True, slots=True)
class Queries:
    """The claims searched, with their vectors computed once (``embedder``)."""

    texts: Sequence[str]
    embedder: PrimedEmbedder


def search(
    store: CollectionStore, queries: Queries, warmup: int
) -> dict[str, tuple[float, float, str]]:
    """p50/p95 ms of ``Retriever.search`` per mode (default settings), with the load."""
    base = Retriever(store, RetrievalSettings(), embedder=queries.embedder)
    out: dict[str, tuple[float, float, str]] = {}
    for mode in SEARCH:
        retriever = base.with_settings(dataclasses.replace(RetrievalSettings(), mode=mode))
        for q in queries.texts[:warmup]:
            retriever.search(q)
        samples: list[float] = []
        for q in queries.texts:
            start = time.perf_counter()
            retriever.search(q)
            samples.append((time.perf_counter() - start) * 1000.0)
        out[mode] = (*percentiles(samples), load())
    return out


def measure_embedded(
    settings: Settings, corpus: Corpus, size: int, args: argparse.Namespace, queries: Queries
) -> Measured:
    """Build, measure and delete an embedded collection of ``size`` chunks."""
    from verifai_desktop.store import ingest_run
    from verifai_desktop.store.collection import Collection

    if args.flush_share is not None:
        ingest_run.FLUSH_SHARE = args.flush_share
    name = f"scale-{size}"
    before = rss_mb("VmRSS")
    reset_peak_rss()
    with Collection.create(name, settings=settings, replace=True) as store:
        build_s = build(store, corpus, size, args.doc_chunks, "embedded")
        build_load, build_peak = load(), rss_mb("VmHWM")
        reset_peak_rss()
        timings = search(store, queries, args.warmup)
        search_peak = rss_mb("VmHWM")
        path = store.path
        parts = folder_parts_mb(path)
        disk = sum(parts.values())
    shutil.rmtree(path)
    return Measured(
        "embedded",
        size,
        "embedder" if corpus.real(size) else "random",
        build_s,
        build_load,
        "-",
        timings,
        f"RSS {before:.0f} MB before, peak {build_peak:.0f} building, {search_peak:.0f} searching",
        disk,
        ", ".join(f"{k} {parts.get(k, 0.0):.0f}" for k in ("catalog", "lexical", "vectors")),
    )


PG_SIZES = """
SELECT pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(s)s AND c.relkind = 'r'
"""


def pg_sizes(url: str, schema: str) -> tuple[float, str]:
    """(MB of the collection's tables with their indexes and TOAST, the main parts)."""
    import psycopg

    with psycopg.connect(url) as conn:
        total = sum(int(r[0]) for r in conn.execute(PG_SIZES, {"s": schema}).fetchall())
        parts = {
            name: conn.execute(f"SELECT pg_relation_size('{schema}.{rel}')".encode()).fetchone()
            for name, rel in (
                ("heap", "chunks"),
                ("hnsw", "chunks_embedding"),
                ("gin", "chunks_tsv"),
                ("postings", "postings"),
                ("postings indexes", "postings_lexeme"),
                ("postings pkey", "postings_pkey"),
            )
        }
        chunks = f"'{schema}.chunks'"
        toast = conn.execute(
            f"SELECT pg_table_size({chunks}) - pg_relation_size({chunks})".encode()
        ).fetchone()
    shown = {k: int(v[0]) if v else 0 for k, v in parts.items()}
    shown["toast+fsm"] = int(toast[0]) if toast else 0
    return total / MB, ", ".join(f"{k} {v / MB:.0f}" for k, v in shown.items())


BULK_INDEXES = {
    "chunks_tsv": "USING gin (tsv)",
    "chunks_embedding": "USING hnsw (embedding vector_cosine_ops)",
}
"""The indexes ``--pg-build bulk`` drops and creates after writing (``store/pg/schema.py``)."""


def measure_postgres(
    url: str,
    pgdata: Path | None,
    settings: Settings,
    corpus: Corpus,
    size: int,
    args: argparse.Namespace,
    queries: Queries,
) -> Measured:
    """Build, measure and drop a PostgreSQL collection of ``size`` chunks."""
    import psycopg

    name = f"scale_{size}"
    schema = f"verifai_{name}"
    bulk = args.pg_build == "bulk"
    with psycopg.connect(url, autocommit=True) as admin:
        with fresh_pg(url, name, settings) as store:
            if bulk:
                for index in BULK_INDEXES:
                    admin.execute(f"DROP INDEX {schema}.{index}".encode())
            build_s = build(store, corpus, size, args.doc_chunks, "postgresql")
            after = f"written in {build_s:.1f}" if bulk else ""
            if bulk:
                for index, using in BULK_INDEXES.items():
                    start = time.perf_counter()
                    admin.execute(f"CREATE INDEX {index} ON {schema}.chunks {using}".encode())
                    took = time.perf_counter() - start
                    build_s += took
                    after += f"; CREATE INDEX {index} {took:.1f} (load {load()})"
            build_load = load()
            start = time.perf_counter()
            for table in ("documents", "chunks", "postings", "lexical_stats"):
                admin.execute(f"VACUUM (ANALYZE) {schema}.{table}".encode())
            after += f"{'; ' if after else ''}VACUUM ANALYZE {time.perf_counter() - start:.1f}"
            timings = search(store, queries, args.warmup)
        pss = server_pss_mb(pgdata) if pgdata is not None else None
        disk, parts = pg_sizes(url, schema)
        if args.reindex and not bulk:
            for index in ("chunks_embedding", "chunks_tsv"):
                start = time.perf_counter()
                admin.execute(f"REINDEX INDEX {schema}.{index}".encode())
                after += f"; REINDEX {index} {time.perf_counter() - start:.1f} (load {load()})"
        admin.execute(f"DROP SCHEMA {schema} CASCADE".encode())
    return Measured(
        "postgresql, bulk" if bulk else "postgresql",
        size,
        "embedder" if corpus.real(size) else "random",
        build_s,
        build_load,
        after,
        timings,
        f"relations {disk:.0f} MB; server Pss "
        + (f"{pss:.0f} MB" if pss is not None else "unknown")
        + " after searching",
        disk,
        parts,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000,1000000",
        help="chunk counts, comma-separated ('none': no size runs)",
    )
    parser.add_argument("--stores", default="embedded,postgresql")
    parser.add_argument(
        "--embed-limit",
        type=int,
        default=10000,
        help="sizes up to this get the embedder's vectors, larger random ones",
    )
    parser.add_argument("--queries", type=int, default=200, help="SciFact claims timed")
    parser.add_argument("--warmup", type=int, default=10, help="claims searched untimed first")
    parser.add_argument("--doc-chunks", type=int, default=16, help="chunks per document")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--nli", type=Path, default=SHARED / "nli_train")
    parser.add_argument("--beir", type=Path, default=SHARED / "scifact" / "beir")
    add_store_argument(parser)
    parser.add_argument(
        "--pg-conf", default=PG_CONF, help="KEY=VALUE,... settings of the throw-away server"
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=None,
        help="folder for the collections and the server (default: a temp one)",
    )
    parser.add_argument("--ingest", action="store_true", help="also ingest docs/clean")
    parser.add_argument("--ray", action="store_true", help="with --ingest: also via local Ray")
    parser.add_argument(
        "--no-reindex",
        dest="reindex",
        action="store_false",
        help="skip the bulk rebuild of PostgreSQL's HNSW and GIN indexes after each size",
    )
    parser.add_argument(
        "--pg-build",
        choices=("insert", "bulk"),
        default="insert",
        help="insert: indexes kept up to date while writing (the store's way); bulk: the "
        "full-text and HNSW indexes dropped before writing and created after (timed as build)",
    )
    parser.add_argument("--flush-share", type=float, help="embedded: FLUSH_SHARE (1.0: old rule)")
    parser.add_argument("--docs", type=Path, default=SHARED / "docs" / "clean")
    parser.add_argument(
        "--json", action="store_true", help="JSON rows on stdout, the tables on stderr"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the tables; returns the exit code."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args = parse_args(argv)
    sizes = [] if args.sizes == "none" else [int(s) for s in args.sizes.split(",") if s]
    stores = args.stores.split(",")

    def out(text: str = "") -> None:
        print(text, flush=True, file=sys.stderr if args.json else sys.stdout)

    def step(what: str, start: float) -> None:
        out(f"- {what}: {time.perf_counter() - start:.0f} s (load {load()})")

    out(f"uptime before: {uptime()}")
    with ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sc")))
        work.mkdir(parents=True, exist_ok=True)
        os.environ["VERIFAI_HOME"] = str(work / "home")
        from verifai_desktop.settings import load_settings

        settings = load_settings()
        url: str | None = None
        pgdata: Path | None = None
        if "postgresql" in stores:
            start = time.perf_counter()
            if args.store is None:
                pgdata = work / "pgdata"
                conf = dict(kv.split("=", 1) for kv in args.pg_conf.split(",") if kv)
                url = stack.enter_context(local_server(pgdata, conf))
            else:
                url = args.store
            out(server_line(url))
            step("server start", start)
        if sizes:
            start = time.perf_counter()
            texts = premises(args.nli)
            claims = list(load_beir(args.beir, "test").queries.values())[: args.queries]
            from verifai_desktop.index.embedder import get_embedder

            base = get_embedder(settings.models.embedder)
            queries = Queries(claims, PrimedEmbedder(base))
            queries.embedder.prime(claims)
            n_real = min(args.embed_limit, max(sizes), len(texts))
            real = base.embed(texts[:n_real]) if n_real else np.zeros((0, base.dim), np.float32)
            corpus = Corpus(texts, np.asarray(real, dtype=np.float32), args.seed)
            step(
                f"{len(texts):,} texts read, {n_real:,} texts and {len(claims)} claims embedded "
                f"({settings.models.embedder})",
                start,
            )
            rows: list[Measured] = []
            for size in sizes:
                if "embedded" in stores:
                    start = time.perf_counter()
                    rows.append(measure_embedded(settings, corpus, size, args, queries))
                    step(f"embedded {size:,}", start)
                if url is not None:
                    start = time.perf_counter()
                    rows.append(
                        measure_postgres(url, pgdata, settings, corpus, size, args, queries)
                    )
                    step(f"postgresql {size:,}", start)
            out("")
            out(
                f"{len(claims)} claims timed per mode after {args.warmup} untimed; "
                f"documents of {args.doc_chunks} chunks; texts repeat every {len(texts):,} chunks."
            )
            out("")
            print_tables(rows, out)
            if args.json:
                for line in json_rows(rows):
                    print(line, flush=True)
        if args.ingest:
            start = time.perf_counter()
            out("")
            ingest_throughput(url, settings, args.docs, args.ray, out)
            step("ingest", start)
    out("")
    out(f"uptime after: {uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
