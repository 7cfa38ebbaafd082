"""The tables and JSON rows of ``scale.py`` (its module docstring says what is measured)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifai_desktop.settings import SearchMode

SEARCH: tuple[SearchMode, ...] = ("lexical", "semantic", "hybrid")
"""The search modes timed, in the tables' order."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One store at one size."""

    store: str
    size: int
    vectors: str
    build_s: float
    build_load: str
    after_build: str
    """PostgreSQL: ANALYZE and the bulk rebuilds of its indexes, seconds; else ``-``."""
    search_ms: dict[str, tuple[float, float, str]]
    """mode -> (p50 ms, p95 ms, load after the mode)."""
    memory: str
    disk_mb: float
    disk_parts: str


# ----- report -------------------------------------------------------------------------------


def print_tables(rows: Sequence[Measured], out: Callable[[str], None]) -> None:
    """The search, build and footprint tables (markdown)."""
    out(
        "| chunks | store | vectors | "
        + " | ".join(f"{m} p50 ms | {m} p95 ms | load" for m in SEARCH)
        + " |"
    )
    out("|---:|---|---|" + "---:|---:|---:|" * len(SEARCH))
    for r in rows:
        cells = " | ".join(
            f"{r.search_ms[m][0]:.1f} | {r.search_ms[m][1]:.1f} | {r.search_ms[m][2]}"
            for m in SEARCH
        )
        out(f"| {r.size:,} | {r.store} | {r.vectors} | {cells} |")
    out("")
    out("| chunks | store | vectors | build s | chunks/s | load | after the build, s |")
    out("|---:|---|---|---:|---:|---:|---|")
    for r in rows:
        out(
            f"| {r.size:,} | {r.store} | {r.vectors} | {r.build_s:.1f} | "
            f"{r.size / r.build_s if r.build_s else 0.0:.0f} | {r.build_load} | {r.after_build} |"
        )
    out("")
    out("| chunks | store | disk MB | disk per 1M chunks GB | parts (MB) | memory |")
    out("|---:|---|---:|---:|---|---|")
    for r in rows:
        out(
            f"| {r.size:,} | {r.store} | {r.disk_mb:.0f} | "
            f"{r.disk_mb * 1e6 / r.size / 1024:.2f} | {r.disk_parts} | {r.memory} |"
        )


def json_rows(rows: Sequence[Measured]) -> list[str]:
    """One JSON object per size and store (``--json``; the module docstring)."""
    return [
        json.dumps(
            {
                "store": r.store,
                "chunks": r.size,
                "vectors": r.vectors,
                **{
                    m: {
                        "p50_ms": round(r.search_ms[m][0], 2),
                        "p95_ms": round(r.search_ms[m][1], 2),
                        "load": r.search_ms[m][2],
                    }
                    for m in SEARCH
                },
                "build_s": round(r.build_s, 1),
                "disk_mb": round(r.disk_mb, 1),
            }
        )
        for r in rows
    ]
