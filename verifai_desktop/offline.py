"""What keeps the app offline: the Hugging Face offline flags and ONNX Runtime's telemetry.

Nothing but a model download (``verifai models pull``, Download in the app's Models dialog) may
use the network. The ``verifai`` command (every sub-command but ``models pull``) and the desktop
app call :func:`stay_offline` first thing, which sets ``HF_HUB_OFFLINE=1`` and
``TRANSFORMERS_OFFLINE=1`` unless the user set them (huggingface_hub and transformers read them
when first imported), so a model name that is not on this machine fails at once instead of
making dozens of lookups and retries. A download the user asks for in the app runs inside
:func:`hub_online`, which lifts huggingface_hub's offline switch for that call only; a flag the
user set himself (:func:`offline_flag_set_by_user`) is obeyed and the download refused. ONNX Runtime
(1.32 measured) resolves ``mobile.events.data.microsoft.com`` to send telemetry unless told not
to; every import of it goes through :func:`import_onnxruntime`. Its Python switch
(``disable_telemetry_events``) needs the runtime's environment, whose creation already sends a
``ProcessInfo`` event (onnxruntime issue #25573), which is why ``disable_telemetry_events``
alone still let a few lookups through now and then; ``ORT_DISABLE_TELEMETRY=1``, set before the
runtime initialises, is the full opt-out on Linux and macOS (onnxruntime PR #27379: no
uploader, events, device identifier or offline cache). Both are used.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Iterator
from types import ModuleType

OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Environment flags that stop huggingface_hub and transformers from contacting the Hub."""

ORT_TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"
"""ONNX Runtime's opt-out of its telemetry (read once, when the runtime initialises)."""

HF_TELEMETRY_ENV = "HF_HUB_DISABLE_TELEMETRY"
"""huggingface_hub's opt-out (read at import): without it, a download first fetches the Hub's
list of AI agents (``/api/agent-harnesses``, cached under ``HF_HOME``) to label its user agent,
and names the installed torch version."""

_ort_lock = threading.Lock()
_ort: ModuleType | None = None

_set_here: set[str] = set()
"""The keys of :data:`OFFLINE_ENV` that :func:`stay_offline` set (not the user)."""

_hub_lock = threading.Lock()
_hub_online_depth = 0
_hub_saved_offline = False

_TRUE = {"1", "true", "yes", "on"}


def stay_offline() -> None:
    """Set each of :data:`OFFLINE_ENV` to ``"1"`` unless the environment already sets it.

    Call before anything imports huggingface_hub or transformers. Also turns ONNX Runtime's
    telemetry off (:data:`ORT_TELEMETRY_ENV`), whatever the environment says: the app promises
    that nothing leaves the machine, downloads included.
    """
    for key in OFFLINE_ENV:
        if key not in os.environ:
            os.environ[key] = "1"
            _set_here.add(key)
    disable_telemetry()


def offline_flag_set_by_user() -> str | None:
    """The first of :data:`OFFLINE_ENV` the user turned on (not :func:`stay_offline`), or None.

    huggingface_hub treats either flag as its offline mode; so does a download here.
    """
    for key in OFFLINE_ENV:
        if key not in _set_here and os.environ.get(key, "").strip().lower() in _TRUE:
            return key
    return None


@contextlib.contextmanager
def hub_online() -> Iterator[None]:
    """Let huggingface_hub reach the network while the block runs (model downloads only).

    huggingface_hub reads ``HF_HUB_OFFLINE`` once, when first imported, into
    ``huggingface_hub.constants.HF_HUB_OFFLINE``, and every request it sends checks that value;
    the block sets it to False and puts the old value back after the last of any overlapping
    blocks. The environment is not touched, so a library imported later still starts offline.
    Callers check :func:`offline_flag_set_by_user` first.
    """
    global _hub_online_depth, _hub_saved_offline
    from huggingface_hub import constants

    with _hub_lock:
        constants.HF_HUB_DISABLE_TELEMETRY = True  # whatever it read at import
        if _hub_online_depth == 0:
            _hub_saved_offline = constants.HF_HUB_OFFLINE
            constants.HF_HUB_OFFLINE = False
        _hub_online_depth += 1
    try:
        yield
    finally:
        with _hub_lock:
            _hub_online_depth -= 1
            if _hub_online_depth == 0:
                constants.HF_HUB_OFFLINE = _hub_saved_offline


def disable_telemetry() -> None:
    """Set :data:`ORT_TELEMETRY_ENV` and :data:`HF_TELEMETRY_ENV` to ``"1"`` (every command,
    ``models pull`` included)."""
    os.environ[ORT_TELEMETRY_ENV] = "1"
    os.environ[HF_TELEMETRY_ENV] = "1"


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
