"""Issue 40's bars in one run: `verifai ask`'s first token against raw llama-cpp-python loading
the same GGUF and reading a 1,600-token prompt, and its decode rate against raw decode on every
core.

Rows, interleaved ``--repeats`` times (medians), in one temporary ``VERIFAI_HOME`` holding
``--docs`` ingested once and a link to the bundled GGUF:

* ``raw llama-cpp-python``: a new Python process that imports ``llama_cpp``, loads the GGUF
  (the app's context size, one thread per physical core for reading and writing,
  :func:`~verifai_desktop.hardware.generator_threads`), reads a prompt of exactly 1,600 tokens
  (text of ``--docs``' Markdown and text files, cut by the model's tokenizer) and writes 64
  tokens greedily. First token: seconds from just before the process starts to its first
  streamed piece. Decode: (pieces - 1) / (last piece - first piece).
* ``verifai ask, passages whole (before)``: the README question as a whole process with stderr
  on a pseudo-terminal, as in a shell (``latency_process.terminal_process``), with
  ``generation.reading_sentences = 0`` and ``prompt_passage_tokens = 1500``: the reading
  budget before issue 40's item 2.
* ``verifai ask (shipped)``: the same with the shipped settings.

First token of `verifai ask` is the first answer text on the terminal (the progress display
excluded); decode = (tokens of the streamed text - 1) / (last token - first token), tokens by
the model's tokenizer. Prompt tokens come from ``verifai ask --json``, run once per setting.
Bars (issue 40): first token <= 0.6 x raw; decode >= 0.9 x raw. Load printed before and
after; take figures with nothing else running.

Usage: .venv/bin/python benchmarks/first_token.py [--repeats 3] [--docs DIR] [--question Q]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from latency_process import Checkout, run_checked, streamed_answer, terminal_process, verifai

from verifai_desktop import modelstore
from verifai_desktop.hardware import generator_threads
from verifai_desktop.settings import ModelSettings

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO.parent / "shared" / "data" / "docs" / "clean"
QUESTION = "What does SPECTER use citations for?"
COLLECTION = "first-token"
PROMPT_TOKENS = 1600
"""The raw reference's prompt, in tokens (issue 40)."""

RAW = r"""
import json, sys, time
t0 = time.perf_counter()
from llama_cpp import Llama
gguf, n_ctx, threads, prompt_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
llm = Llama(model_path=gguf, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
            verbose=False)
tokens = json.load(open(prompt_path))
times = []
for _ in llm.create_completion(tokens, max_tokens=64, temperature=0.0, stream=True):
    times.append(time.perf_counter())
    if len(times) == 1:
        print("FIRST", flush=True)
print(json.dumps({"pieces": len(times),
                  "decode": (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else None}))
"""


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def raw_prompt(gguf: Path, docs: Path, out: Path) -> None:
    """Write exactly :data:`PROMPT_TOKENS` token ids of ``docs``' plain texts to ``out``."""
    from llama_cpp import Llama

    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    text = "\n\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(docs.rglob("*"))
        if p.suffix in {".md", ".txt"}
    )
    tokens = vocab.tokenize(text.encode("utf-8"), add_bos=False)
    if len(tokens) < PROMPT_TOKENS:
        raise SystemExit(f"{docs}: {len(tokens)} tokens of text, {PROMPT_TOKENS} needed")
    out.write_text(json.dumps(tokens[:PROMPT_TOKENS]), encoding="utf-8")


def raw_run(gguf: Path, n_ctx: int, threads: int, prompt: Path) -> tuple[float, float | None]:
    """``(first token s from the process start, decode tokens/s)`` of raw llama-cpp-python."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", RAW, str(gguf), str(n_ctx), str(threads), str(prompt)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = None
    last = ""
    for line in proc.stdout:
        if line.startswith("FIRST") and first is None:
            first = time.perf_counter() - t0
        last = line
    if proc.wait() != 0 or first is None:
        raise SystemExit("raw llama-cpp-python run failed")
    return first, json.loads(last)["decode"]


def ask_run(checkout: Checkout, question: str, count: object) -> tuple[float, float | None]:
    """``(first token s, decode tokens/s)`` of one `verifai ask` on a terminal."""
    chunks, report, _total = terminal_process(
        verifai("ask", question, "--collection", COLLECTION), checkout
    )
    first, last, text = streamed_answer(chunks, report)
    if first is None:
        raise SystemExit("verifai ask streamed no answer")
    tokens = count(text)  # type: ignore[operator]
    decode = (tokens - 1) / (last - first) if last and tokens > 1 and last > first else None
    return first, decode


SETTINGS = {
    "verifai ask, passages whole (before)": (
        "[generation]\nreading_sentences = 0\nprompt_passage_tokens = 1500\n"
    ),
    "verifai ask (shipped)": "",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    from llama_cpp import Llama

    gguf = modelstore.ensure_bundled_generator().resolve()
    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False))

    threads = generator_threads()
    n_ctx = ModelSettings().context_tokens
    print(f"load before: {_uptime()}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="first-token-") as tmp:
        where = Path(tmp)
        checkout = Checkout("this tree", REPO, where / "home", where / "scratch")
        (checkout.home / "models").mkdir(parents=True)
        (checkout.home / "models" / gguf.name).symlink_to(gguf)
        checkout.scratch.mkdir()
        run_checked(verifai("ingest", str(args.docs), "--collection", COLLECTION), checkout, (0, 3))
        prompt = where / "prompt.json"
        raw_prompt(gguf, args.docs, prompt)
        settings_file = checkout.home / "settings.toml"
        prompt_tokens: dict[str, float] = {}
        for name, toml in SETTINGS.items():  # untimed: file cache, GGUF hash; prompt size
            settings_file.write_text(toml, encoding="utf-8")
            out = run_checked(
                verifai("ask", args.question, "--json", "--collection", COLLECTION), checkout
            )
            prompt_tokens[name] = json.loads(out)["timings_ms"]["prompt_tokens"]
        samples: dict[str, list[tuple[float, float | None]]] = {}
        for _ in range(args.repeats):
            samples.setdefault("raw", []).append(raw_run(gguf, n_ctx, threads, prompt))
            for name, toml in SETTINGS.items():
                settings_file.write_text(toml, encoding="utf-8")
                samples.setdefault(name, []).append(ask_run(checkout, args.question, count))
    raw_first = statistics.median(s[0] for s in samples["raw"])
    raw_decode = statistics.median(s[1] for s in samples["raw"] if s[1] is not None)
    print(
        f"question {args.question!r}, {args.repeats} repeats (medians), {threads} threads, "
        f"context {n_ctx}\n"
    )
    print("| run | prompt tokens | first token s | / raw | decode tokens/s | / raw |")
    print("|---|---|---|---|---|---|")
    print(
        f"| raw llama-cpp-python, load + {PROMPT_TOKENS}-token prompt | {PROMPT_TOKENS} "
        f"| {raw_first:.2f} | 1.00 | {raw_decode:.1f} | 1.00 |"
    )
    for name in SETTINGS:
        first = statistics.median(s[0] for s in samples[name])
        decodes = [s[1] for s in samples[name] if s[1] is not None]
        decode = statistics.median(decodes) if decodes else float("nan")
        print(
            f"| {name} | {prompt_tokens[name]:.0f} | {first:.2f} | {first / raw_first:.2f} "
            f"| {decode:.1f} | {decode / raw_decode:.2f} |"
        )
    print("\nbars: first token <= 0.60 x raw; decode >= 0.90 x raw")
    print(f"load after: {_uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
