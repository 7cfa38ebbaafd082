"""The app side of ``latency.py``: run in a worker process with the checkout under test.

:func:`app_worker` asks the question twice through the checkout's ``AskSession`` (the first
loads the models; before the second the KV cache is cleared), recording the time of every
progress report and streamed piece, then asks the same chat of raw llama-cpp-python in the
same process, and reads the model's shape for the compute bound. ``verifai_desktop`` and
``llama_cpp`` are imported inside the functions, so the worker uses the checkout on its
``PYTHONPATH``. ``latency.py`` describes every figure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any


def _perf(llm: Any) -> dict[str, float]:
    import llama_cpp

    data = llama_cpp.llama_perf_context(llm.ctx)
    return {
        "n_p_eval": float(data.n_p_eval),
        "t_p_eval_ms": float(data.t_p_eval_ms),
        "n_eval": float(data.n_eval),
        "t_eval_ms": float(data.t_eval_ms),
    }


def _reset_perf(llm: Any) -> None:
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llm.ctx)


def _timed_ask(session: Any, collection: Any, question: str) -> dict[str, Any]:
    """One ``AskSession.ask`` with the time of every progress report and piece."""
    marks: dict[str, float] = {}
    pieces: list[float] = []

    def progress(p: Any) -> None:
        now = time.perf_counter()
        if p.stage == "retrieve" and p.done == 1:
            marks.setdefault("retrieved", now)
        elif p.stage == "generate" and p.done == 0:
            marks.setdefault("generate_start", now)
        elif p.stage == "read":
            marks.setdefault("read_start", now)
            marks["read_end"] = now

    def on_token(_piece: str) -> None:
        pieces.append(time.perf_counter())

    t0 = time.perf_counter()
    answer = session.ask(collection, question, on_token=on_token, progress=progress)
    end = time.perf_counter()
    rel = {k: v - t0 for k, v in marks.items()}
    return {
        "marks_s": rel,
        "first_piece_s": pieces[0] - t0 if pieces else None,
        "last_piece_s": pieces[-1] - t0 if pieces else None,
        "pieces": len(pieces),
        "total_s": end - t0,
        "abstained": bool(answer.abstained),
        "timings_ms": dict(answer.timings_ms),
    }


def _raw_run(
    model_path: str, n_ctx: int, messages: Sequence[Any], grammar: str | None, max_tokens: int
) -> dict[str, Any]:
    """The same chat through llama-cpp-python alone, timed as the app is."""
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    llm = Llama(model_path=model_path, n_ctx=n_ctx, seed=1234, verbose=False)
    compiled = LlamaGrammar.from_string(grammar, verbose=False) if grammar else None
    _reset_perf(llm)
    pieces: list[float] = []
    t0 = time.perf_counter()
    for chunk in llm.create_chat_completion(
        messages=[{"role": m.role, "content": m.content} for m in messages],
        stream=True,
        temperature=0.0,
        top_k=1,
        seed=1234,
        max_tokens=max_tokens,
        grammar=compiled,
    ):
        delta = chunk["choices"][0]["delta"]  # type: ignore[index]
        if isinstance(delta, dict) and delta.get("content"):
            pieces.append(time.perf_counter())
    end = time.perf_counter()
    return {
        "first_piece_s": pieces[0] - t0 if pieces else None,
        "last_piece_s": pieces[-1] - t0 if pieces else None,
        "pieces": len(pieces),
        "total_s": end - t0,
        "perf": _perf(llm),
        "threads": [int(llm.n_threads), int(llm.n_threads_batch)],
    }


def _model_shape(llm: Any) -> dict[str, Any]:
    """Weights that take part in a matrix product per token, and the attention shape.

    From the GGUF's metadata for a llama-style block (attention Q, K, V, O with grouped K/V
    heads, a gated feed-forward of three matrices) plus the output head; the token-embedding
    table is a lookup, not a product, and is left out. Falls back to every parameter
    (``llama_model_n_params``) when the metadata lacks a field.
    """
    import llama_cpp

    meta = llm.metadata
    arch = meta.get("general.architecture", "")
    n_params = float(llama_cpp.llama_model_n_params(llm.model))
    n_layer = float(llama_cpp.llama_model_n_layer(llm.model))
    n_embd = float(llama_cpp.llama_model_n_embd(llm.model))
    try:
        heads = float(meta[f"{arch}.attention.head_count"])
        kv_heads = float(meta.get(f"{arch}.attention.head_count_kv", heads))
        n_ff = float(meta[f"{arch}.feed_forward_length"])
        kv_dim = n_embd * kv_heads / heads
        block = 2 * n_embd * n_embd + 2 * n_embd * kv_dim + 3 * n_embd * n_ff
        matmul = n_layer * block + float(llm.n_vocab()) * n_embd
        source = f"{arch} block shape from the GGUF metadata, embedding lookup left out"
    except (KeyError, ValueError):
        matmul, source = n_params, "llama_model_n_params (all weights)"
    return {
        "n_params": n_params,
        "matmul_params": matmul,
        "n_layer": n_layer,
        "n_embd": n_embd,
        "source": source,
    }


def app_worker(question: str, collection_name: str) -> dict[str, Any]:
    """Two questions through the checkout's ``AskSession``, then the raw run of the prompt."""
    import verifai_desktop
    from verifai_desktop.pipeline import AskSession
    from verifai_desktop.settings import load_settings
    from verifai_desktop.store.collection import Collection

    settings = load_settings()
    session = AskSession(settings)
    generator = session.generator
    captured: dict[str, Any] = {}
    stream = generator.stream

    def recording_stream(messages: Any, **kwargs: Any) -> Iterator[str]:
        captured["messages"] = tuple(messages)
        captured["grammar"] = kwargs.get("grammar")
        return stream(messages, **kwargs)

    generator.stream = recording_stream  # type: ignore[method-assign]
    with Collection.open(collection_name) as collection:
        first = _timed_ask(session, collection, question)
        llm = generator._llm  # type: ignore[attr-defined]
        if llm is None:
            raise SystemExit("the question was not answered (abstained?): no prompt to time")
        llm.reset()  # a new question reads its whole prompt
        _reset_perf(llm)
        warm = _timed_ask(session, collection, question)
        llm = generator._llm  # type: ignore[attr-defined]
        warm["perf"] = _perf(llm)
        warm["threads"] = [int(llm.n_threads), int(llm.n_threads_batch)]
        shape = _model_shape(llm)
        n_ctx = int(generator.n_ctx)  # type: ignore[attr-defined]
    raw = _raw_run(
        str(generator.model_path),  # type: ignore[attr-defined]
        n_ctx,
        captured["messages"],
        captured["grammar"],
        settings.models.max_answer_tokens,
    )
    return {
        "package": verifai_desktop.__file__,
        "first": first,
        "warm": warm,
        "raw": raw,
        "shape": shape,
        "n_ctx": n_ctx,
    }
