"""Which device each model runs on: ONNX Runtime providers, llama.cpp GPU offload, n_gpu_layers."""

from __future__ import annotations

import json

import pytest

from verifai_desktop import hardware
from verifai_desktop.cli import main
from verifai_desktop.settings import ModelSettings


def test_sessions_take_the_first_preferred_provider_the_build_has() -> None:
    cpu_only = ["AzureExecutionProvider", "CPUExecutionProvider"]
    cuda = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert hardware.choose_providers(cpu_only) == ["CPUExecutionProvider"]
    assert hardware.choose_providers(cuda) == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert hardware.choose_providers([]) == ["CPUExecutionProvider"]
    assert hardware.choose_providers(cuda, ["DmlExecutionProvider"]) == ["CPUExecutionProvider"]
    assert hardware.device_of("CUDAExecutionProvider") == "GPU (CUDA)"
    assert hardware.device_of("OpenVINOExecutionProvider") == "OpenVINO"


def test_detect_reports_this_machine_as_its_runtimes_do() -> None:
    ort = pytest.importorskip("onnxruntime")
    llama_cpp = pytest.importorskip("llama_cpp")
    hw = hardware.detect(ModelSettings(n_gpu_layers=-1))
    available = tuple(ort.get_available_providers())
    offload = bool(llama_cpp.llama_supports_gpu_offload())
    assert (hw.onnxruntime_version, hw.available_providers) == (ort.__version__, available)
    assert (hw.llama_gpu_offload, hw.n_gpu_layers_setting) == (offload, -1)
    assert [d.role for d in hw.devices] == ["generator", "verifier", "embedder"]
    onnx_device = hardware.device_of(hardware.choose_providers(available)[0])
    assert [d.device for d in hw.devices[1:]] == [onnx_device, onnx_device]
    if not offload:  # the CPU build here: llama.cpp is given 0 layers whatever the setting
        assert hw.n_gpu_layers == 0
        assert hw.devices[0] == hardware.Device(
            "generator",
            "CPU",
            "all layers on the CPU (no GPU support in this installation)",
        )
        assert hw.summary() == f"generator CPU · verifier {onnx_device} · embedder {onnx_device}"


@pytest.mark.parametrize(
    ("setting", "device", "detail", "in_effect"),
    [
        (-1, "GPU", "all layers on the GPU (GPU layers, in Settings)", -1),
        (20, "GPU", "20 layers on the GPU, the rest on the CPU (GPU layers, in Settings)", 20),
        (0, "CPU", "all layers on the CPU (GPU layers: none, in Settings)", 0),
    ],
)
def test_generator_device_follows_n_gpu_layers_on_a_gpu_build(
    monkeypatch: pytest.MonkeyPatch, setting: int, device: str, detail: str, in_effect: int
) -> None:
    monkeypatch.setattr(hardware, "llama_gpu_offload", lambda: True)  # a CUDA build of llama.cpp
    hw = hardware.detect(ModelSettings(n_gpu_layers=setting))
    assert hw.devices[0] == hardware.Device("generator", device, detail)
    assert (hw.n_gpu_layers_setting, hw.n_gpu_layers) == (setting, in_effect)
    words = {-1: "all", 0: "none", 20: "20"}[setting]
    assert hw.lines()[1] == f"Generator: can use a GPU; GPU layers: {words}"
    assert not any("n_gpu_layers" in line or "Provider" in line for line in hw.lines())


def test_a_loaded_verifier_reports_its_own_provider() -> None:
    pytest.importorskip("onnxruntime")
    hw = hardware.detect(ModelSettings(), verifier_provider="CUDAExecutionProvider")
    assert hw.devices[1] == hardware.Device("verifier", "GPU (CUDA)", "ONNX Runtime on GPU (CUDA)")
    assert hw.devices[2].detail.endswith("(when loaded); questions are embedded on the CPU")


def test_models_hardware_command(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    assert main(["models", "hardware", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    hw = hardware.detect(ModelSettings())
    assert data["available_providers"] == list(hw.available_providers)
    assert [d["device"] for d in data["devices"]] == [d.device for d in hw.devices]
    assert (data["n_gpu_layers_setting"], data["n_gpu_layers"]) == (-1, hw.n_gpu_layers)
    assert main(["models", "hardware"]) == 0
    assert capsys.readouterr().out.splitlines() == list(hw.lines())


@pytest.mark.parametrize(
    ("physical", "logical", "expected"),
    [(2, 2, 2), (1, 2, 2), (4, 8, 4), (None, 1, 1), (None, None, 1), (16, 32, 16)],
)
def test_the_generator_decodes_on_the_physical_cores_at_least_two_of_two(
    monkeypatch: pytest.MonkeyPatch, physical: int | None, logical: int | None, expected: int
) -> None:
    import psutil

    def cpu_count(logical: bool = True) -> int | None:
        return logical_n if logical else physical

    logical_n = logical
    monkeypatch.setattr(psutil, "cpu_count", cpu_count)
    assert hardware.generator_threads() == expected
    assert hardware.generator_threads(3) == 3  # the setting overrides the hardware


def test_the_bundled_generator_loads_with_the_chosen_threads() -> None:
    pytest.importorskip("llama_cpp")
    from verifai_desktop import modelstore
    from verifai_desktop.generate.llama import LlamaGenerator

    path = modelstore.ensure_bundled_generator()
    chosen = LlamaGenerator(path, ModelSettings(context_tokens=512)).load()
    assert chosen.n_threads == hardware.generator_threads()
    asked = LlamaGenerator(path, ModelSettings(context_tokens=512, n_threads=1)).load()
    assert asked.n_threads == 1
