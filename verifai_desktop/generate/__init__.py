"""Generation stage: the Generator protocol, the llama.cpp generator, prompts and grammars,
and the choice of passages the generator reads (:mod:`.passages`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from verifai_desktop.domain import Progress
from verifai_desktop.errors import ModelLoadError
from verifai_desktop.generate.prompt import ChatMessage
from verifai_desktop.settings import ModelSettings


class Generator(Protocol):
    """A chat model that streams its reply, optionally under a GBNF grammar.

    A generator that reads the prompt in steps reports them to ``progress`` as stage
    ``"read"`` (prompt tokens read of all, before the first piece); one that does not may
    ignore ``progress``.
    """

    def count_tokens(self, text: str) -> int:
        """Number of model tokens in ``text``."""
        ...

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
        """Yield the reply to ``messages`` piece by piece."""
        ...


def uses_gpu(generator: Generator) -> bool:
    """Whether ``generator`` runs on a GPU (its ``gpu_offload`` attribute; False when it has
    none). Picks the prompt's passage budget (``GenerationSettings.passage_budget``)."""
    return bool(getattr(generator, "gpu_offload", False))


def _llama(path: Path, settings: ModelSettings, lora_path: Path | None) -> Generator:
    # Deferred on purpose: llama.py sets OMP_WAIT_POLICY for llama.cpp when first imported.
    from verifai_desktop.generate.llama import LlamaGenerator

    return LlamaGenerator(path, settings, lora_path=lora_path)


GeneratorFactory = Callable[[Path, ModelSettings, "Path | None"], Generator]

GENERATORS: dict[str, GeneratorFactory] = {".gguf": _llama}
"""Generator implementations by model file suffix."""


def make_generator(path: Path, settings: ModelSettings, lora_path: Path | None = None) -> Generator:
    """A generator for the model file at ``path`` (cheap: the model loads on first use).

    Raises:
        ModelLoadError: no implementation handles the file type.
    """
    factory = GENERATORS.get(path.suffix.lower())
    if factory is None:
        raise ModelLoadError(
            path, f"no generator reads {path.suffix or 'suffix-less'} files; use a GGUF"
        )
    return factory(path, settings, lora_path)


__all__ = ["GENERATORS", "ChatMessage", "Generator", "make_generator", "uses_gpu"]
