"""The llama.cpp generator (llama-cpp-python), with the chat template from the GGUF.

The model loads lazily on first use. The context is sized to the prompt (prompt tokens plus
``max_answer_tokens``, rounded up to 512, capped at ``settings.models.context_tokens``); the
model is re-created only when a larger context is needed. Decoding is greedy (temperature 0)
with a fixed seed, so an answer is reproducible.

The prompt is read (prefilled) here, ``n_batch`` tokens at a time, so that reading, which on
a CPU takes most of the time to the first token, can be reported as progress and stopped
between batches. The reply is then sampled from the state the prompt left: llama-cpp-python's
``Llama.generate`` skips evaluation when the tokens it is given are exactly the tokens already
evaluated (``n_tokens == len(prompt)``, its "full prompt already cached" path), so the prompt
is read once. The start of the prompt that the previous reply left evaluated (the system
message, or all of a repeated question) is kept, as ``Llama.generate`` itself does.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifai_desktop.domain import Progress
from verifai_desktop.errors import Cancelled, GenerationError, ModelLoadError
from verifai_desktop.generate import lazy_grammar
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.hardware import generator_threads
from verifai_desktop.settings import ModelSettings

if TYPE_CHECKING:
    from llama_cpp import Llama, StoppingCriteriaList

log = logging.getLogger(__name__)

# llama.cpp's OpenMP threads spin while waiting by default; on a desktop whose cores are shared
# with the UI, the embedder and the verifier, spinning threads get descheduled and prompt
# evaluation runs at half speed (measured: 24 vs 46 tokens/s on 2 busy cores). Passive waiting
# must be chosen before libgomp loads, i.e. before llama_cpp is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SEED = 1234
CONTEXT_STEP_TOKENS = 512
TEMPLATE_OVERHEAD_TOKENS = 64  # chat-template markers around the messages
READ_STAGE = "read"
"""Progress stage of prompt reading: ``done``/``total`` prompt tokens evaluated."""


def round_context(needed_tokens: int, cap_tokens: int, step: int = CONTEXT_STEP_TOKENS) -> int:
    """Context size for ``needed_tokens``: rounded up to ``step``, at most ``cap_tokens``."""
    rounded = -(-max(needed_tokens, 1) // step) * step
    return min(rounded, cap_tokens)


def gpu_layers(requested: int) -> int:
    """``n_gpu_layers`` for llama.cpp: -1 means all layers if the build can offload, else 0."""
    if requested >= 0:
        return requested
    import llama_cpp

    return -1 if bool(llama_cpp.llama_supports_gpu_offload()) else 0


@dataclass(frozen=True, slots=True)
class ChatPrompt:
    """A chat rendered by the GGUF's chat template and tokenized as llama-cpp-python's
    ``create_chat_completion`` does it (special tokens parsed).

    Attributes:
        tokens: prompt token ids, in order.
        stop: stop strings of the template (its end-of-turn text).
        stopping_criteria: stops on the end-of-sequence token id, or None.
    """

    tokens: tuple[int, ...]
    stop: tuple[str, ...]
    stopping_criteria: StoppingCriteriaList | None


def chat_prompt(llm: Llama, messages: Sequence[ChatMessage]) -> ChatPrompt:
    """Render and tokenize ``messages`` the way ``Llama.create_chat_completion`` does.

    llama-cpp-python renders the GGUF's ``tokenizer.chat_template`` with a
    ``Jinja2ChatFormatter`` (eos/bos token texts from the vocabulary, stop on the eos id) and
    falls back to its ``llama-2`` format when the file has no template; the prompt is then
    tokenized with special tokens parsed and a BOS only if the template added none. Doing the
    same here gives the same tokens (``tests/unit/generate/test_prefill.py`` compares them with
    ``create_chat_completion``'s own prompt count and reply).
    """
    import llama_cpp
    from llama_cpp import llama_chat_format

    def token_text(token: int) -> str:
        if token == -1:
            return ""
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        return bytes(llama_cpp.llama_vocab_get_text(vocab, token)).decode("utf-8", "replace")

    dicts = [m.as_dict() for m in messages]
    template = llm.metadata.get("tokenizer.chat_template")
    if template:
        eos = llm.token_eos()
        formatter = llama_chat_format.Jinja2ChatFormatter(
            template=template,
            eos_token=token_text(eos),
            bos_token=token_text(llm.token_bos()),
            stop_token_ids=[eos],
        )
        result = formatter(messages=dicts)  # type: ignore[arg-type]
    else:
        result = llama_chat_format.format_llama2(messages=dicts)
    tokens = llm.tokenize(
        result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
    )
    stop = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
    return ChatPrompt(tuple(tokens), tuple(stop), result.stopping_criteria)


def _reusable_prefix(llm: Llama, tokens: Sequence[int]) -> int:
    """How many leading ``tokens`` the context already holds and may keep.

    At most ``len(tokens) - 1``: the last prompt token is always evaluated, since its logits
    pick the first reply token. 0 for recurrent or hybrid models, whose state cannot be cut
    back to a prefix (``Llama.generate`` makes the same choice).
    """
    import llama_cpp

    if llama_cpp.llama_model_is_recurrent(llm.model) or llama_cpp.llama_model_is_hybrid(llm.model):
        return 0
    cached = llm.input_ids[: llm.n_tokens]
    keep = 0
    for have, want in zip(cached, tokens, strict=False):
        if int(have) != want:
            break
        keep += 1
    return max(0, min(keep, len(tokens) - 1))


@contextmanager
def abort_on(llm: Llama, cancel: threading.Event | None) -> Iterator[None]:
    """While in the block, llama.cpp aborts the batch it is evaluating once ``cancel`` is set
    (``llama_set_abort_callback``; ``Llama.eval`` then raises ``RuntimeError``, see
    :func:`read_prompt`).

    A prompt batch of ``n_batch`` (512) tokens took up to 9 s on two busy CPU cores, and Stop
    must be heard within a second (issue 42): ggml looks at the callback after each node of the
    model's graph (hundreds a batch). The batches themselves stay as they were, so the numbers,
    and the reply, do not change. The callback is removed after the block: while the reply is
    sampled a token takes a fraction of a second, and Stop is heard between tokens
    (:func:`stop_on_cancel`).
    """
    if cancel is None:
        yield
        return
    import llama_cpp

    callback = llama_cpp.ggml_abort_callback(lambda _data: cancel.is_set())
    llama_cpp.llama_set_abort_callback(llm.ctx, callback, None)
    try:
        yield
    finally:
        llama_cpp.llama_set_abort_callback(llm.ctx, llama_cpp.ggml_abort_callback(), None)


def read_prompt(
    llm: Llama,
    tokens: Sequence[int],
    *,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> None:
    """Evaluate the prompt ``tokens`` into ``llm``'s context, ``llm.n_batch`` at a time.

    The longest prefix the context already holds is kept (:func:`_reusable_prefix`); the
    rest is evaluated in batches of ``n_batch`` tokens (llama.cpp's own prompt batch size, so
    the work is the same as one ``Llama.eval`` call). Afterwards ``llm.n_tokens ==
    len(tokens)`` and a completion of exactly ``tokens`` samples at once.

    Args:
        llm: the loaded model.
        tokens: the prompt, as from :func:`chat_prompt`.
        progress: called with ``Progress("read", done, len(tokens), "tokens")`` before the
            first batch (``done`` = tokens kept) and after each batch.
        cancel: checked before each batch, and inside it by llama.cpp (:func:`abort_on`): the
            batch being read when it is set is dropped (``llm.n_tokens`` stays where the
            batches before left it); raises :class:`~verifai_desktop.errors.Cancelled`.
    """
    total = len(tokens)
    keep = _reusable_prefix(llm, tokens)
    if keep == 0:
        llm.reset()  # type: ignore[no-untyped-call]  # llama-cpp-python leaves it unannotated
    else:
        llm.n_tokens = keep  # Llama.eval drops the context's cells from n_tokens on
    if progress:
        progress(Progress(READ_STAGE, keep, total, "tokens"))
    with abort_on(llm, cancel):
        for start in range(keep, total, llm.n_batch):
            if cancel is not None and cancel.is_set():
                raise Cancelled("generation")
            try:
                llm.eval(tokens[start : start + llm.n_batch])
            except RuntimeError:
                # llama_decode returned 2 (aborted): the batch's cells were dropped, and
                # n_tokens was not moved on
                if cancel is not None and cancel.is_set():
                    raise Cancelled("generation") from None
                raise
            if progress:
                progress(Progress(READ_STAGE, llm.n_tokens, total, "tokens"))


def stop_on_cancel(
    criteria: StoppingCriteriaList | None, cancel: threading.Event | None
) -> StoppingCriteriaList | None:
    """``criteria`` plus one that ends the reply once ``cancel`` is set.

    llama-cpp-python looks at its stopping criteria after every sampled token, while a
    streamed chunk can hold several tokens (text held back while it may begin a stop string):
    with this criterion no token is sampled after Stop but the one being sampled.
    """
    if cancel is None:
        return criteria
    from llama_cpp import StoppingCriteriaList

    def cancelled(_ids: Any, _logits: Any) -> bool:
        return cancel.is_set()

    return StoppingCriteriaList([*(criteria or []), cancelled])


class LlamaGenerator:
    """A GGUF chat model run by llama.cpp; implements :class:`~verifai_desktop.generate.Generator`.

    Args:
        model_path: the GGUF file.
        settings: ``n_gpu_layers``, ``context_tokens``, ``max_answer_tokens``.
        lora_path: optional LoRA adapter (GGUF) applied on load.
        n_threads: CPU threads; ``settings.n_threads`` when None (0 there: the physical
            cores, :func:`~verifai_desktop.hardware.generator_threads`).
        n_batch: prompt tokens evaluated per batch (one progress report each); llama.cpp's
            default (512) when None.
    """

    def __init__(
        self,
        model_path: Path,
        settings: ModelSettings | None = None,
        *,
        lora_path: Path | None = None,
        n_threads: int | None = None,
        n_batch: int | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.settings = settings or ModelSettings()
        self.lora_path = lora_path
        self.n_threads = n_threads
        self.n_batch = n_batch
        self._llm: Llama | None = None
        self._n_ctx = 0
        self.last_prompt_tokens = 0
        """Tokens of the last prompt read, chat template included."""
        self.last_generated_tokens = 0
        """Tokens the last reply sampled (so far, while it streams)."""
        self._lock = threading.Lock()

    # -- loading --------------------------------------------------------------------------

    def _load(self, n_ctx: int) -> Llama:
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - dependency missing
            raise ModelLoadError(self.model_path, "llama-cpp-python is not installed") from exc
        if not self.model_path.is_file():
            raise ModelLoadError(self.model_path, "the file does not exist")
        kwargs: dict[str, Any] = {
            "model_path": str(self.model_path),
            "n_ctx": n_ctx,
            "n_gpu_layers": gpu_layers(self.settings.n_gpu_layers),
            "seed": SEED,
            "verbose": False,
        }
        kwargs["n_threads"] = self.n_threads or generator_threads(self.settings.n_threads)
        if self.n_batch:
            kwargs["n_batch"] = self.n_batch
        if self.lora_path is not None:
            kwargs["lora_path"] = str(self.lora_path)
        log.info(
            "loading %s (n_ctx=%d, n_gpu_layers=%s)",
            self.model_path.name,
            n_ctx,
            kwargs["n_gpu_layers"],
        )
        try:
            llm = Llama(**kwargs)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelLoadError(self.model_path, f"llama.cpp cannot load it ({exc})") from exc
        lazy_grammar.install(llm)  # the citation grammar checked on the best token first
        self._n_ctx = n_ctx
        return llm

    def load(self, n_ctx: int | None = None) -> Llama:
        """Load (or re-create with a larger context) the model; returns the ``Llama``."""
        want = n_ctx or min(2048, self.settings.context_tokens)
        with self._lock:
            if self._llm is None or want > self._n_ctx:
                self._llm = None  # free the old context before allocating a new one
                self._llm = self._load(want)
            return self._llm

    @property
    def gpu_offload(self) -> bool:
        """Whether llama.cpp runs layers on a GPU: ``n_gpu_layers`` is positive, or -1 with a
        build that can offload (:func:`gpu_layers`). Imports llama_cpp; loads no model."""
        return gpu_layers(self.settings.n_gpu_layers) != 0

    @property
    def n_ctx(self) -> int:
        """Current context size in tokens (0 before the model is loaded)."""
        return self._n_ctx

    # -- tokens ---------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        """Number of model tokens in ``text`` (no BOS)."""
        llm = self.load()
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def context_for(self, messages: Sequence[ChatMessage], max_tokens: int) -> int:
        """Context size that fits ``messages`` plus ``max_tokens`` of answer."""
        prompt_tokens = (
            sum(self.count_tokens(m.content) + 8 for m in messages) + TEMPLATE_OVERHEAD_TOKENS
        )
        return round_context(prompt_tokens + max_tokens, self.settings.context_tokens)

    # -- generation -----------------------------------------------------------------------

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        grammar: str | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        """Stream the model's reply to ``messages``, piece by piece.

        The chat template comes from the GGUF's metadata (:func:`chat_prompt`). The prompt is
        read first, in batches, with progress (:func:`read_prompt`); the reply is then
        sampled from that state without reading the prompt again.

        Args:
            messages: system/user/assistant messages.
            grammar: GBNF text constraining the output (see :mod:`.grammar`), or None.
            max_tokens: answer token limit; ``settings.max_answer_tokens`` if None.
            temperature: 0 is greedy decoding.
            progress: prompt reading reports, stage ``"read"`` (prompt tokens read of all).
            cancel: set to stop, heard while the prompt is read
                (:func:`abort_on`) and after every sampled token; raises
                :class:`~verifai_desktop.errors.Cancelled`.

        Yields:
            Text pieces in order; their concatenation is the reply.

        Raises:
            GenerationError: llama.cpp failed, or the prompt does not fit the context cap.
            Cancelled: ``cancel`` was set.
        """
        from llama_cpp.llama_grammar import LlamaGrammar

        max_tokens = max_tokens or self.settings.max_answer_tokens
        n_ctx = self.context_for(messages, max_tokens)
        llm = self.load(n_ctx)
        compiled = LlamaGrammar.from_string(grammar, verbose=False) if grammar else None
        try:
            prompt = chat_prompt(llm, messages)
            if len(prompt.tokens) >= llm.n_ctx():
                raise ValueError(
                    f"the prompt has {len(prompt.tokens)} tokens, the context {llm.n_ctx()}"
                )
            self.last_prompt_tokens = len(prompt.tokens)
            self.last_generated_tokens = 0
            read_prompt(llm, prompt.tokens, progress=progress, cancel=cancel)
            chunks = llm.create_completion(
                prompt=list(prompt.tokens),
                stream=True,
                temperature=temperature,
                top_k=1 if temperature == 0 else 40,
                seed=SEED,
                max_tokens=max_tokens,
                stop=list(prompt.stop),
                stopping_criteria=stop_on_cancel(prompt.stopping_criteria, cancel),
                grammar=compiled,
            )
            for chunk in chunks:
                if cancel is not None and cancel.is_set():
                    raise Cancelled("generation")
                piece = chunk["choices"][0]["text"]  # type: ignore[index]
                self.last_generated_tokens += 1  # llama-cpp-python streams one token a chunk
                if piece:
                    yield str(piece)
            if cancel is not None and cancel.is_set():
                raise Cancelled("generation")  # stopped by stop_on_cancel
        except (Cancelled, GenerationError):
            raise
        except (ValueError, RuntimeError) as exc:
            raise GenerationError(
                f"{self.model_path.name} failed while generating ({exc}); "
                "try fewer passages (-k) or a larger models.context_tokens"
            ) from exc

    def complete(self, messages: Sequence[ChatMessage], **kwargs: Any) -> str:
        """The whole reply as one string (see :meth:`stream` for the arguments)."""
        return "".join(self.stream(messages, **kwargs))
