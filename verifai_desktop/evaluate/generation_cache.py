"""A generator that replays earlier replies to identical requests (evaluation only).

Used by :func:`verifai_desktop.evaluate.answers.evaluate_pubmedqa` so that re-running an
evaluation (another verifier, other thresholds) costs no generation.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from verifai_desktop.domain import Progress
from verifai_desktop.generate import Generator, uses_gpu
from verifai_desktop.generate.prompt import ChatMessage


class CachingGenerator:
    """A generator that replays earlier replies to identical requests (evaluation only).

    Decoding is greedy with a fixed seed, so a reply is a function of the model file, the
    messages, the grammar and the token limit; re-running an evaluation (e.g. with another
    verifier or thresholds) then costs no generation. Replies are kept with the wall times
    they took, which the report uses instead of the replay's near-zero time.

    Args:
        inner: the real generator.
        model_sha256: sha256 of the model file (part of the key).
        path: JSON file holding the cache.
    """

    def __init__(self, inner: Generator, model_sha256: str, path: Path) -> None:
        self.inner = inner
        self.model_sha256 = model_sha256
        self.path = path
        self.last: dict[str, float] | None = None
        try:
            self._cache: dict[str, dict[str, object]] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._cache = {}
        self.hits = 0

    def count_tokens(self, text: str) -> int:
        """Token count from the real model."""
        return self.inner.count_tokens(text)

    @property
    def gpu_offload(self) -> bool:
        """Whether the real model runs on a GPU (it picks the prompt's passage budget)."""
        return uses_gpu(self.inner)

    def _key(
        self, messages: Sequence[ChatMessage], grammar: str | None, max_tokens: int | None
    ) -> str:
        blob = json.dumps(
            [self.model_sha256, [m.as_dict() for m in messages], grammar, max_tokens],
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

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
        """Replay a cached reply (no prompt is read: no progress), or stream from the real
        model and remember it."""
        key = self._key(messages, grammar, max_tokens)
        hit = self._cache.get(key) if temperature == 0.0 else None
        if hit is not None:
            self.hits += 1
            self.last = {
                "generate": float(hit["generate_ms"]),  # type: ignore[arg-type]
                "first_token": float(hit["first_token_ms"]),  # type: ignore[arg-type]
            }
            yield str(hit["text"])
            return
        t0 = time.perf_counter()
        first: float | None = None
        pieces = []
        for piece in self.inner.stream(
            messages,
            grammar=grammar,
            max_tokens=max_tokens,
            temperature=temperature,
            progress=progress,
            cancel=cancel,
        ):
            if first is None:
                first = (time.perf_counter() - t0) * 1000
            pieces.append(piece)
            yield piece
        total = (time.perf_counter() - t0) * 1000
        self.last = {"generate": total, "first_token": first if first is not None else total}
        if temperature == 0.0:
            self._cache[key] = {
                "text": "".join(pieces),
                "generate_ms": total,
                "first_token_ms": self.last["first_token"],
            }
            self._save()

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._cache), encoding="utf-8")
        os.replace(tmp, self.path)
