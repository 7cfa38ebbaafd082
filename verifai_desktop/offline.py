"""What keeps the app offline: the Hugging Face offline flags and ONNX Runtime's telemetry.

Nothing but ``verifai models pull`` may use the network. The ``verifai`` command (every
sub-command but ``models pull``) and the desktop app call :func:`stay_offline` first thing,
which sets ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` unless the user set them
(huggingface_hub and transformers read them when first imported), so a model name that is not
on this machine fails at once instead of making dozens of lookups and retries. ONNX Runtime
(1.32 measured) resolves ``mobile.events.data.microsoft.com`` to send telemetry unless told not
to; every import of it goes through :func:`import_onnxruntime`.
"""

from __future__ import annotations

import importlib
import os
import threading
from types import ModuleType

OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Environment flags that stop huggingface_hub and transformers from contacting the Hub."""

_ort_lock = threading.Lock()
_ort: ModuleType | None = None


def stay_offline() -> None:
    """Set each of :data:`OFFLINE_ENV` to ``"1"`` unless the environment already sets it.

    Call before anything imports huggingface_hub or transformers.
    """
    for key in OFFLINE_ENV:
        os.environ.setdefault(key, "1")


def import_onnxruntime() -> ModuleType:
    """The ``onnxruntime`` module, with its telemetry events disabled before any session.

    Returns:
        The imported module (the same object as ``import onnxruntime``).

    Raises:
        ImportError: ONNX Runtime is not installed.
    """
    global _ort
    with _ort_lock:
        if _ort is None:
            module = importlib.import_module("onnxruntime")
            module.disable_telemetry_events()
            _ort = module
        return _ort
