"""The citation grammar checked on the best token first (issue 40): the same replies as the
grammar applied to every candidate, with the bundled generator (real model; timing is for
``benchmarks/first_token.py``)."""

from __future__ import annotations

import pytest
from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from verifai_desktop import modelstore
from verifai_desktop.generate import lazy_grammar
from verifai_desktop.generate.grammar import citation_grammar

PROMPTS = (
    "Write five sentences about cats, each ending with [1].",
    "Passages:\n[1] Aspirin lowers fever.\n[2] Cats sleep 16 hours a day.\n"
    "Question: How long do cats sleep?",
)


def _replies(llm: Llama) -> list[str]:
    out = []
    for text in PROMPTS:
        prompt = f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n".encode()
        grammar = LlamaGrammar.from_string(citation_grammar(2, max_sentences=6), verbose=False)
        llm.reset()
        reply = llm.create_completion(
            llm.tokenize(prompt), max_tokens=80, temperature=0.0, top_k=1, grammar=grammar
        )
        out.append(reply["choices"][0]["text"])  # type: ignore[index]
    return out


@pytest.fixture(scope="module")
def gguf() -> str:
    return str(modelstore.ensure_bundled_generator().resolve())


def test_lazy_grammar_gives_the_replies_of_the_full_grammar(gguf: str) -> None:
    full = Llama(model_path=gguf, n_ctx=1024, n_threads=2, verbose=False)
    lazy = Llama(model_path=gguf, n_ctx=1024, n_threads=2, verbose=False)
    lazy_grammar.install(lazy)
    expected = _replies(full)
    assert _replies(lazy) == expected
    assert all("[1]" in r or "[2]" in r for r in expected)  # the grammar was in force


def test_sampling_without_a_grammar_or_with_temperature_is_untouched(gguf: str) -> None:
    llm = Llama(model_path=gguf, n_ctx=512, n_threads=2, verbose=False)
    original = Llama._init_sampler
    lazy_grammar.install(llm)
    chain = llm._init_sampler(temp=0.7, grammar=None)
    assert not chain.custom_samplers
    grammar = LlamaGrammar.from_string(citation_grammar(2, max_sentences=2), verbose=False)
    assert llm._init_sampler(temp=0.0, grammar=grammar).custom_samplers  # the lazy step
    assert Llama._init_sampler is original  # only this model's sampling changed
