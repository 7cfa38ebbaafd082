"""A fake embedder behind the Embedder protocol, for control-flow unit tests only."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

FAKE_NAME = "fake-hash-embedder"


class HashEmbedder:
    """Bag-of-words hashed into 64 dimensions, L2-normalised (control-flow tests only)."""

    name = FAKE_NAME
    dim = 64
    max_tokens = 32

    def __init__(self) -> None:
        self.calls = 0

    def load(self) -> None:
        """Nothing to load."""

    def _words(self, text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in self._words(text):
                h = int(hashlib.md5(word.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0
            norm = float(np.linalg.norm(out[i]))
            out[i] = out[i] / norm if norm else out[i]
        return out

    def count_tokens(self, text: str) -> int:
        return len(self._words(text))

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count_tokens(t) for t in texts]
