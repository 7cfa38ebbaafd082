"""The app no slower than the CLI (issue 40, item 5): one question asked in the app's way while
background work runs beside it, with and without the answers-first gate, against the CLI.

Rows, each the median of ``--repeats`` runs, all in one run on one machine:

* ``CLI``: ``python -m verifai_desktop ask QUESTION --json`` as a whole process (the models
  load in it), nothing else running: time to the first token (from the generator's start, as
  ``timings_ms.first_token``) and the answer's ``timings_ms.total``, and the process's wall
  time.
* ``app, idle``: the question through :class:`~verifai_desktop.pipeline.AskSession` (what the
  window calls) in this process, the models loaded by an earlier question, the generator's
  KV cache cleared first (the whole prompt is read, as in a new process).
* ``app + ingest + self-check, no gate``: the same, while two background threads run what the
  app runs beside an answer: an ingest of ``--docs`` into a scratch collection and the
  self-check of the asked collection (:func:`~verifai_desktop.evaluate.selfcheck.run_self_check`);
  :data:`~verifai_desktop.foreground.FOREGROUND` switched off (its ``wait_turn`` returns at
  once), as before issue 40.
* ``app + ingest + self-check, gate``: the same with the gate on (the shipped behaviour): the
  background threads wait between files, embedding batches and self-check batches while the
  answer is written, and the parser process is suspended (``Foreground.hold``).

The bar: the app's time to first token within 1.1 x the CLI's. Times depend on the load,
printed before and after; take figures with nothing else running.

Usage: .venv/bin/python benchmarks/latency_busy.py --collection NAME [--question Q]
       [--docs ../shared/data/docs/clean] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from verifai_desktop.evaluate.selfcheck import collection_passages, run_self_check
from verifai_desktop.foreground import FOREGROUND
from verifai_desktop.pipeline import AskSession
from verifai_desktop.settings import load_settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.folders import delete_collection

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT.parent / "shared" / "data" / "docs" / "clean"
QUESTION = "What does SPECTER use citations for?"


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def cli_run(collection: str, question: str) -> tuple[float, float, float]:
    """``(first token s, answer total s, process wall s)`` of one ``verifai ask --json``."""
    t0 = time.perf_counter()
    command = [sys.executable, "-m", "verifai_desktop", "ask", question, "--json"]
    out = subprocess.run(
        [*command, "--collection", collection],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    timings = json.loads(out.stdout)["timings_ms"]
    return timings["first_token"] / 1000, timings["total"] / 1000, wall


def app_run(session: AskSession, collection: Collection, question: str) -> tuple[float, float]:
    """``(first token s, answer total s)`` of one question through the session, from its
    ``timings_ms`` as for the CLI."""
    llm = getattr(session.generator, "_llm", None)
    if llm is not None:
        llm.reset()  # a new question reads its whole prompt, as the CLI's does
    timings = session.ask(collection, question, on_token=lambda _piece: None).timings_ms
    return timings["first_token"] / 1000, timings["total"] / 1000


@contextlib.contextmanager
def background(session: AskSession, collection: Collection, docs: Path) -> Iterator[None]:
    """An ingest of ``docs`` into a scratch collection and a self-check of ``collection``,
    each on its own thread, for the ``with`` block (cancelled at its end)."""
    cancel = threading.Event()
    settings = session.settings
    scratch = f"busy-{os.getpid()}-{time.monotonic_ns()}"
    passages = collection_passages(collection)

    def ingest() -> None:
        with contextlib.suppress(Exception), Collection.create(scratch, settings=settings) as c:
            c.add_paths([docs], cancel=cancel)

    def self_check() -> None:
        with contextlib.suppress(Exception):
            while not cancel.is_set():
                run_self_check(session.verifier, passages, session.thresholds(), cancel=cancel)

    threads = [threading.Thread(target=f, daemon=True) for f in (ingest, self_check)]
    for t in threads:
        t.start()
    time.sleep(5)  # both under way before the question
    try:
        yield
    finally:
        cancel.set()
        for t in threads:
            t.join(120)
        with contextlib.suppress(Exception):
            delete_collection(scratch)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", required=True, help="an ingested collection to ask")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--docs", type=Path, default=DOCS, help="folder the background ingests")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load before: {_uptime()}", file=sys.stderr)
    rows: dict[str, list[tuple[float, float]]] = {}
    cli = [cli_run(args.collection, args.question) for _ in range(args.repeats)]
    settings = load_settings()
    session = AskSession(settings)
    with Collection.open(args.collection, settings=settings) as collection:
        app_run(session, collection, args.question)  # loads the models
        for name, gate, busy in (
            ("app, idle", True, False),
            ("app + ingest + self-check, no gate", False, True),
            ("app + ingest + self-check, gate", True, True),
        ):
            for _ in range(args.repeats):
                with contextlib.ExitStack() as stack:
                    if not gate:  # neither waiting turns nor suspending the parser process
                        stack.enter_context(
                            mock.patch.object(FOREGROUND, "wait_turn", return_value=0.0)
                        )
                        stack.enter_context(mock.patch.object(FOREGROUND, "hold"))
                    if busy:
                        stack.enter_context(background(session, collection, args.docs))
                    rows.setdefault(name, []).append(app_run(session, collection, args.question))
    cli_first = statistics.median(c[0] for c in cli)
    print(f"question: {args.question!r}, collection {args.collection!r}, {args.repeats} repeats\n")
    print("| run | first token s | answer s | first token / CLI's |")
    print("|---|---|---|---|")
    print(
        f"| CLI (process wall {statistics.median(c[2] for c in cli):.1f} s) | {cli_first:.1f} "
        f"| {statistics.median(c[1] for c in cli):.1f} | 1.00 |"
    )
    for name, runs in rows.items():
        first = statistics.median(r[0] for r in runs)
        print(
            f"| {name} | {first:.1f} | {statistics.median(r[1] for r in runs):.1f} "
            f"| {first / cli_first:.2f} |"
        )
    print(f"\nload after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
