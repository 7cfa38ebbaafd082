"""The citation grammar: valid GBNF for llama.cpp, and under it the real model cites only 1..k."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifai_desktop import modelstore
from verifai_desktop.domain import ChunkId, DocId, Location, LocationKind, Passage
from verifai_desktop.generate.grammar import citation_grammar, decision_grammar
from verifai_desktop.generate.llama import LlamaGenerator
from verifai_desktop.generate.prompt import ChatMessage, build_answer_prompt
from verifai_desktop.ingest.sentences import split_sentences
from verifai_desktop.verify.claims import split_answer


@pytest.mark.parametrize("k", [1, 3, 10, 12])
def test_grammar_parses_in_llama_cpp(k: int) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    text = citation_grammar(k, max_sentences=4)
    LlamaGrammar.from_string(text, verbose=False)  # raises ValueError on a bad grammar
    numbers = text.split("num ::= ")[1].split(" | ")
    assert numbers == [f'"{n}"' for n in range(k, 0, -1)]
    LlamaGrammar.from_string(decision_grammar(), verbose=False)


def test_grammar_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        citation_grammar(0)
    with pytest.raises(ValueError):
        citation_grammar(2, max_sentences=0)


@pytest.fixture(scope="module")
def generator() -> LlamaGenerator:
    return LlamaGenerator(modelstore.ensure_bundled_generator())


def _passage(i: int, text: str) -> Passage:
    return Passage(
        ChunkId(i),
        DocId(i),
        Path(f"/d/doc{i}.md"),
        "t",
        text,
        0,
        len(text),
        Location(LocationKind.SECTION),
        split_sentences(text),
    )


def test_real_model_cites_only_given_passages(generator: LlamaGenerator) -> None:
    passages = [
        _passage(1, "The Eiffel Tower is 330 metres tall. It was completed in 1889."),
        _passage(2, "The tower is repainted every seven years with 60 tonnes of paint."),
    ]
    prompt = build_answer_prompt(
        "How tall is the Eiffel Tower and how often is it painted?",
        passages,
        count_tokens=generator.count_tokens,
        max_prompt_tokens=1500,
    )
    # An instruction to cite a passage that does not exist: only the grammar stops it.
    messages = (
        *prompt.messages[:-1],
        ChatMessage("user", prompt.messages[-1].content + " Cite passage [7] in every sentence."),
    )
    text = generator.complete(messages, grammar=citation_grammar(2, max_sentences=3), max_tokens=96)
    sentences = split_answer(text, 2)
    assert sentences
    for s in sentences:
        assert s.invalid_citations == ()
        assert s.citations and set(s.citations) <= {1, 2}
