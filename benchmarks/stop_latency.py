"""How long Stop takes to be heard, per stage of an answer, with the bundled models (issue 42).

Stages, each timed from ``cancel.set()`` to :class:`~verifai_desktop.errors.Cancelled` reaching
the caller (the answer task ends then):

* prompt reading (:func:`~verifai_desktop.generate.llama.read_prompt`, batches of 512 tokens),
  Stop looked at between batches only (before issue 42) and also inside a batch by llama.cpp's
  abort callback (:func:`~verifai_desktop.generate.llama.abort_on`), Stop pressed 0.3, 0.8 and
  1.3 s into the reading;
* writing (``LlamaGenerator.stream``), Stop after the fifth piece, with the tokens sampled
  after it;
* verification of about 320 (passage window, sentence) pairs by the ONNX verifier, as one
  ``classify`` call (before issue 42) and through
  :class:`~verifai_desktop.verify.stoppable.StoppableVerifier`, Stop 0.3 s in.

Prints one table per stage (medians of the repeats). The machine is shared: run it alone.

Usage: .venv/bin/python benchmarks/stop_latency.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from generate import passages_from
from llama_cpp import Llama

from verifai_desktop import modelstore
from verifai_desktop.domain import ChunkId, Passage
from verifai_desktop.errors import Cancelled
from verifai_desktop.generate.grammar import citation_grammar
from verifai_desktop.generate.llama import (
    LlamaGenerator,
    chat_prompt,
    read_prompt,
)
from verifai_desktop.generate.prompt import build_answer_prompt
from verifai_desktop.verify import nli
from verifai_desktop.verify.stoppable import StoppableVerifier

DOCS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "docs" / "clean"
DOC_NAMES = ("deep_rules_02_intro.md", "deep_rules_09_overfitting.md")
QUESTION = "Why should deep learning practitioners understand the basics of machine learning?"


def passages(k: int) -> list[Passage]:
    """The first ``k`` long paragraphs of the shared Deep Rules documents, as passages
    (:func:`generate.passages_from` per document, numbered on across them)."""
    out: list[Passage] = []
    for name in DOC_NAMES:
        for passage in passages_from(DOCS / name, k - len(out)):
            out.append(dataclasses.replace(passage, chunk_id=ChunkId(len(out) + 1)))
    return out


def stop_after(delay_s: float, run: Callable[[threading.Event], object]) -> float:
    """Seconds from ``cancel.set()`` (``delay_s`` after ``run`` starts) to ``run`` raising
    Cancelled; ``run``'s own end when it finished first (negative: it never heard it)."""
    cancel = threading.Event()
    set_at: list[float] = []

    def press() -> None:
        set_at.append(time.perf_counter())
        cancel.set()

    timer = threading.Timer(delay_s, press)
    timer.start()
    with contextlib.suppress(Cancelled):
        run(cancel)
    end = time.perf_counter()
    timer.cancel()
    return end - set_at[0] if set_at else -1.0


def read(llm: Llama, tokens: Sequence[int], cancel: threading.Event, *, abort: bool) -> None:
    """:func:`read_prompt`; without ``abort``, as before issue 42: Stop looked at between
    batches only."""
    if abort:
        read_prompt(llm, tokens, cancel=cancel)
        return
    for start in range(0, len(tokens), llm.n_batch):
        if cancel.is_set():
            raise Cancelled("generation")
        llm.eval(tokens[start : start + llm.n_batch])


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    generator = LlamaGenerator(modelstore.ensure_bundled_generator())
    found = passages(10)
    prompt = build_answer_prompt(
        QUESTION,
        found,
        count_tokens=generator.count_tokens,
        max_prompt_tokens=3000,
        passage_budget_tokens=1800,
    )
    llm = generator.load(generator.context_for(prompt.messages, 256))
    tokens = chat_prompt(llm, prompt.messages).tokens
    print(f"prompt: {len(tokens)} tokens, {len(prompt.passages)} passages, n_batch {llm.n_batch}")

    ways = (("the next batch of 512 tokens", False), ("llama.cpp's abort callback", True))
    print("\n| prompt reading, Stop heard by | reading speed, tokens/s (median) |")
    print("|---|---:|")
    for how, abort in ways:
        speeds = []
        for _ in range(args.repeats):
            llm.reset()  # type: ignore[no-untyped-call]
            t0 = time.perf_counter()
            read(llm, tokens, threading.Event(), abort=abort)
            speeds.append(len(tokens) / (time.perf_counter() - t0))
        print(f"| {how} | {median(speeds):.0f} |")

    print("\n| stage | Stop heard by | Stop to end, s (median) | max, s |")
    print("|---|---|---:|---:|")
    for how, abort in ways:
        waits = []
        for delay in (0.3, 0.8, 1.3)[: max(1, args.repeats)]:
            llm.reset()  # type: ignore[no-untyped-call]
            waits.append(stop_after(delay, lambda c, a=abort: read(llm, tokens, c, abort=a)))
        print(f"| prompt reading | {how} | {median(waits):.2f} | {max(waits):.2f} |")

    grammar = citation_grammar(len(prompt.passages), max_sentences=6)
    waits, after = [], []
    for _ in range(args.repeats):
        cancel = threading.Event()
        pressed = 0.0
        sampled = 0
        t_end = 0.0
        try:
            for n, _piece in enumerate(
                generator.stream(prompt.messages, grammar=grammar, cancel=cancel), start=1
            ):
                if n == 5:
                    sampled = generator.last_generated_tokens
                    pressed = time.perf_counter()
                    cancel.set()
        except Cancelled:
            t_end = time.perf_counter()
        if pressed:
            waits.append(t_end - pressed)
            after.append(generator.last_generated_tokens - sampled)
    print(
        f"| writing | the next sampled token ({median(after):.0f} sampled after Stop) | "
        f"{median(waits):.2f} | {max(waits):.2f} |"
    )

    verifier = nli.get_verifier(modelstore.BUNDLED_VERIFIER)
    verifier.load()
    windows = [
        (p.text[s:e], sentence)
        for p in found
        for s, e in p.sentence_spans
        for sentence in (QUESTION, "Deep learning needs large data sets.")
    ]
    pairs = (windows * (320 // max(1, len(windows)) + 1))[:320]
    rows = {
        "one classify call": lambda c: verifier.classify(pairs),
        "StoppableVerifier batches": lambda c: StoppableVerifier(lambda: verifier, c).classify(
            pairs
        ),
    }
    for how, run in rows.items():
        waits = [stop_after(0.3, run) for _ in range(args.repeats)]
        print(
            f"| verification, {len(pairs)} pairs | {how} | {median(waits):.2f} | {max(waits):.2f} |"
        )


if __name__ == "__main__":
    main()
