"""A verifier that loads on first use and can be stopped between its batches.

One :meth:`~verifai_desktop.verify.check.Verifier.classify` call of an answer's checks can
hold hundreds of pairs (every sentence window of every passage given, then the candidates of
the collection-wide search for conflicts): seconds of ONNX Runtime work on a CPU. Stop must be
heard within a second (issue 42), so :class:`StoppableVerifier` hands the pairs to the real
verifier one of its batches at a time (its ``batch_size``, else :data:`STOP_BATCH_PAIRS`), and
checks the cancel event before each batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from verifai_desktop.errors import Cancelled
from verifai_desktop.verify.check import Verifier

STOP_BATCH_PAIRS = 32
"""Pairs per call of an inner verifier without a ``batch_size`` of its own: the default batch
of :class:`~verifai_desktop.verify.nli.OnnxVerifier`, one ONNX Runtime run (about 0.1-0.4 s on
two CPU cores)."""


class StoppableVerifier:
    """A :class:`~verifai_desktop.verify.check.Verifier` over ``get()``'s verifier, fetched at
    the first :meth:`load` or :meth:`classify` (an answer with nothing to verify never loads
    the model), that raises :class:`~verifai_desktop.errors.Cancelled` when ``cancel`` is set
    before one of its batches.

    Pairs that fit one batch are handed over as they are; more are classified in order of
    length (characters of premise and hypothesis), as the ONNX verifier orders them inside a
    call, so that each batch pads little. The rows are returned in the order of the pairs
    given.

    Args:
        get: returns the verifier (e.g. the ask session's, loaded on first use).
        cancel: checked before each batch; None: never stopped.
        batch_pairs: pairs per call of an inner verifier without a ``batch_size`` attribute
            (the ONNX verifier's: each call is then one ONNX Runtime run, and the batches stay
            the size they were).
    """

    def __init__(
        self,
        get: Callable[[], Verifier],
        cancel: threading.Event | None = None,
        *,
        batch_pairs: int = STOP_BATCH_PAIRS,
    ) -> None:
        if batch_pairs < 1:
            raise ValueError(f"batch_pairs must be 1 or more, not {batch_pairs}")
        self._get = get
        self._cancel = cancel
        self._batch = batch_pairs
        self.batches = 0
        """Calls made to the inner verifier so far."""

    def _check(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise Cancelled("verification")

    def load(self) -> None:
        """Load the inner verifier (:meth:`Verifier.load`)."""
        self._check()
        self._get().load()

    def classify(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """Probabilities as :meth:`Verifier.classify` gives them: float32, shape
        (len(pairs), 3), columns in :data:`~verifai_desktop.verify.check.LABEL_ORDER`.

        Raises:
            Cancelled: ``cancel`` was set before a batch.
        """
        self._check()
        if not pairs:
            return np.zeros((0, 3), dtype=np.float32)
        verifier = self._get()
        size = int(getattr(verifier, "batch_size", 0) or self._batch)
        if len(pairs) <= size:  # one batch: handed over as it is
            rows = np.asarray(verifier.classify(pairs), dtype=np.float32).reshape(-1, 3)
            self.batches += 1
            return rows
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        for start in range(0, len(order), size):
            self._check()
            idx = order[start : start + size]
            rows = verifier.classify([pairs[i] for i in idx])
            out[idx] = np.asarray(rows, dtype=np.float32).reshape(-1, 3)
            self.batches += 1
        return out
