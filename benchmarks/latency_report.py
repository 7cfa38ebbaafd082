"""The figures of ``latency.py``: this CPU's compute bound, the rows, the table.

:func:`record_app` turns one app worker result (``latency_app.py``) into rows of a
:class:`latency_process.Checkout`; :func:`print_table` prints the medians of both checkouts
side by side. How each figure is computed is in ``latency.py``'s docstring.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from latency_process import Checkout

FMA_UNITS_PER_CORE = 2


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
    """2 N + 4 · n_layer · n_embd · context (see ``latency.py``'s docstring)."""
    return float(2 * shape["matmul_params"] + 4 * shape["n_layer"] * shape["n_embd"] * context)


# ----- report ------------------------------------------------------------------------------


def median(values: Sequence[float] | None) -> float | None:
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
        b = median(before.samples.get(row))
        a = median(after.samples.get(row))
        ratio = _fmt(a / b, "x") if a is not None and b else "n/a"
        n = max(len(before.samples.get(row, [])), len(after.samples.get(row, [])))
        label = f"{row} (n={n})" if n else row
        print(f"| {label} | {_fmt(b, unit)} | {_fmt(a, unit)} | {ratio} |")
