"""Nothing leaves the machine: ingest, search and ask under ``strace -e trace=connect``.

Issue 14 measured ONNX Runtime 1.32 looking up ``mobile.events.data.microsoft.com`` (23, 6 and
14 ``connect()`` calls to the DNS resolver for ingest, search and ask). Here the real commands
run with the real bundled models and the user's environment as it is (no Hub offline flags,
no ONNX Runtime opt-out): the app must set what keeps it offline itself. Every ``connect()``
of every thread and child process must be to a Unix socket or to loopback.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DOCS_CLEAN
from verifai_desktop import offline

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed"),
]

DOCS = ("acl2020_specter.pdf", "scifact_data_description.md")
LOCAL = re.compile(r'AF_UNIX|inet_addr\("127\.|inet_pton\(AF_INET6, "::1"')


def _traced(home: Path, trace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in (*offline.OFFLINE_ENV, offline.ORT_TELEMETRY_ENV)
    }
    env["VERIFAI_HOME"] = str(home)
    cmd = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace)]
    proc = subprocess.run(
        [*cmd, sys.executable, "-m", "verifai_desktop", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[-300:]}")
    return proc


def _outside(trace: Path) -> list[str]:
    lines = trace.read_text().splitlines()
    return [line for line in lines if "connect(" in line and not LOCAL.search(line)]


def test_ingest_search_and_ask_connect_to_nothing_but_local_sockets(tmp_path: Path) -> None:
    home = tmp_path / "home"
    steps = {
        "ingest": ["ingest", *(str(DOCS_CLEAN / d) for d in DOCS), "-c", "net"],
        "search": ["search", "What does SPECTER use citations for?", "-c", "net"],
        "ask": ["ask", "What does SPECTER use citations for?", "-c", "net", "-k", "3"],
    }
    leaks: dict[str, list[str]] = {}
    for name, args in steps.items():
        trace = tmp_path / f"{name}.strace"
        proc = _traced(home, trace, *args)
        assert proc.returncode == 0, f"{name}: {proc.stderr[-2000:]}"
        leaks[name] = _outside(trace)
    assert leaks == {"ingest": [], "search": [], "ask": []}
