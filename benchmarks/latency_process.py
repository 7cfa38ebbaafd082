"""The process side of ``latency.py``: one checkout, and its commands run and timed.

:class:`Checkout` holds a source tree, its own ``VERIFAI_HOME`` and the samples measured on it;
:func:`timed_process` times a command to its first byte of output and its exit,
:func:`terminal_process` runs one with stderr on a pseudo-terminal (as `verifai ask` runs in a
shell) and :func:`streamed_answer` finds the answer's tokens in what the terminal showed.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import selectors
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROGRESS_WORDS = (
    "Searching your documents",
    "Starting the generator",
    "Reading the passages",
    "Writing the answer",
    "Checking every sentence",
)
"""Text of the terminal progress display of `verifai ask` (after), never answer text."""
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
TIMEOUT_S = 3600


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


def verifai(*args: str) -> list[str]:
    return [sys.executable, "-m", "verifai_desktop", *args]


def run_checked(cmd: list[str], checkout: Checkout, ok: Sequence[int] = (0,)) -> str:
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
    assert isinstance(proc.stdout, io.BufferedReader)  # bufsize -1: read1() is there
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
    assert isinstance(proc.stdout, io.BufferedReader)  # bufsize -1: read1() is there
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
