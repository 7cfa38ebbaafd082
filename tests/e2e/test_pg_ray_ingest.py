"""`verifai ingest --store postgresql://... --ray`: the files parsed and embedded on a real local
Ray cluster, written to a real PostgreSQL with pgvector (:mod:`tests.e2e.pg`).

Documents: four of docs/clean (PDF, DOCX, Markdown, text) and a broken EPUB, an encrypted PDF
and a scanned PDF of docs/nasty. Collection ``single`` is ingested by the single-process ingest;
collection ``spread`` by ``verifai ingest --ray`` (which starts its own local cluster) stopped by
Ctrl-C while a scanned page is being recognised on a worker, then by ``verifai ingest --ray
ADDRESS`` on the test's cluster (``ray.init(num_cpus=2)``), which resumes by hash. Both must
hold the same documents, statuses, reasons, ids, chunks and vectors (within 1e-6).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.e2e.pg import Server, team_server
from verifai_desktop.errors import Cancelled
from verifai_desktop.store.outcomes import Outcome
from verifai_desktop.store.pg.store import PgStore
from verifai_desktop.store.spread import RayCluster
from verifai_desktop.store.writer import ingest_paths

pytestmark = pytest.mark.slow

pytest.importorskip(
    "pgserver", reason="pgserver is not installed (the test extra): no PostgreSQL to test with"
)
pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")
ray = pytest.importorskip("ray", reason="ray is not installed (the cluster extra)")

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT.parent / "shared" / "data" / "docs"
CLEAN = (
    "bmc_trauma_2010_dvt_prophylaxis_review.pdf",
    "deep_rules_02_intro.md",
    "pandoc_mendeley_citations.docx",
    "scifact_covid_claims.txt",
)
NASTY = {
    "epub_truncated_zip_no_end_header.epub": "failed",
    "encrypted_aes128_password_foo.pdf": "encrypted",
    "scanned_image_only_lexmark_2p.pdf": "needs_ocr",
}
SCANNED = "scanned_image_only_lexmark_2p.pdf"


class Team:
    """The server, the documents and a ``verifai`` runner as the collections' owner."""

    def __init__(self, server: Server, docs: Path, home: Path) -> None:
        self.server = server
        self.docs = docs
        self.home = home
        self.url = server.url("vowner")

    def popen(self, collection: str, *args: str) -> subprocess.Popen[str]:
        """``verifai ingest DOCS --collection C --store URL ARGS`` in its own process group
        (as a terminal runs it), SIGINT delivered even when this suite runs in the
        background."""
        code = (
            "import signal, sys\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
            "from verifai_desktop.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n"
        )
        argv = ["ingest", str(self.docs), "--collection", collection, "--store", self.url]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "VERIFAI_HOME": str(self.home)}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
        return subprocess.Popen(
            [sys.executable, "-c", code, *argv, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )

    def documents(self, collection: str) -> list[tuple[Any, ...]]:
        return self.server.rows(
            "SELECT doc_id, source, title, sha256, format, status, reason, chunk_count, mtime_ns"
            f" FROM verifai_{collection}.documents ORDER BY doc_id"
        )

    def chunks(self, collection: str) -> list[tuple[Any, ...]]:
        return self.server.rows(
            "SELECT chunk_id, doc_id, ordinal, text, char_start, char_end, sentence_spans::text,"
            f" embedding::text FROM verifai_{collection}.chunks ORDER BY chunk_id"
        )


def _vectors(rows: list[tuple[Any, ...]]) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.array([json.loads(r[-1]) for r in rows], dtype=np.float32)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    docs = tmp_path_factory.mktemp("docs")
    for name in CLEAN:
        shutil.copyfile(DATA / "clean" / name, docs / name)
    for name in NASTY:
        shutil.copyfile(DATA / "nasty" / name, docs / name)
    with team_server(tmp_path_factory.mktemp("pgdata")) as server:
        yield Team(server, docs, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def runs(team: Team) -> Iterator[dict[str, Any]]:
    """The single-process ingest, the Ray ingest stopped by Ctrl-C and the one resuming it.

    The cancelled run starts its own local cluster; the test's cluster (two CPUs, no
    dashboard) starts after it and is shut down when the module ends."""
    found: dict[str, Any] = {}
    with PgStore.open(team.url, "single", create=True) as store:
        found["single"] = ingest_paths(store, [team.docs])

    # Ctrl-C once the first files are written: the worker is recognising the scanned pages
    # (OCR on), a few seconds the run waits for.
    proc = team.popen("spread", "--ray")
    assert proc.stderr is not None
    err: list[str] = []
    for line in proc.stderr:
        err.append(line)
        if line.startswith("[3/"):
            os.killpg(proc.pid, signal.SIGINT)
            break
    _, more = proc.communicate(timeout=120)
    found["cancelled"] = (proc.returncode, "".join(err) + more)
    found["after_cancel"] = team.documents("spread"), team.chunks("spread")

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        proc = team.popen("spread", "--ray", address, "--no-ocr", "--json")
        out, err_text = proc.communicate(timeout=600)
        found["resumed"] = (proc.returncode, json.loads(out) if out else None, err_text)
        yield found
    finally:
        ray.shutdown()


def test_ctrl_c_stops_the_ray_ingest_leaving_whole_documents(
    team: Team, runs: dict[str, Any]
) -> None:
    code, err = runs["cancelled"]
    assert code == 130, err[-3000:]
    assert "stopping after the current file" in err
    # It wrote the first files, each whole, and nothing of the scanned one or those after it.
    docs, chunks = runs["after_cancel"]
    assert 2 <= len(docs) < len(CLEAN) + len(NASTY)
    assert [Path(d[1]).name for d in docs] == sorted(CLEAN + tuple(NASTY))[: len(docs)]
    for doc_id, chunk_count in ((d[0], d[7]) for d in docs):
        assert sum(c[1] == doc_id for c in chunks) == chunk_count


def test_the_resumed_ray_ingest_matches_the_single_process_one(
    team: Team, runs: dict[str, Any]
) -> None:
    code, report, err = runs["resumed"]
    assert code == 3, err[-3000:]  # some files are not indexed: broken, encrypted, scanned
    by_name = {Path(f["source"]).name: f for f in report["files"]}
    assert set(by_name) == set(CLEAN) | set(NASTY)
    # The files written before Ctrl-C are skipped by hash, the rest read now.
    assert by_name[CLEAN[0]]["status"] == "skipped"
    assert by_name[SCANNED]["status"] == "needs_ocr"
    for name, status in NASTY.items():
        assert by_name[name]["stored_status"] == status
        assert by_name[name]["reason"], name
    # The same documents, ids, statuses, reasons, chunks and vectors as the single run.
    single, spread = team.documents("single"), team.documents("spread")
    assert [d[:8] for d in spread] == [d[:8] for d in single]
    reasons = {Path(d[1]).name: (d[5], d[6]) for d in spread}
    assert reasons["encrypted_aes128_password_foo.pdf"][0] == "encrypted"
    assert "password" in reasons["encrypted_aes128_password_foo.pdf"][1]
    assert reasons["epub_truncated_zip_no_end_header.epub"][0] == "failed"
    assert reasons[SCANNED][0] == "needs_ocr"
    a, b = team.chunks("single"), team.chunks("spread")
    assert len(a) == sum(d[7] for d in single) > 40
    assert [r[:-1] for r in b] == [r[:-1] for r in a]
    np.testing.assert_allclose(_vectors(b), _vectors(a), atol=1e-6, rtol=0)


def test_a_second_ray_run_skips_unchanged_files(team: Team, runs: dict[str, Any]) -> None:
    """On the test's cluster, in this process: a file only touched (same content) is skipped
    by hash and its new mtime recorded; nothing is rewritten."""
    touched = team.docs / "deep_rules_02_intro.md"
    mtime_ns = touched.stat().st_mtime_ns + 5_000_000_000
    os.utime(touched, ns=(mtime_ns, mtime_ns))
    before = team.chunks("spread")
    with PgStore.open(team.url, "spread") as store:
        report = ingest_paths(store, [team.docs], cluster=RayCluster())
    assert {o.status for o in report.outcomes} == {Outcome.SKIPPED}
    assert len(report.outcomes) == len(CLEAN) + len(NASTY)
    assert team.chunks("spread") == before
    mtimes = {Path(d[1]).name: d[8] for d in team.documents("spread")}
    assert mtimes[touched.name] == mtime_ns


def test_a_cancel_stops_the_run_between_files(team: Team, runs: dict[str, Any]) -> None:
    """The cancel event of the app and the CLI, set while the first file is read: nothing is
    written to a new collection, and the cluster is left running for the next run."""
    cancel = threading.Event()
    with PgStore.open(team.url, "stopped", create=True) as store:
        with pytest.raises(Cancelled):
            ingest_paths(
                store,
                [team.docs],
                cancel=cancel,
                progress=lambda p: cancel.set(),
                cluster=RayCluster(),
            )
        assert store.documents() == []
    assert ray.is_initialized()


def test_search_finds_the_text_ingested_on_ray(team: Team, runs: dict[str, Any]) -> None:
    query = "deep venous thrombosis prophylaxis after trauma"
    with PgStore.open(team.url, "spread") as store:
        vector = store.embedder().embed([query])[0]
        lexical, semantic = store.hybrid_search(query, vector, 3)
        records = store.chunks([lexical[0][0], semantic[0][0]])
    assert {Path(r.source).name for r in records.values()} == {CLEAN[0]}
    assert "thrombosis" in records[lexical[0][0]].chunk.text.lower()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("host", ["127.0.0.1", "198.51.100.1"])
def test_a_cluster_address_that_cannot_be_reached_fails_within_30_s(team: Team, host: str) -> None:
    """A port nothing listens on, and an address of TEST-NET-2 (RFC 5737) that no host
    answers: the ingest ends within 30 s with the address and the reason, nothing written."""
    address = f"{host}:{_closed_port()}"
    start = time.monotonic()
    proc = team.popen("nowhere", "--ray", address)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert time.monotonic() - start < 30
    assert proc.returncode == 1, err[-3000:]
    assert "Traceback" not in err
    assert f"error: Ray cluster {address}: cannot be reached" in err
    assert team.server.rows("SELECT count(*) FROM verifai_nowhere.documents") == [(0,)]
