"""Raw verifier logits memoised per (premise, hypothesis), on disk in ``OUT/logits_cache.pkl``.

Calibration (``calibrate_verifier.py``) and every evaluation of the model card
(``verifier_evals.py``) score the same pairs with the same exported model; the cache makes each
pair cost one forward pass per run folder.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def load_cache(out: Path) -> dict[tuple[str, str], np.ndarray]:
    """Raw logits per (premise, hypothesis) saved by earlier runs on the same checkpoint."""
    import pickle

    path = out / "logits_cache.pkl"
    if path.is_file():
        with path.open("rb") as fh:
            return dict(pickle.load(fh))
    return {}


def save_cache(out: Path, cache: dict[tuple[str, str], np.ndarray]) -> None:
    import pickle

    with (out / "logits_cache.pkl").open("wb") as fh:
        pickle.dump(cache, fh)


def cached_verifier(  # type: ignore[no-untyped-def]
    model_dir: Path,
    cache: dict[tuple[str, str], np.ndarray],
    *,
    threads: int = 2,
    calibrated: bool = True,
    calibration: tuple[float, object | None] | None = None,
):
    """An OnnxVerifier whose raw logits are memoised per pair (calibration and every evaluation
    of one run share them; the calibrated output is a function of logits and pair).

    ``calibration``: ``(temperature, feature layer or None)`` to apply instead of those in
    ``verifier.json`` (used to score calibration candidates before one is written)."""
    from verifai_desktop.verify.nli import OnnxVerifier, softmax

    class _Cached(OnnxVerifier):
        def logits(self, pairs):  # type: ignore[no-untyped-def]
            missing = [p for p in dict.fromkeys(pairs) if p not in cache]
            if missing:
                for p, row in zip(missing, super().logits(missing), strict=True):
                    cache[p] = row
            if not pairs:
                return np.zeros((0, 3), dtype=np.float32)
            return np.stack([cache[p] for p in pairs]).astype(np.float32)

        def classify(self, pairs):  # type: ignore[no-untyped-def]
            if calibration is None:
                return super().classify(pairs)
            temperature, layer = calibration
            probs = softmax(self.logits(pairs), temperature)  # type: ignore[no-untyped-call]
            if layer is not None and len(pairs):
                probs = layer.apply(probs, pairs)  # type: ignore[attr-defined]
            return probs

    return _Cached(model_dir, threads=threads, calibrated=calibrated)
