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

It prints tables and asserts nothing (figures vary with the load on the machine).

Usage::

    .venv/bin/python benchmarks/latency.py [--baseline 039854a] [--repeats 3]
        [--docs ../shared/data/docs/clean] [--question "What does SPECTER use citations for?"]
        [--max-answer-tokens N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import pty
import re
import selectors
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = REPO.parent / "shared" / "data" / "docs" / "clean"
DEFAULT_BASELINE = "039854a"
QUESTION = "What does SPECTER use citations for?"
COLLECTION = "latency"
RESULT_PREFIX = "LATENCY-RESULT "
PROGRESS_WORDS = (
    "Searching your documents",
    "Starting the generator",
    "Reading the passages",
    "Writing the answer",
    "Checking every sentence",
)
"""Text of the terminal progress display of `verifai ask` (after), never answer text."""
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
FMA_UNITS_PER_CORE = 2
TIMEOUT_S = 3600


# ----- the app, in a worker process running the checkout under test ----------------------


def _perf(llm: Any) -> dict[str, float]:
    import llama_cpp

    data = llama_cpp.llama_perf_context(llm.ctx)
    return {
        "n_p_eval": float(data.n_p_eval),
        "t_p_eval_ms": float(data.t_p_eval_ms),
        "n_eval": float(data.n_eval),
        "t_eval_ms": float(data.t_eval_ms),
    }


def _reset_perf(llm: Any) -> None:
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llm.ctx)


def _timed_ask(session: Any, collection: Any, question: str) -> dict[str, Any]:
    """One ``AskSession.ask`` with the time of every progress report and piece."""
    marks: dict[str, float] = {}
    pieces: list[float] = []

    def progress(p: Any) -> None:
        now = time.perf_counter()
        if p.stage == "retrieve" and p.done == 1:
            marks.setdefault("retrieved", now)
        elif p.stage == "generate" and p.done == 0:
            marks.setdefault("generate_start", now)
        elif p.stage == "read":
            marks.setdefault("read_start", now)
            marks["read_end"] = now

    def on_token(_piece: str) -> None:
        pieces.append(time.perf_counter())

    t0 = time.perf_counter()
    answer = session.ask(collection, question, on_token=on_token, progress=progress)
    end = time.perf_counter()
    rel = {k: v - t0 for k, v in marks.items()}
    return {
        "marks_s": rel,
        "first_piece_s": pieces[0] - t0 if pieces else None,
        "last_piece_s": pieces[-1] - t0 if pieces else None,
        "pieces": len(pieces),
        "total_s": end - t0,
        "abstained": bool(answer.abstained),
        "timings_ms": dict(answer.timings_ms),
    }


def _raw_run(
    model_path: str, n_ctx: int, messages: Sequence[Any], grammar: str | None, max_tokens: int
) -> dict[str, Any]:
    """The same chat through llama-cpp-python alone, timed as the app is."""
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    llm = Llama(model_path=model_path, n_ctx=n_ctx, seed=1234, verbose=False)
    compiled = LlamaGrammar.from_string(grammar, verbose=False) if grammar else None
    _reset_perf(llm)
    pieces: list[float] = []
    t0 = time.perf_counter()
    for chunk in llm.create_chat_completion(
        messages=[{"role": m.role, "content": m.content} for m in messages],
        stream=True,
        temperature=0.0,
        top_k=1,
        seed=1234,
        max_tokens=max_tokens,
        grammar=compiled,
    ):
        delta = chunk["choices"][0]["delta"]  # type: ignore[index]
        if isinstance(delta, dict) and delta.get("content"):
            pieces.append(time.perf_counter())
    end = time.perf_counter()
    return {
        "first_piece_s": pieces[0] - t0 if pieces else None,
        "last_piece_s": pieces[-1] - t0 if pieces else None,
        "pieces": len(pieces),
        "total_s": end - t0,
        "perf": _perf(llm),
        "threads": [int(llm.n_threads), int(llm.n_threads_batch)],
    }


def _model_shape(llm: Any) -> dict[str, Any]:
    """Weights that take part in a matrix product per token, and the attention shape.

    From the GGUF's metadata for a llama-style block (attention Q, K, V, O with grouped K/V
    heads, a gated feed-forward of three matrices) plus the output head; the token-embedding
    table is a lookup, not a product, and is left out. Falls back to every parameter
    (``llama_model_n_params``) when the metadata lacks a field.
    """
    import llama_cpp

    meta = llm.metadata
    arch = meta.get("general.architecture", "")
    n_params = float(llama_cpp.llama_model_n_params(llm.model))
    n_layer = float(llama_cpp.llama_model_n_layer(llm.model))
    n_embd = float(llama_cpp.llama_model_n_embd(llm.model))
    try:
        heads = float(meta[f"{arch}.attention.head_count"])
        kv_heads = float(meta.get(f"{arch}.attention.head_count_kv", heads))
        n_ff = float(meta[f"{arch}.feed_forward_length"])
        kv_dim = n_embd * kv_heads / heads
        block = 2 * n_embd * n_embd + 2 * n_embd * kv_dim + 3 * n_embd * n_ff
        matmul = n_layer * block + float(llm.n_vocab()) * n_embd
        source = f"{arch} block shape from the GGUF metadata, embedding lookup left out"
    except (KeyError, ValueError):
        matmul, source = n_params, "llama_model_n_params (all weights)"
    return {
        "n_params": n_params,
        "matmul_params": matmul,
        "n_layer": n_layer,
        "n_embd": n_embd,
        "source": source,
    }


def app_worker(question: str, collection_name: str) -> dict[str, Any]:
    """Two questions through the checkout's ``AskSession``, then the raw run of the prompt."""
    import verifai_desktop
    from verifai_desktop.pipeline import AskSession
    from verifai_desktop.settings import load_settings
    from verifai_desktop.store.collection import Collection

    settings = load_settings()
    session = AskSession(settings)
    generator = session.generator
    captured: dict[str, Any] = {}
    stream = generator.stream

    def recording_stream(messages: Any, **kwargs: Any) -> Iterator[str]:
        captured["messages"] = tuple(messages)
        captured["grammar"] = kwargs.get("grammar")
        return stream(messages, **kwargs)

    generator.stream = recording_stream  # type: ignore[method-assign]
    with Collection.open(collection_name) as collection:
        first = _timed_ask(session, collection, question)
        llm = generator._llm  # type: ignore[attr-defined]
        if llm is None:
            raise SystemExit("the question was not answered (abstained?): no prompt to time")
        llm.reset()  # a new question reads its whole prompt
        _reset_perf(llm)
        warm = _timed_ask(session, collection, question)
        llm = generator._llm  # type: ignore[attr-defined]
        warm["perf"] = _perf(llm)
        warm["threads"] = [int(llm.n_threads), int(llm.n_threads_batch)]
        shape = _model_shape(llm)
        n_ctx = int(generator.n_ctx)  # type: ignore[attr-defined]
    raw = _raw_run(
        str(generator.model_path),  # type: ignore[attr-defined]
        n_ctx,
        captured["messages"],
        captured["grammar"],
        settings.models.max_answer_tokens,
    )
    return {
        "package": verifai_desktop.__file__,
        "first": first,
        "warm": warm,
        "raw": raw,
        "shape": shape,
        "n_ctx": n_ctx,
    }


# ----- processes -------------------------------------------------------------------------


@dataclass
class Checkout:
    """One side of the comparison: a source tree and its own data folder."""

    label: str
    root: Path
    home: Path
    scratch: Path
    samples: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    shape: dict[str, Any] = field(default_factory=dict)

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            PYTHONPATH=str(self.root),
            VERIFAI_HOME=str(self.home),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
        )
        env.update(extra)
        return env

    def add(self, row: str, value: float | None) -> None:
        if value is not None:
            self.samples.setdefault(row, []).append(value)


def _verifai(*args: str) -> list[str]:
    return [sys.executable, "-m", "verifai_desktop", *args]


def _run_checked(cmd: list[str], checkout: Checkout, ok: Sequence[int] = (0,)) -> str:
    done = subprocess.run(
        cmd,
        cwd=checkout.scratch,
        env=checkout.env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if done.returncode not in ok:
        raise SystemExit(
            f"{checkout.label}: {' '.join(cmd[2:])} exited {done.returncode}:\n"
            f"{done.stderr[-3000:]}"
        )
    return done.stdout


def timed_process(cmd: list[str], checkout: Checkout) -> tuple[float | None, float]:
    """(first stdout byte, exit) in seconds from just before the process starts."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=checkout.scratch,
        env=checkout.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    first = None
    while proc.stdout.read1(65536):
        if first is None:
            first = time.perf_counter() - t0
    code = proc.wait()
    total = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"{checkout.label}: {' '.join(cmd[2:])} exited {code}")
    return first, total


def terminal_process(
    cmd: list[str], checkout: Checkout
) -> tuple[list[tuple[float, str]], str, float]:
    """Run with stderr on a pseudo-terminal (120x40): its output chunks with their times (s
    from the start), ANSI codes and carriage returns removed; stdout; the exit time."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=checkout.scratch,
        env=checkout.env(TERM="xterm-256color", COLUMNS="120", LINES="40"),
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
    )
    os.close(slave)
    assert proc.stdout is not None
    chunks: list[tuple[float, str]] = []
    out = bytearray()
    sel = selectors.DefaultSelector()
    sel.register(master, selectors.EVENT_READ, "tty")
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    open_streams = 2
    while open_streams:
        for key, _ in sel.select():
            try:
                data = os.read(master, 65536) if key.data == "tty" else proc.stdout.read1(65536)
            except OSError:  # EIO: the terminal's last writer is gone
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                open_streams -= 1
            elif key.data == "tty":
                text = ANSI.sub("", data.decode("utf-8", "replace")).replace("\r", "")
                chunks.append((time.perf_counter() - t0, text))
            else:
                out += data
    code = proc.wait()
    total = time.perf_counter() - t0
    os.close(master)
    if code != 0:
        raise SystemExit(f"{checkout.label}: {' '.join(cmd[2:])} exited {code}")
    return chunks, out.decode("utf-8", "replace"), total


def streamed_answer(
    chunks: Sequence[tuple[float, str]], report: str
) -> tuple[float | None, float | None, str]:
    """(first token s, last token s, streamed text) from the terminal chunks of `verifai ask`.

    The first token is the first chunk that is not the progress display (or its erasure)
    and whose text is in the final report on stdout (so a library warning is not taken
    for it).
    """
    first = last = None
    text = ""
    for when, chunk in chunks:
        if first is None:
            if not chunk.strip() or any(word in chunk for word in PROGRESS_WORDS):
                continue
            if chunk.strip() not in report:
                continue
            first = when
        if chunk.startswith("\n\n"):  # written once the answer is verified
            break
        end = chunk.find("\n\n")
        text += chunk if end < 0 else chunk[:end]
        last = when
        if end >= 0:
            break
    return first, last, text


# ----- compute bound -----------------------------------------------------------------------


def cpu_clock_ghz() -> tuple[float, str]:
    """(GHz, where it came from)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) / 1000, "/proc/cpuinfo 'cpu MHz'"
    except OSError:
        pass
    return 0.0, "unknown"


def fp32_lanes() -> tuple[int, str]:
    """fp32 lanes per FMA of the SIMD this llama.cpp build uses, and the evidence."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    if "AVX512 = 1" in info:
        return 16, "llama.cpp system info: AVX512 = 1"
    if "AVX2 = 1" in info and "FMA = 1" in info:
        return 8, "llama.cpp system info: AVX2 = 1, FMA = 1"
    return 4, f"llama.cpp system info: {info.strip()}"


def flops_per_token(shape: dict[str, Any], context: float) -> float:
    """2 N + 4 · n_layer · n_embd · context (see the module docstring)."""
    return 2 * shape["matmul_params"] + 4 * shape["n_layer"] * shape["n_embd"] * context


# ----- report ------------------------------------------------------------------------------


def _median(values: Sequence[float] | None) -> float | None:
    return statistics.median(values) if values else None


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "tok/s":
        return f"{value:.1f} tok/s"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "%":
        return f"{value:.1f}%"
    if unit == "GFLOP/s":
        return f"{value:.1f} GFLOP/s"
    return f"{value:.0f}"


ROWS: tuple[tuple[str, str], ...] = (
    ("process: verifai --version, total", "s"),
    ("process: verifai search, first result", "s"),
    ("process: verifai search, total", "s"),
    ("process: verifai ask, first output", "s"),
    ("process: verifai ask, first token", "s"),
    ("process: verifai ask, decode", "tok/s"),
    ("process: verifai ask, total", "s"),
    ("app: first question (models load), first token", "s"),
    ("app: first result (passages found)", "s"),
    ("app: first token", "s"),
    ("app: prompt tokens", ""),
    ("app: prefill, wall", "tok/s"),
    ("raw llama-cpp-python: prefill, wall", "tok/s"),
    ("app / raw: prefill, wall", "x"),
    ("app: decode, wall", "tok/s"),
    ("raw llama-cpp-python: decode, wall", "tok/s"),
    ("app / raw: decode, wall", "x"),
    ("app: prefill, llama.cpp timings", "tok/s"),
    ("raw: prefill, llama.cpp timings", "tok/s"),
    ("app: decode, llama.cpp timings", "tok/s"),
    ("raw: decode, llama.cpp timings", "tok/s"),
    ("app: total", "s"),
    ("app: prefill FLOP/s (share of peak)", "%"),
    ("raw: prefill FLOP/s (share of peak)", "%"),
    ("app: decode FLOP/s (share of peak)", "%"),
    ("raw: decode FLOP/s (share of peak)", "%"),
)


def _rate(n: float | None, seconds: float | None) -> float | None:
    return n / seconds if n is not None and seconds and seconds > 0 else None


def record_app(checkout: Checkout, result: dict[str, Any], peak_per_thread: float) -> None:
    """Turn one worker result into the app rows of ``checkout``."""
    first, warm, raw, shape = result["first"], result["warm"], result["raw"], result["shape"]
    checkout.shape = shape
    add = checkout.add
    add("app: first question (models load), first token", first["first_piece_s"])
    add("app: first result (passages found)", warm["marks_s"].get("retrieved"))
    add("app: first token", warm["first_piece_s"])
    prompt = warm["perf"]["n_p_eval"] or None
    add("app: prompt tokens", prompt)
    start = warm["marks_s"].get("generate_start")
    ours_prefill = None
    if warm["first_piece_s"] is not None and start is not None:
        ours_prefill = _rate(prompt, warm["first_piece_s"] - start)
    raw_prefill = _rate(raw["perf"]["n_p_eval"] or None, raw["first_piece_s"])
    add("app: prefill, wall", ours_prefill)
    add("raw llama-cpp-python: prefill, wall", raw_prefill)
    if ours_prefill and raw_prefill:
        add("app / raw: prefill, wall", ours_prefill / raw_prefill)

    def decode(run: dict[str, Any]) -> float | None:
        if run["pieces"] < 2:
            return None
        return _rate(run["pieces"] - 1, run["last_piece_s"] - run["first_piece_s"])

    ours_decode, raw_decode = decode(warm), decode(raw)
    add("app: decode, wall", ours_decode)
    add("raw llama-cpp-python: decode, wall", raw_decode)
    if ours_decode and raw_decode:
        add("app / raw: decode, wall", ours_decode / raw_decode)
    add("app: total", warm["total_s"])
    for name, run in (("app", warm), ("raw", raw)):
        perf = run["perf"]
        p_rate = _rate(perf["n_p_eval"], perf["t_p_eval_ms"] / 1000)
        d_rate = _rate(perf["n_eval"], perf["t_eval_ms"] / 1000)
        add(f"{name}: prefill, llama.cpp timings", p_rate)
        add(f"{name}: decode, llama.cpp timings", d_rate)
        n_threads, n_threads_batch = run["threads"]
        p_tokens = perf["n_p_eval"]
        if p_rate:
            achieved = p_rate * flops_per_token(shape, p_tokens / 2)
            add(
                f"{name}: prefill FLOP/s (share of peak)",
                100 * achieved / (peak_per_thread * n_threads_batch),
            )
        if d_rate:
            achieved = d_rate * flops_per_token(shape, p_tokens + perf["n_eval"] / 2)
            add(
                f"{name}: decode FLOP/s (share of peak)",
                100 * achieved / (peak_per_thread * n_threads),
            )


def print_table(before: Checkout, after: Checkout, rev: str) -> None:
    head = f"| measure (median) | before ({rev}) | after (working tree) | after / before |"
    print(head)
    print("|---|---|---|---|")
    for row, unit in ROWS:
        b = _median(before.samples.get(row))
        a = _median(after.samples.get(row))
        ratio = _fmt(a / b, "x") if a is not None and b else "n/a"
        n = max(len(before.samples.get(row, [])), len(after.samples.get(row, [])))
        label = f"{row} (n={n})" if n else row
        print(f"| {label} | {_fmt(b, unit)} | {_fmt(a, unit)} | {ratio} |")


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
    where = _run_checked(
        [sys.executable, "-c", "import verifai_desktop; print(verifai_desktop.__file__)"],
        checkout,
    ).strip()
    if not Path(where).resolve().is_relative_to(checkout.root.resolve()):
        raise SystemExit(f"{checkout.label}: imports {where}, not {checkout.root}")
    print(f"[{checkout.label}] ingesting {len(docs)} paths into {checkout.home}", file=sys.stderr)
    t0 = time.perf_counter()
    _run_checked(
        _verifai("ingest", *map(str, docs), "--collection", COLLECTION), checkout, ok=(0, 3)
    )
    checkout.notes.append(f"ingest {time.perf_counter() - t0:.0f} s")


def measure_processes(checkout: Checkout, question: str, count: Callable[[str], int]) -> None:
    _, total = timed_process(_verifai("--version"), checkout)
    checkout.add("process: verifai --version, total", total)
    first, total = timed_process(_verifai("search", question, "-c", COLLECTION), checkout)
    checkout.add("process: verifai search, first result", first)
    checkout.add("process: verifai search, total", total)
    chunks, report, total = terminal_process(_verifai("ask", question, "-c", COLLECTION), checkout)
    t_first, t_last, text = streamed_answer(chunks, report)
    checkout.add("process: verifai ask, first output", chunks[0][0] if chunks else None)
    checkout.add("process: verifai ask, first token", t_first)
    tokens = count(text)
    if t_first is not None and t_last is not None and tokens > 1 and t_last > t_first:
        checkout.add("process: verifai ask, decode", (tokens - 1) / (t_last - t_first))
    checkout.add("process: verifai ask, total", total)


def measure_app(checkout: Checkout, question: str, peak_per_thread: float) -> None:
    out = _run_checked(
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
                _run_checked(_verifai("search", args.question, "-c", COLLECTION), side)
                _run_checked(_verifai("ask", args.question, "-c", COLLECTION, "--json"), side)
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
    version = _median(after.samples.get("process: verifai --version, total"))
    search = _median(after.samples.get("process: verifai search, total"))
    if version is not None and search is not None:
        bar = max(1.5, 3 * version)
        print(
            f"search bar (issue 13): at most max(1.5 s, 3 x --version = {3 * version:.2f} s) = "
            f"{bar:.2f} s; after: {search:.2f} s"
        )
    b_ttft = _median(before.samples.get("process: verifai ask, first token"))
    a_ttft = _median(after.samples.get("process: verifai ask, first token"))
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
