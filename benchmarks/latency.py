"""Latency a user feels, before and after: `verifai search` / `verifai ask` as whole processes
and a question inside the app, against raw llama-cpp-python and this CPU's compute bound.

Two checkouts run the same measurements, interleaved, each ``--repeats`` times (medians):
*before*, a temporary ``git worktree`` of ``--baseline REV`` (default 039854a, the last commit
before the speed work of issue 13), and *after*, this working tree. Both run in this venv
(``PYTHONPATH`` points at the checkout, the working directory is neutral, and each checkout's
import path is checked), each with its own ``VERIFAI_HOME`` in a temporary folder holding a
collection ingested once from ``--docs`` by that checkout (its own catalog format) and a
link to the bundled GGUF. Before timing, each checkout runs one search and one question
untimed (file cache, the GGUF's sha256 cached in that home).

Rows and where each number comes from:

* ``verifai --version``, ``verifai search QUESTION``: ``python -m verifai_desktop ...``,
  wall time from just before the process is started to its exit; for search also to the
  first byte of its output (the results).
* ``verifai ask QUESTION``: run with stderr on a pseudo-terminal (as in a shell), stdout on a
  pipe. First output = first byte on the terminal (progress or answer); first token = first
  text on the terminal that is not the progress display (ANSI codes removed); decode tokens/s
  = (tokens of the streamed text - 1) / (last token - first token), tokens counted by the
  model's own tokenizer; total = process exit.
* In the app: the checkout's ``AskSession`` (what the window calls), in a fresh process per
  repeat. The first question loads the models; the second (KV cache cleared first, so the
  prompt is read in full as for a new question) gives first result (passages found), time
  to first token, prefill and decode tokens/s, total. Prefill tokens/s (wall) = prompt
  tokens / (first piece - the pipeline's ``generate`` start report, which precedes the
  generator call); decode tokens/s (wall) = (pieces - 1) / (last piece - first piece).
  Prompt tokens and llama.cpp's own prefill/decode timings come from
  ``llama_perf_context`` (n_p_eval, t_p_eval_ms, n_eval, t_eval_ms).
* Raw llama-cpp-python: in the same process right after, a new ``Llama`` of the same file
  and context size, ``create_chat_completion`` of the same messages and citation grammar
  (stream, greedy, same seed and token limit), timed the same way; ratio = app / raw.
* Compute bound: FLOPs per token = 2 N + 4 · n_layer · n_embd · L (N = the weights in matrix
  products: the blocks' attention and feed-forward matrices from the GGUF's shape metadata
  plus the output head, not the embedding lookup; 2 FLOPs per weight; the attention term is
  QKᵀ and AV over L positions: L = P/2 on average while reading a P-token prompt, P + G/2
  while writing G tokens). Peak FLOP/s = threads x clock x 32 FLOPs/cycle (AVX2: 8 fp32 lanes,
  FMA = 2 FLOPs, 2 FMA units per core, as on Haswell and later and Zen 2 and later; 16 lanes
  if this llama.cpp build uses AVX-512); threads = what llama.cpp used (``n_threads_batch``
  for prefill, ``n_threads`` for decode); clock from /proc/cpuinfo. The Q4_K_M kernels do
  int8/int16 dot products, not fp32 FMAs, and decode is bound by memory bandwidth, so this
  is a yardstick, not a reachable ceiling.

It prints tables and asserts nothing (figures vary with the load on the machine). The app
worker is in ``latency_app.py``, the process runs and the checkout in ``latency_process.py``,
the compute bound and the table in ``latency_report.py``.

Usage::

    .venv/bin/python benchmarks/latency.py [--baseline 039854a] [--repeats 3]
        [--docs ../shared/data/docs/clean] [--question "What does SPECTER use citations for?"]
        [--max-answer-tokens N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from latency_app import app_worker
from latency_process import (
    Checkout,
    run_checked,
    streamed_answer,
    terminal_process,
    timed_process,
    verifai,
)
from latency_report import (
    FMA_UNITS_PER_CORE,
    cpu_clock_ghz,
    fp32_lanes,
    median,
    print_table,
    record_app,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "docs" / "clean"
DEFAULT_BASELINE = "039854a"
QUESTION = "What does SPECTER use citations for?"
COLLECTION = "latency"
RESULT_PREFIX = "LATENCY-RESULT "


# ----- set-up ------------------------------------------------------------------------------


@contextlib.contextmanager
def baseline_tree(rev: str, where: Path) -> Iterator[Path]:
    """A temporary ``git worktree`` of ``rev`` (detached), removed afterwards."""
    path = where / "baseline-src"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), rev],
        check=True,
        capture_output=True,
        text=True,
    )
    try:
        yield path
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
            check=False,
            capture_output=True,
        )


def prepare(checkout: Checkout, gguf: Path, docs: Sequence[Path], max_tokens: int | None) -> None:
    """Own data folder: the GGUF linked in, settings, the collection ingested by this
    checkout; checks that the checkout's package is the one imported."""
    models = checkout.home / "models"
    models.mkdir(parents=True, exist_ok=True)
    link = models / gguf.name
    if not link.exists():
        link.symlink_to(gguf)
    if max_tokens is not None:
        (checkout.home / "settings.toml").write_text(
            f"[models]\nmax_answer_tokens = {max_tokens}\n", encoding="utf-8"
        )
    checkout.scratch.mkdir(parents=True, exist_ok=True)
    where = run_checked(
        [sys.executable, "-c", "import verifai_desktop; print(verifai_desktop.__file__)"],
        checkout,
    ).strip()
    if not Path(where).resolve().is_relative_to(checkout.root.resolve()):
        raise SystemExit(f"{checkout.label}: imports {where}, not {checkout.root}")
    print(f"[{checkout.label}] ingesting {len(docs)} paths into {checkout.home}", file=sys.stderr)
    t0 = time.perf_counter()
    run_checked(verifai("ingest", *map(str, docs), "--collection", COLLECTION), checkout, ok=(0, 3))
    checkout.notes.append(f"ingest {time.perf_counter() - t0:.0f} s")


def measure_processes(checkout: Checkout, question: str, count: Callable[[str], int]) -> None:
    _, total = timed_process(verifai("--version"), checkout)
    checkout.add("process: verifai --version, total", total)
    first, total = timed_process(verifai("search", question, "-c", COLLECTION), checkout)
    checkout.add("process: verifai search, first result", first)
    checkout.add("process: verifai search, total", total)
    chunks, report, total = terminal_process(verifai("ask", question, "-c", COLLECTION), checkout)
    t_first, t_last, text = streamed_answer(chunks, report)
    checkout.add("process: verifai ask, first output", chunks[0][0] if chunks else None)
    checkout.add("process: verifai ask, first token", t_first)
    tokens = count(text)
    if t_first is not None and t_last is not None and tokens > 1 and t_last > t_first:
        checkout.add("process: verifai ask, decode", (tokens - 1) / (t_last - t_first))
    checkout.add("process: verifai ask, total", total)


def measure_app(checkout: Checkout, question: str, peak_per_thread: float) -> None:
    out = run_checked(
        [sys.executable, str(Path(__file__).resolve()), "--worker-app", "--question", question],
        checkout,
    )
    line = next(x for x in out.splitlines() if x.startswith(RESULT_PREFIX))
    result = json.loads(line.removeprefix(RESULT_PREFIX))
    if not Path(result["package"]).resolve().is_relative_to(checkout.root.resolve()):
        raise SystemExit(f"{checkout.label}: the app worker imported {result['package']}")
    record_app(checkout, result, peak_per_thread)


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print the tables; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, metavar="REV")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each measurement")
    parser.add_argument(
        "--docs", type=Path, nargs="+", default=[DEFAULT_DOCS], help="files or folders"
    )
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument(
        "--max-answer-tokens", type=int, default=None, help="settings' max_answer_tokens"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the data folders here")
    parser.add_argument("--worker-app", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_app:  # runs with PYTHONPATH at the checkout under test
        print(RESULT_PREFIX + json.dumps(app_worker(args.question, COLLECTION)), flush=True)
        return 0

    sys.path.insert(0, str(REPO))
    from llama_cpp import Llama

    from verifai_desktop import modelstore

    gguf = modelstore.ensure_bundled_generator().resolve()
    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0

    ghz, clock_source = cpu_clock_ghz()
    lanes, lanes_source = fp32_lanes()
    flops_per_cycle = lanes * 2 * FMA_UNITS_PER_CORE
    peak_per_thread = ghz * 1e9 * flops_per_cycle

    load = os.getloadavg()[0]
    root = args.keep or Path(tempfile.mkdtemp(prefix="verifai-latency-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        with baseline_tree(args.baseline, root) as base_src:
            before = Checkout("before", base_src, root / "before" / "home", root / "before")
            after = Checkout("after", REPO, root / "after" / "home", root / "after")
            sides = (before, after)
            for side in sides:
                prepare(side, gguf, args.docs, args.max_answer_tokens)
                # Untimed: file cache, and the GGUF's sha256 cached in this home.
                run_checked(verifai("search", args.question, "-c", COLLECTION), side)
                run_checked(verifai("ask", args.question, "-c", COLLECTION, "--json"), side)
            for r in range(args.repeats):
                for side in sides if r % 2 == 0 else sides[::-1]:
                    print(f"[{side.label}] repeat {r + 1}/{args.repeats}", file=sys.stderr)
                    measure_processes(side, args.question, count)
                    measure_app(side, args.question, peak_per_thread)
            rev = subprocess.run(
                ["git", "-C", str(REPO), "rev-parse", "--short", args.baseline],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    print(f"## Latency: {args.question!r}, {args.repeats} repeats, interleaved")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"{ghz:.2f} GHz ({clock_source}); load average (1 min) before the run {load:.2f}, "
        f"after {os.getloadavg()[0]:.2f}; Python {platform.python_version()}"
    )
    notes = "; ".join(f"{s.label}: {', '.join(s.notes)}" for s in sides)
    print(f"docs: {', '.join(map(str, args.docs))}; {notes}")
    print()
    print_table(before, after, rev or args.baseline)
    print()
    version = median(after.samples.get("process: verifai --version, total"))
    search = median(after.samples.get("process: verifai search, total"))
    if version is not None and search is not None:
        bar = max(1.5, 3 * version)
        print(
            f"search bar (issue 13): at most max(1.5 s, 3 x --version = {3 * version:.2f} s) = "
            f"{bar:.2f} s; after: {search:.2f} s"
        )
    b_ttft = median(before.samples.get("process: verifai ask, first token"))
    a_ttft = median(after.samples.get("process: verifai ask, first token"))
    if b_ttft and a_ttft:
        print(f"time to first token, after / before (bar: at most 0.5): {a_ttft / b_ttft:.2f}")
    print(
        "decode tokens/s, app / raw llama-cpp-python (bar: at least 0.97): see 'app / raw: "
        "decode, wall'"
    )
    print()
    print(
        "Compute bound: FLOPs/token = 2 N + 4 · n_layer · n_embd · L, L = P/2 while reading a "
        "P-token prompt, P + G/2 while writing G tokens;"
    )
    for side in sides:
        if side.shape:
            print(
                f"  {side.label}: N = {side.shape['matmul_params'] / 1e6:.0f} M "
                f"({side.shape['source']}; the GGUF holds {side.shape['n_params'] / 1e6:.0f} M "
                f"parameters), n_layer {side.shape['n_layer']:.0f}, n_embd "
                f"{side.shape['n_embd']:.0f}"
            )
    print(
        f"Peak per thread = {ghz:.2f} GHz x {flops_per_cycle} FLOPs/cycle "
        f"({lanes} fp32 lanes [{lanes_source}] x 2 (FMA) x {FMA_UNITS_PER_CORE} FMA units, "
        f"assumed) = {peak_per_thread / 1e9:.1f} GFLOP/s; threads as llama.cpp used them "
        "(n_threads_batch for prefill, n_threads for decode). Q4_K_M kernels use int8 dot "
        "products and decode is memory-bound: a yardstick, not a reachable ceiling."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
