"""What keeps the app offline: the Hugging Face offline flags and ONNX Runtime's telemetry.

Nothing but ``verifai models pull`` may use the network. The ``verifai`` command (every
sub-command but ``models pull``) and the desktop app call :func:`stay_offline` first thing,
which sets ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` unless the user set them
(huggingface_hub and transformers read them when first imported), so a model name that is not
on this machine fails at once instead of making dozens of lookups and retries. ONNX Runtime
(1.32 measured) resolves ``mobile.events.data.microsoft.com`` to send telemetry unless told not
to; every import of it goes through :func:`import_onnxruntime`. Its Python switch
(``disable_telemetry_events``) needs the runtime's environment, whose creation already sends a
``ProcessInfo`` event (onnxruntime issue #25573), which is why ``disable_telemetry_events``
alone still let a few lookups through now and then; ``ORT_DISABLE_TELEMETRY=1``, set before the
runtime initialises, is the full opt-out on Linux and macOS (onnxruntime PR #27379: no
uploader, events, device identifier or offline cache). Both are used.
"""

from __future__ import annotations

import importlib
import os
import threading
from types import ModuleType

OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Environment flags that stop huggingface_hub and transformers from contacting the Hub."""

ORT_TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"
"""ONNX Runtime's opt-out of its telemetry (read once, when the runtime initialises)."""

_ort_lock = threading.Lock()
_ort: ModuleType | None = None


def stay_offline() -> None:
    """Set each of :data:`OFFLINE_ENV` to ``"1"`` unless the environment already sets it.

    Call before anything imports huggingface_hub or transformers. Also turns ONNX Runtime's
    telemetry off (:data:`ORT_TELEMETRY_ENV`), whatever the environment says: the app promises
    that nothing leaves the machine, downloads included.
    """
    for key in OFFLINE_ENV:
        os.environ.setdefault(key, "1")
    disable_telemetry()


def disable_telemetry() -> None:
    """Set :data:`ORT_TELEMETRY_ENV` to ``"1"`` (every command, ``models pull`` included)."""
    os.environ[ORT_TELEMETRY_ENV] = "1"


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
            disable_telemetry()  # before the native runtime initialises
            module = importlib.import_module("onnxruntime")
            module.disable_telemetry_events()
            _ort = module
        return _ort
