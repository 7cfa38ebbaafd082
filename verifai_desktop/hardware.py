"""Which device each model runs on: ONNX Runtime providers and llama.cpp GPU offload.

The verifier and the embedder run on ONNX Runtime: their sessions ask for
:data:`PREFERRED_PROVIDERS` and get the first one this ONNX Runtime build has
(:func:`choose_providers`, used by both). CUDA needs the ``gpu`` extra (``onnxruntime-gpu``);
the embedder's query session always runs on the CPU (one text, one thread), so only ingest uses
the GPU. The generator runs on llama.cpp: layers go to the GPU when the build supports offload
(``llama_cpp.llama_supports_gpu_offload()``, a CUDA/Metal/Vulkan build) and
``models.n_gpu_layers`` asks for some (-1: all). :func:`detect` imports ONNX Runtime and llama.cpp
(about a second): call it off the UI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from verifai_desktop.settings import ModelSettings

log = logging.getLogger(__name__)

PREFERRED_PROVIDERS = ("CUDAExecutionProvider", "CPUExecutionProvider")
"""ONNX Runtime providers the verifier and embedder sessions ask for, best first."""

CPU_PROVIDER = "CPUExecutionProvider"

_DEVICE_OF_PROVIDER = {
    "CUDAExecutionProvider": "GPU (CUDA)",
    "TensorrtExecutionProvider": "GPU (TensorRT)",
    "ROCMExecutionProvider": "GPU (ROCm)",
    "DmlExecutionProvider": "GPU (DirectML)",
    "CoreMLExecutionProvider": "Core ML",
    CPU_PROVIDER: "CPU",
}


def generator_threads(requested: int = 0) -> int:
    """CPU threads llama.cpp decodes with (``models.n_threads``).

    Decoding is limited by memory bandwidth and one thread per physical core is fastest;
    llama-cpp-python's own default, half the logical CPUs, leaves one of two cores idle (raw
    decode of the bundled 0.5B on 2 cores: 27.6 tokens/s on 1 thread, 36.3 on 2; issue 40).

    Args:
        requested: a positive count is used as given; 0 picks one.

    Returns:
        ``requested``, or the physical cores (:func:`psutil.cpu_count` with
        ``logical=False``), at least 2 where there are 2 logical CPUs, at least 1.
    """
    if requested > 0:
        return requested
    import psutil

    physical = psutil.cpu_count(logical=False) or 0
    logical = psutil.cpu_count(logical=True) or 1
    return max(physical, min(2, logical), 1)


def choose_providers(available: Sequence[str], wanted: Sequence[str] | None = None) -> list[str]:
    """The providers to open a session with: ``wanted`` (default :data:`PREFERRED_PROVIDERS`)
    in order, restricted to ``available``; the CPU provider if none is."""
    prefs = tuple(wanted) if wanted else PREFERRED_PROVIDERS
    return [p for p in prefs if p in available] or [CPU_PROVIDER]


def device_of(provider: str) -> str:
    """``"CPU"``, ``"GPU (CUDA)"``, ... for an ONNX Runtime provider name."""
    return _DEVICE_OF_PROVIDER.get(provider, provider.removesuffix("ExecutionProvider"))


@dataclass(frozen=True, slots=True)
class Device:
    """Where one model runs.

    Attributes:
        role: ``"generator"``, ``"verifier"`` or ``"embedder"``.
        device: ``"CPU"``, ``"GPU (CUDA)"``, ``"GPU"`` (llama.cpp offload), ...
        detail: the runtime and the setting behind it, one line.
    """

    role: str
    device: str
    detail: str


@dataclass(frozen=True, slots=True)
class Hardware:
    """What this machine's runtimes offer and where each model runs.

    Attributes:
        onnxruntime_version: ONNX Runtime's version; empty when it is not installed.
        available_providers: providers this ONNX Runtime build has.
        llama_gpu_offload: this llama.cpp build can offload layers to a GPU.
        n_gpu_layers_setting: ``models.n_gpu_layers`` (-1: all when possible).
        n_gpu_layers: what llama.cpp is given (see
            :func:`verifai_desktop.generate.llama.gpu_layers`); 0 is CPU only.
        devices: the generator, the verifier and the embedder, in that order.
    """

    onnxruntime_version: str
    available_providers: tuple[str, ...]
    llama_gpu_offload: bool
    n_gpu_layers_setting: int
    n_gpu_layers: int
    devices: tuple[Device, ...]

    def summary(self) -> str:
        """``"generator CPU · verifier CPU · embedder CPU"``, for a status bar."""
        return " · ".join(f"{d.role} {d.device}" for d in self.devices)

    def lines(self) -> tuple[str, ...]:
        """One line per runtime and per model in the user's words (GPU layers as the
        Settings dialog names them), for the Models dialog or ``verifai models hardware``."""
        if self.onnxruntime_version:
            local = (p for p in self.available_providers if p != "AzureExecutionProvider")
            devices = ", ".join(dict.fromkeys(device_of(p) for p in local))  # not a device
            ort = (
                f"Verifier and search model: ONNX Runtime {self.onnxruntime_version}, on {devices}"
            )
        else:
            ort = "Verifier and search model: ONNX Runtime is missing; reinstall VerifAI Desktop"
        if self.llama_gpu_offload:
            llama = f"Generator: can use a GPU; GPU layers: {gpu_layers_words(self.n_gpu_layers)}"
        else:
            llama = "Generator: this installation runs it on the CPU only (no GPU support)"
        return (ort, llama, *(f"{d.role}: {d.device} — {d.detail}" for d in self.devices))


def gpu_layers_words(n_gpu_layers: int) -> str:
    """``models.n_gpu_layers`` as the Settings dialog names it: all (-1), none (0) or N."""
    return "all" if n_gpu_layers < 0 else "none" if n_gpu_layers == 0 else str(n_gpu_layers)


def _onnxruntime() -> tuple[str, tuple[str, ...]]:
    try:
        from verifai_desktop.offline import import_onnxruntime

        ort = import_onnxruntime()
    except ImportError:
        return "", ()
    return str(ort.__version__), tuple(str(p) for p in ort.get_available_providers())


def llama_gpu_offload() -> bool:
    """Whether the installed llama.cpp build can offload layers to a GPU (False if missing)."""
    try:
        import llama_cpp
    except ImportError:
        return False
    return bool(llama_cpp.llama_supports_gpu_offload())


def detect(
    models: ModelSettings,
    *,
    verifier_provider: str | None = None,
    embedder_provider: str | None = None,
) -> Hardware:
    """Where the generator, verifier and embedder run with these settings on this machine.

    Args:
        models: the model settings (``n_gpu_layers``).
        verifier_provider: the provider of a loaded verifier session, if any (else the one a
            session would get, :func:`choose_providers`).
        embedder_provider: likewise for the embedder's ingest session.

    Returns:
        The runtimes' capabilities and one :class:`Device` per model.
    """
    version, available = _onnxruntime()
    offload = llama_gpu_offload()
    # As verifai_desktop.generate.llama.gpu_layers: -1 is all layers on a build that offloads.
    layers = models.n_gpu_layers if offload else 0
    if layers == 0:
        why = "GPU layers: none, in Settings" if offload else "no GPU support in this installation"
        generator = Device("generator", "CPU", f"all layers on the CPU ({why})")
    else:
        where = (
            "all layers on the GPU"
            if layers < 0
            else f"{layers} layers on the GPU, the rest on the CPU"
        )
        generator = Device("generator", "GPU", f"{where} (GPU layers, in Settings)")
    chosen = choose_providers(available)[0] if version else ""
    devices = [generator]
    for role, loaded in (("verifier", verifier_provider), ("embedder", embedder_provider)):
        provider = loaded or chosen
        if not provider:
            devices.append(Device(role, "unavailable", "ONNX Runtime is not installed"))
            continue
        detail = f"ONNX Runtime on {device_of(provider)}" + ("" if loaded else " (when loaded)")
        if role == "embedder":
            detail += "; questions are embedded on the CPU"
        devices.append(Device(role, device_of(provider), detail))
    return Hardware(
        onnxruntime_version=version,
        available_providers=available,
        llama_gpu_offload=offload,
        n_gpu_layers_setting=models.n_gpu_layers,
        n_gpu_layers=layers,
        devices=tuple(devices),
    )
