"""The llama.cpp generator (llama-cpp-python), with the chat template from the GGUF.

The model loads lazily on first use. The context is sized to the prompt (prompt tokens plus
``max_answer_tokens``, rounded up to 512, capped at ``settings.models.context_tokens``); the
model is re-created only when a larger context is needed. Decoding is greedy (temperature 0)
with a fixed seed, so an answer is reproducible.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifai_desktop.errors import Cancelled, GenerationError, ModelLoadError
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.settings import ModelSettings

if TYPE_CHECKING:
    from llama_cpp import Llama

log = logging.getLogger(__name__)

# llama.cpp's OpenMP threads spin while waiting by default; on a desktop whose cores are shared
# with the UI, the embedder and the verifier, spinning threads get descheduled and prompt
# evaluation runs at half speed (measured: 24 vs 46 tokens/s on 2 busy cores). Passive waiting
# must be chosen before libgomp loads, i.e. before llama_cpp is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SEED = 1234
CONTEXT_STEP_TOKENS = 512
TEMPLATE_OVERHEAD_TOKENS = 64  # chat-template markers around the messages


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


class LlamaGenerator:
    """A GGUF chat model run by llama.cpp; implements :class:`~verifai_desktop.generate.Generator`.

    Args:
        model_path: the GGUF file.
        settings: ``n_gpu_layers``, ``context_tokens``, ``max_answer_tokens``.
        lora_path: optional LoRA adapter (GGUF) applied on load.
        n_threads: CPU threads; llama.cpp's default when None.
    """

    def __init__(
        self,
        model_path: Path,
        settings: ModelSettings | None = None,
        *,
        lora_path: Path | None = None,
        n_threads: int | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.settings = settings or ModelSettings()
        self.lora_path = lora_path
        self.n_threads = n_threads
        self._llm: Llama | None = None
        self._n_ctx = 0
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
        if self.n_threads:
            kwargs["n_threads"] = self.n_threads
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
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        """Stream the model's reply to ``messages``, piece by piece.

        The chat template comes from the GGUF's metadata (llama-cpp-python picks it).

        Args:
            messages: system/user/assistant messages.
            grammar: GBNF text constraining the output (see :mod:`.grammar`), or None.
            max_tokens: answer token limit; ``settings.max_answer_tokens`` if None.
            temperature: 0 is greedy decoding.
            cancel: set to stop; raises :class:`~verifai_desktop.errors.Cancelled`.

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
            chunks = llm.create_chat_completion(
                messages=[m.as_dict() for m in messages],  # type: ignore[misc]
                stream=True,
                temperature=temperature,
                top_k=1 if temperature == 0 else 40,
                seed=SEED,
                max_tokens=max_tokens,
                grammar=compiled,
            )
            for chunk in chunks:
                if cancel is not None and cancel.is_set():
                    raise Cancelled("generation")
                delta = chunk["choices"][0]["delta"]  # type: ignore[index]
                piece = delta.get("content") if isinstance(delta, dict) else None
                if piece:
                    yield str(piece)
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
