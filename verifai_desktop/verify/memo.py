"""A verifier that classifies each (premise, hypothesis) pair once.

Evidence-aware reranking (:mod:`verifai_desktop.rerank`) scores a query against the sentence
windows of its candidate passages through :func:`~verifai_desktop.verify.check.verify_pairs`;
a claim check then verifies the same claim against the same windows. Both go through one
:class:`MemoVerifier` for the length of a request, so no pair is classified twice.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.verify.check import Verifier


class MemoVerifier:
    """A :class:`~verifai_desktop.verify.check.Verifier` memoising ``inner`` per pair.

    Attributes:
        inner: the verifier that classifies pairs not seen before.
        classified: pairs ``inner`` was asked to classify so far (each unseen pair once).
        reused: pairs answered from the memo.
    """

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.classified = 0
        self.reused = 0
        self._memo: dict[tuple[str, str], NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the inner verifier (:meth:`Verifier.load`)."""
        self.inner.load()

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Probabilities as :meth:`Verifier.classify` gives them: float32, shape
        (len(pairs), 3); pairs seen before are not classified again, new ones in one call."""
        with self._lock:
            todo = [p for p in dict.fromkeys(pairs) if p not in self._memo]
            if todo:
                rows = np.asarray(self.inner.classify(todo), dtype=np.float32).reshape(-1, 3)
                self._memo.update(zip(todo, rows, strict=True))
            self.classified += len(todo)
            self.reused += len(pairs) - len(todo)
            return np.asarray([self._memo[p] for p in pairs], dtype=np.float32).reshape(-1, 3)
