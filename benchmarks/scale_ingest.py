"""The ``--ingest`` part of ``scale.py``: ingest throughput of a folder (``docs/clean``)
through ``ingest_paths``: embedded, PostgreSQL in one process, and PostgreSQL with the files
read on a local Ray cluster (``ray.init(num_cpus=2)``, started before the run and timed apart).

Chunks/s is the chunks indexed over the run's wall time (``IngestReport.elapsed_ms``, model
loading included); embed, parse and write seconds are the run's stage times (on Ray: summed
over the workers). Each run starts from an empty collection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pg_local import load, stderr_progress

from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.writer import IngestReport, ingest_paths


def ingest_row(label: str, report: IngestReport) -> str:
    """One row of the ingest table."""
    chunks = sum(o.chunk_count for o in report.outcomes)
    seconds = report.elapsed_ms / 1000.0
    return (
        f"| {label} | {len(report.outcomes)} | {chunks} | {seconds:.1f} | "
        f"{chunks / seconds if seconds else 0.0:.1f} | {report.embed_ms / 1000:.1f} | "
        f"{report.parse_ms / 1000:.1f} | {report.index_ms / 1000:.1f} | {load()} |"
    )


def ingest_throughput(
    url: str | None, settings: Settings, docs: Path, ray: bool, out: Callable[[str], None]
) -> None:
    """Ingest ``docs`` embedded, into PostgreSQL, and into PostgreSQL via Ray; print a table."""
    out("| ingest | files | chunks | wall s | chunks/s | embed s | parse s | write s | load |")
    out("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with Collection.create("ingest-clean", settings=settings, replace=True) as collection:
        report = ingest_paths(collection, [docs], progress=stderr_progress())
        out(ingest_row("embedded", report))
    if url is None:
        return
    with fresh_pg(url, "ingest_clean", settings) as store:
        report = ingest_paths(store, [docs], progress=stderr_progress())
        out(ingest_row("postgresql, one process", report))
    if ray:
        from verifai_desktop.store.spread import RayCluster, import_ray

        cluster = RayCluster(num_cpus=2)
        start = time.perf_counter()
        module = import_ray()
        module.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        started_s = time.perf_counter() - start
        try:
            with fresh_pg(url, "ingest_clean_ray", settings) as store:
                report = ingest_paths(store, [docs], progress=stderr_progress(), cluster=cluster)
        finally:
            module.shutdown()
        out(ingest_row(f"postgresql, local Ray, 2 CPUs (+{started_s:.0f} s to start)", report))


def fresh_pg(url: str, name: str, settings: Settings) -> PgStore:
    """A new, empty PostgreSQL collection ``name`` (one left by an earlier run is dropped)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA IF EXISTS verifai_{name} CASCADE".encode())
    return PgStore.open(url, name, create=True, settings=settings)
