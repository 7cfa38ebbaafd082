"""Prompt reading with progress, on the real bundled GGUF (Qwen2.5-Coder-0.5B, small context).

The generator evaluates the prompt itself, ``n_batch`` tokens at a time, then samples from that
state. Every ``Llama.eval`` call is counted: the prompt's tokens go through it once, in the
reported batches, and generation afterwards feeds one token at a time. The reply must be the
reply of a plain ``create_chat_completion`` of the same chat (greedy, same grammar).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator, Sequence

import pytest
from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from verifai_desktop import modelstore
from verifai_desktop.domain import Progress
from verifai_desktop.errors import Cancelled
from verifai_desktop.generate.grammar import citation_grammar
from verifai_desktop.generate.llama import READ_STAGE, SEED, LlamaGenerator
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.settings import ModelSettings

N_BATCH = 32
MAX_TOKENS = 40
MESSAGES = (
    ChatMessage("system", "Answer from the numbered passages only; cite each sentence as [n]."),
    ChatMessage(
        "user",
        "[1] Overfitting is when a model learns the noise in its training data: the error on "
        "a held-out validation set rises while the training error keeps falling.\n"
        "[2] Weight decay and dropout reduce overfitting.\n\n"
        "Question: How is overfitting detected?",
    ),
)
GRAMMAR = citation_grammar(2, max_sentences=2)


@pytest.fixture(scope="module")
def generator() -> LlamaGenerator:
    settings = ModelSettings(context_tokens=512, max_answer_tokens=MAX_TOKENS)
    path = modelstore.ensure_bundled_generator()
    return LlamaGenerator(path, settings, n_threads=2, n_batch=N_BATCH)


@pytest.fixture
def evals(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of tokens of every ``Llama.eval`` call, in order."""
    calls: list[int] = []
    real = Llama.eval

    def counted(self: Llama, tokens: Sequence[int]) -> None:
        calls.append(len(tokens))
        real(self, tokens)

    monkeypatch.setattr(Llama, "eval", counted)
    return calls


@pytest.fixture(scope="module")
def plain(generator: LlamaGenerator) -> tuple[str, int]:
    """(reply, prompt tokens) of llama-cpp-python's own chat completion from an empty cache."""
    llm = generator.load()
    llm.reset()
    out = llm.create_chat_completion(
        messages=[m.as_dict() for m in MESSAGES],  # type: ignore[misc]
        temperature=0.0,
        top_k=1,
        seed=SEED,
        max_tokens=MAX_TOKENS,
        grammar=LlamaGrammar.from_string(GRAMMAR, verbose=False),
    )
    return str(out["choices"][0]["message"]["content"]), int(out["usage"]["prompt_tokens"])  # type: ignore[index]


def _stream(
    generator: LlamaGenerator, reports: list[Progress], cancel: threading.Event | None = None
) -> Iterator[str]:
    return generator.stream(MESSAGES, grammar=GRAMMAR, progress=reports.append, cancel=cancel)


def test_prompt_is_read_once_in_reported_batches_then_the_plain_reply_streams(
    generator: LlamaGenerator, plain: tuple[str, int], evals: list[int]
) -> None:
    reply, prompt_tokens = plain
    assert prompt_tokens > 2 * N_BATCH  # several batches
    generator.load().reset()
    evals.clear()
    reports: list[Progress] = []

    pieces = list(_stream(generator, reports))

    assert "".join(pieces) == reply
    assert re.match(r"[^\[\]]+\. \[[12]\]", reply)  # a sentence cited under the grammar
    assert {(p.stage, p.total, p.unit) for p in reports} == {(READ_STAGE, prompt_tokens, "tokens")}
    done = [p.done for p in reports]
    assert done == [*range(0, prompt_tokens, N_BATCH), prompt_tokens]
    # Prompt tokens went through eval once, in those batches; after them one token per call
    # (the sampled token; the first call is generate's empty "prompt already evaluated").
    batches = len(done) - 1
    assert evals[:batches] == [b - a for a, b in itertools.pairwise(done)]
    assert sum(evals[:batches]) == prompt_tokens
    assert evals[batches] == 0 and set(evals[batches + 1 :]) == {1}

    # The same chat again keeps the evaluated prompt: only its last token is read again.
    reports.clear()
    evals.clear()
    assert "".join(_stream(generator, reports)) == reply
    assert [p.done for p in reports] == [prompt_tokens - 1, prompt_tokens]
    assert evals[0] == 1 and max(evals) == 1


def test_cancel_stops_between_batches_and_the_next_reply_reads_on(
    generator: LlamaGenerator, plain: tuple[str, int], evals: list[int]
) -> None:
    generator.load().reset()
    cancel = threading.Event()
    reports: list[Progress] = []

    def stop_after_first_batch(p: Progress) -> None:
        reports.append(p)
        if p.done >= N_BATCH:
            cancel.set()

    pieces: list[str] = []
    with pytest.raises(Cancelled):
        for piece in generator.stream(
            MESSAGES, grammar=GRAMMAR, progress=stop_after_first_batch, cancel=cancel
        ):
            pieces.append(piece)
    assert pieces == [] and evals == [N_BATCH] and generator.load().n_tokens == N_BATCH
    assert [p.done for p in reports] == [0, N_BATCH]

    reports.clear()
    reply = "".join(_stream(generator, reports))
    assert reports[0].done == N_BATCH  # what was read before the cancel is kept
    assert reply == plain[0]
