"""Nothing leaves the machine (offline.py): Hub offline flags, ONNX Runtime telemetry off."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import verifai_desktop
from verifai_desktop import offline
from verifai_desktop.cli import main

PACKAGE = Path(verifai_desktop.__file__).parent
LOOPBACK = re.compile(r'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"')
UNKNOWN = "sentence-transformers/no-such-model-for-verifai-tests"


def _env_without_offline_flags(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in offline.OFFLINE_ENV}
    env["VERIFAI_HOME"] = str(home)
    return env


@pytest.mark.parametrize(
    ("argv", "offline_env"),
    [
        (["collections"], ["1", "1"]),
        (["status", "-c", "missing"], ["1", "1"]),
        (["models", "pull", "no-such-model"], [None, None]),  # the one download path
    ],
)
def test_the_cli_defaults_the_hub_to_offline_except_to_pull(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], offline_env: list[str | None]
) -> None:
    for key in offline.OFFLINE_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv(offline.ORT_TELEMETRY_ENV, raising=False)
    main(argv)
    assert [os.environ.get(k) for k in offline.OFFLINE_ENV] == offline_env
    assert os.environ.get(offline.ORT_TELEMETRY_ENV) == "1"  # downloads included
    # What the user set is kept.
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    main(argv)
    assert os.environ.get("HF_HUB_OFFLINE") == "0"


def test_import_onnxruntime_disables_telemetry_first(monkeypatch: pytest.MonkeyPatch) -> None:
    ort = pytest.importorskip("onnxruntime")
    calls: list[str] = []
    monkeypatch.setattr(ort, "disable_telemetry_events", lambda: calls.append("off"))
    monkeypatch.setattr(offline, "_ort", None)
    monkeypatch.setenv(offline.ORT_TELEMETRY_ENV, "0")  # what a user might have set
    assert offline.import_onnxruntime() is ort
    assert os.environ[offline.ORT_TELEMETRY_ENV] == "1"
    assert offline.import_onnxruntime() is ort
    assert calls == ["off"]  # once per process, before any session can exist


def _imports_onnxruntime(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        names = [node.module or ""]
    else:
        return False
    return any(n == "onnxruntime" or n.startswith("onnxruntime.") for n in names)


def _calls_helper_before(func: ast.AST, lineno: int) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "import_onnxruntime"
        and n.lineno < lineno
        for n in ast.walk(func)
    )


def test_every_onnxruntime_import_goes_through_the_helper() -> None:
    """A direct `import onnxruntime` skips disable_telemetry_events (the bug of issue 14);
    a submodule may be imported in a function that called the helper first."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "offline.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_function = set()
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(func):
                    if _imports_onnxruntime(node):
                        in_function.add(node)
                        if not _calls_helper_before(func, node.lineno):
                            offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
        offenders += [
            f"{path.relative_to(PACKAGE)}:{node.lineno}"
            for node in ast.walk(tree)
            if _imports_onnxruntime(node) and node not in in_function
        ]
    assert offenders == []


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_an_unknown_embedder_makes_no_network_connection(tmp_path: Path) -> None:
    """Under strace: asking for a Hub model that is not here fails at once, with no connect()
    other than AF_UNIX or loopback (before: DNS lookups and retries to huggingface.co)."""
    code = (
        "from verifai_desktop.errors import ModelNotFound\n"
        "from verifai_desktop.index.embedder import get_embedder\n"
        "try:\n"
        f"    get_embedder({UNKNOWN!r}).dim\n"
        "except ModelNotFound as exc:\n"
        "    print(exc)\n"
    )
    trace = tmp_path / "connect.txt"
    strace = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace)]
    proc = subprocess.run(
        [*strace, sys.executable, "-c", code],
        env=_env_without_offline_flags(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"model {UNKNOWN!r} is not available on this machine")
    connects = trace.read_text().splitlines()
    outside = [
        line
        for line in connects
        if "AF_UNIX" not in line
        and not re.search(r'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"', line)
    ]
    assert outside == []
