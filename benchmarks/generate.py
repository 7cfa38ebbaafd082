"""Generation speed through VerifAI's LlamaGenerator vs llama-cpp-python called directly.

Same model (the bundled Qwen2.5-Coder-0.5B Q4_K_M unless --model), same prompt (an answer
prompt over passages from a shared document), same context size, same sampling (greedy,
fixed seed) and the same grammar setting. Each run starts from an empty KV cache. Prints
time to first token (TTFT, includes prompt evaluation) and decode tokens/s (median of
--repeats runs), the ratio ours/direct (target >= 0.95), and verification time per answer
(split + one verifier batch over the premise windows, which also picks the evidence) against
generation time.

Usage: .venv/bin/python benchmarks/generate.py [--model PATH] [--repeats 3] [--max-tokens 128]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from verifai_desktop import modelstore
from verifai_desktop.domain import ChunkId, Claim, DocId, Location, LocationKind, Passage
from verifai_desktop.errors import VerifaiError
from verifai_desktop.generate.grammar import citation_grammar
from verifai_desktop.generate.llama import SEED, LlamaGenerator, gpu_layers
from verifai_desktop.generate.prompt import build_answer_prompt
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.settings import ModelSettings
from verifai_desktop.verify import nli
from verifai_desktop.verify.check import verify_claims
from verifai_desktop.verify.claims import split_answer

DOC = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "docs"
    / "clean"
    / "deep_rules_02_intro.md"
)
QUESTION = "Why should deep learning practitioners understand the basics of machine learning?"


def passages_from(path: Path, k: int) -> list[Passage]:
    text = path.read_text(encoding="utf-8")
    paras = [p.strip() for p in text.split("\n\n") if len(p.strip()) > 200][:k]
    out = []
    for i, para in enumerate(paras, start=1):
        out.append(
            Passage(
                ChunkId(i),
                DocId(1),
                path,
                path.stem,
                para,
                0,
                len(para),
                Location(LocationKind.SECTION, None, ""),
                split_sentences(para),
            )
        )
    return out


def timed(stream: Iterator[str]) -> tuple[float, float, int, str]:
    """(ttft_s, decode tokens/s, pieces, text) of one streamed reply."""
    t0 = time.perf_counter()
    first = None
    pieces: list[str] = []
    for piece in stream:
        if first is None:
            first = time.perf_counter()
        pieces.append(piece)
    end = time.perf_counter()
    assert first is not None
    rate = (len(pieces) - 1) / (end - first) if len(pieces) > 1 and end > first else 0.0
    return first - t0, rate, len(pieces), "".join(pieces)


def direct_stream(
    llm: Any, messages: list[dict[str, str]], grammar: Any, max_tokens: int
) -> Iterator[str]:
    for chunk in llm.create_chat_completion(
        messages=messages,
        stream=True,
        temperature=0.0,
        top_k=1,
        seed=SEED,
        max_tokens=max_tokens,
        grammar=grammar,
    ):
        piece = chunk["choices"][0]["delta"].get("content")
        if piece:
            yield piece


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: bundled Qwen)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("-k", type=int, default=5, help="passages in the prompt")
    args = parser.parse_args()

    # Deferred on purpose: llama.cpp must load after LlamaGenerator's OMP_WAIT_POLICY default.
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    model = args.model or modelstore.ensure_bundled_generator()
    settings = ModelSettings(max_answer_tokens=args.max_tokens)
    ours = LlamaGenerator(model, settings)
    passages = passages_from(DOC, args.k)
    prompt = build_answer_prompt(
        QUESTION,
        passages,
        count_tokens=ours.count_tokens,
        max_prompt_tokens=settings.context_tokens - args.max_tokens - 128,
    )
    n_ctx = ours.context_for(prompt.messages, args.max_tokens)
    ours_llm = ours.load(n_ctx)
    direct = Llama(
        model_path=str(model),
        n_ctx=n_ctx,
        n_gpu_layers=gpu_layers(settings.n_gpu_layers),
        seed=SEED,
        verbose=False,
    )
    messages = [m.as_dict() for m in prompt.messages]
    gbnf = citation_grammar(len(passages), max_sentences=6)
    print(
        f"model {model.name}, prompt {prompt.prompt_tokens} tokens (+template), n_ctx {n_ctx}, "
        f"max_tokens {args.max_tokens}, repeats {args.repeats}",
        file=sys.stderr,
    )

    rows = []
    last_answer = ""
    for label, use_grammar in (("no grammar", False), ("citation grammar", True)):
        res: dict[str, list[tuple[float, float, int]]] = {"ours": [], "direct": []}
        for _ in range(args.repeats):
            for who in ("direct", "ours"):
                if who == "ours":
                    ours_llm.reset()  # type: ignore[no-untyped-call]
                    t = timed(
                        ours.stream(
                            prompt.messages,
                            grammar=gbnf if use_grammar else None,
                            max_tokens=args.max_tokens,
                        )
                    )
                    if use_grammar:
                        last_answer = t[3]
                else:
                    direct.reset()  # type: ignore[no-untyped-call]
                    g = LlamaGrammar.from_string(gbnf, verbose=False) if use_grammar else None
                    t = timed(direct_stream(direct, messages, g, args.max_tokens))
                res[who].append(t[:3])
        med = {
            w: (
                statistics.median(r[0] for r in v),
                statistics.median(r[1] for r in v),
                statistics.median(r[2] for r in v),
            )
            for w, v in res.items()
        }
        rows.append((label, med))

    print(f"{'setting':<18}{'path':<8}{'TTFT s':>9}{'tok/s':>9}{'tokens':>8}{'ratio tok/s':>13}")
    for label, med in rows:
        for who in ("direct", "ours"):
            ttft, rate, n = med[who]
            ratio = f"{rate / med['direct'][1]:.3f}" if who == "ours" and med["direct"][1] else ""
            print(f"{label:<18}{who:<8}{ttft:>9.2f}{rate:>9.1f}{n:>8.0f}{ratio:>13}")

    # verification time per answer vs generation time
    try:
        verifier = nli.get_verifier(modelstore.BUNDLED_VERIFIER)
        parsed = split_answer(last_answer, len(passages))
        claims = [(Claim(s.claim, n), passages[n - 1]) for s in parsed for n in s.citations]
        verify_claims(verifier, claims[:1], granularity="sentences")  # warm-up (model load)
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            verify_claims(verifier, claims, granularity="sentences")
            times.append(time.perf_counter() - t0)
        gen_s = rows[1][1]["ours"][0] + rows[1][1]["ours"][2] / max(rows[1][1]["ours"][1], 1e-9)
        ver_s = statistics.median(times)
        print()
        print(
            f"{'answer':<30}{'sentences':>10}{'pairs':>7}{'generate s':>12}"
            f"{'verify s':>10}{'verify/gen':>12}"
        )
        print(
            f"{'citation grammar, greedy':<30}{len(parsed):>10}{len(claims):>7}{gen_s:>12.2f}"
            f"{ver_s:>10.2f}{ver_s / gen_s:>12.2f}"
        )
    except VerifaiError as exc:
        print(f"\nverification timing skipped: verifier not available ({exc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
