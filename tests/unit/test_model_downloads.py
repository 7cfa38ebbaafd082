"""Model downloads against a local Hugging Face Hub (tests/hub_server.py, real HTTP on
127.0.0.1, real huggingface_hub): a download lands checked and activatable, an interrupted one
resumes from the bytes on disk (dropped connection, Cancel, Ctrl+C of `verifai models pull`), a
sha256 mismatch is rejected with nothing left or activated, folders are checked file by file,
deleting, and the DeBERTa-style verifier downloaded, exported and activated in one call."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.hub_server import COMMIT, LocalHub, catalog_entry, serve_generator, write_catalog
from tests.tiny_models import tiny_deberta_nli
from verifai_desktop import hub, modelstore, offline
from verifai_desktop.cli import main
from verifai_desktop.domain import Progress
from verifai_desktop.errors import (
    Cancelled,
    CannotDelete,
    ChecksumMismatch,
    MissingExtra,
    ModelNotFound,
    OfflineError,
)
from verifai_desktop.settings import ModelSettings, load_settings, models_dir
from verifai_desktop.verify.export import export_verifier

REPO = "verifai-test/tiny-gguf"
FILE = "tiny-q4.gguf"
NAME = "tiny-gguf"
MiB = 1 << 20
# Three chunks and a bit: resuming at a chunk boundary leaves whole chunks to fetch.
DATA = hashlib.sha256(b"seed").digest() * ((3 * MiB + 12_345) // 32) + b"tail"
DATA_SHA = hashlib.sha256(DATA).hexdigest()
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def gguf_hub(local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalHub:
    """The local Hub serving one 3 MiB GGUF-named file, in a catalog entry with its sha256."""
    return serve_generator(
        local_hub,
        tmp_path / "catalog.toml",
        monkeypatch,
        name=NAME,
        repo=REPO,
        file=FILE,
        data=DATA,
        sha256=DATA_SHA,
    )


def _partial() -> Path:
    return models_dir() / ".staging" / NAME / "files" / (FILE + hub.INCOMPLETE_SUFFIX)


def _left_in_models_dir() -> list[str]:
    root = models_dir()
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_download_lands_checked_and_can_be_activated(gguf_hub: LocalHub) -> None:
    seen: list[Progress] = []
    path = modelstore.pull(NAME, exporter=export_verifier, progress=seen.append)
    assert path == models_dir() / FILE
    assert path.read_bytes() == DATA
    # Only the model and the hash cache are left: no staging folder, no partial file.
    assert _left_in_models_dir() == ["sha256-cache.json", FILE]
    downloads = [p for p in seen if p.stage == "download"]
    assert (downloads[0].done, downloads[-1].done, downloads[-1].total) == (0, len(DATA), len(DATA))
    assert [p.done for p in downloads[1:-1]] == [MiB, 2 * MiB, 3 * MiB]
    assert seen[-1] == Progress("verify", len(DATA), len(DATA), "bytes", FILE)
    # huggingface_hub's HEAD on the Hub (302 to the CDN), then one GET of the bytes there.
    methods = [(r.server, r.method, r.path.split("?")[0]) for r in gguf_hub.requests]
    assert methods == [
        ("hub", "HEAD", f"/{REPO}/resolve/main/{FILE}"),
        ("cdn", "GET", f"/cdn/{DATA_SHA}"),
    ]
    assert "Range" not in gguf_hub.requests[1].headers

    status = {s.entry.name: s for s in modelstore.list_models()}[NAME]
    assert (status.present, status.downloaded, status.in_use) == (True, True, False)
    assert (status.sha256, status.size_bytes, status.partial_bytes) == ("verified", len(DATA), 0)
    role, settings = modelstore.use(NAME)
    assert (role, settings.models.generator, load_settings().models.generator) == (
        "generator",
        NAME,
        NAME,
    )
    ident = modelstore.resolve(NAME, "generator")
    assert (ident.path, ident.sha256) == (path, DATA_SHA)
    assert {s.entry.name: s for s in modelstore.list_models()}[NAME].in_use


def test_dropped_connection_is_resumed_with_a_range_request(gguf_hub: LocalHub) -> None:
    gguf_hub.drop_after(REPO, FILE, 1_500_000)
    gguf_hub.watch(_partial())
    path = modelstore.pull(NAME, exporter=export_verifier)
    first, second = gguf_hub.byte_requests(REPO, FILE)
    assert "Range" not in first.headers
    # The second request asks for what is missing from the bytes on disk: one whole chunk
    # arrived (the half chunk in flight when the connection dropped is not written).
    assert second.watched_bytes == MiB
    assert second.headers["Range"] == f"bytes={MiB}-"
    assert path.read_bytes() == DATA
    entry = modelstore.find_entry(NAME)
    assert entry is not None and modelstore.sha256_state(entry) == "verified"


def test_cancelled_download_keeps_its_bytes_and_the_next_pull_resumes(
    gguf_hub: LocalHub,
) -> None:
    gguf_hub.hold_after(REPO, FILE, 1_500_000)
    cancel = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            modelstore.pull(NAME, exporter=export_verifier, cancel=cancel)
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while not (_partial().is_file() and _partial().stat().st_size >= MiB):
        assert time.monotonic() < deadline, "the first chunk never arrived"
        time.sleep(0.02)
    cancel.set()
    gguf_hub.release.set()  # the next chunk arrives, and Cancel is seen before it is written
    worker.join(30)
    assert len(errors) == 1 and isinstance(errors[0], Cancelled)
    assert str(errors[0]) == f"download of {NAME} cancelled"
    assert _partial().stat().st_size == MiB
    state = json.loads(_partial().with_name(FILE + hub.STATE_SUFFIX).read_text())
    assert state == {
        "repo": REPO,
        "revision": "main",
        "etag": DATA_SHA,
        "commit": COMMIT,
        "size": len(DATA),
    }
    assert not (models_dir() / FILE).exists()
    status = {s.entry.name: s for s in modelstore.list_models()}[NAME]
    assert (status.present, status.partial_bytes) == (False, MiB)

    gguf_hub.watch(_partial())
    seen: list[Progress] = []
    path = modelstore.pull(NAME, exporter=export_verifier, progress=seen.append)
    resumed = gguf_hub.byte_requests(REPO, FILE)[-1]
    assert resumed.watched_bytes == MiB
    assert resumed.headers["Range"] == f"bytes={MiB}-"
    assert seen[0] == Progress("download", MiB, len(DATA), "bytes", f"{FILE} (resuming)")
    assert path.read_bytes() == DATA
    assert _left_in_models_dir() == ["sha256-cache.json", FILE]


def test_interrupted_cli_pull_resumes_where_it_stopped(
    gguf_hub: LocalHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gguf_hub.hold_after(REPO, FILE, 1_500_000)
    code = (
        # Ctrl+C as a terminal delivers it: a suite started in the background (`cmd &` in a
        # script) has SIGINT ignored, and children inherit that; the child sets it back.
        "import signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
        "from pathlib import Path\n"
        "from verifai_desktop import modelstore\n"
        f"modelstore.catalog.CATALOG_PATH = Path({str(modelstore.catalog.CATALOG_PATH)!r})\n"
        "from verifai_desktop.cli import main\n"
        f"sys.exit(main(['models', 'pull', {NAME!r}]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in offline.OFFLINE_ENV}
    env["PYTHONPATH"] = str(REPO_ROOT)
    # The held connection must stay open until Ctrl+C: with the Hub client's 10 s read timeout,
    # a loaded machine saw it time out first, resume without the hold and finish (exit 0).
    env["HF_HUB_DOWNLOAD_TIMEOUT"] = "120"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while not (_partial().is_file() and _partial().stat().st_size >= MiB):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the first chunk never arrived"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # Ctrl+C
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        gguf_hub.release.set()
    assert proc.returncode == 130, err
    assert err.decode().strip().endswith("interrupted")
    assert _partial().stat().st_size == MiB

    gguf_hub.watch(_partial())
    assert main(["models", "pull", NAME]) == 0
    resumed = gguf_hub.byte_requests(REPO, FILE)[-1]
    assert (resumed.watched_bytes, resumed.headers["Range"]) == (MiB, f"bytes={MiB}-")
    captured = capsys.readouterr()
    assert captured.out == f"{NAME}: {models_dir() / FILE}\n"
    assert f"resuming {NAME}: {FILE} at 1.05 MB of 3.16 MB" in captured.err
    assert (models_dir() / FILE).read_bytes() == DATA


def test_sha256_mismatch_is_rejected_and_nothing_is_left_or_activated(
    local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_hub.add_file(REPO, FILE, DATA)
    wrong = "0" * 64
    catalog = write_catalog(
        tmp_path / "catalog.toml",
        catalog_entry(NAME, "generator", REPO, file=FILE, sha256=wrong),
    )
    monkeypatch.setattr(modelstore.catalog, "CATALOG_PATH", catalog)
    with pytest.raises(ChecksumMismatch) as info:
        modelstore.pull(NAME, exporter=export_verifier, activate=True)
    assert str(info.value) == (
        f"the download of model {NAME!r} was rejected: {FILE} has sha256 {DATA_SHA}, "
        f"expected {wrong}; the file was deleted and no model was changed. Download it again; "
        "if the mismatch repeats, the file on the Hub is not the one the catalog names"
    )
    assert _left_in_models_dir() == []  # no model, no partial, no staging folder
    assert load_settings().models == ModelSettings()
    status = {s.entry.name: s for s in modelstore.list_models()}[NAME]
    assert (status.present, status.partial_bytes) == (False, 0)
    with pytest.raises(ModelNotFound, match=f"models pull {NAME}"):
        modelstore.resolve(NAME, "generator")


def test_folder_download_checks_each_file_against_the_hub(
    local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = "verifai-test/tiny-adapter"
    files = {
        "adapter_config.json": (b'{"r": 8, "lora_alpha": 16}', False),
        "adapter_model.safetensors": (DATA[: 2 * MiB + 5], True),
        "adapter_model.bin": (b"pickled copy, skipped", True),
        ".gitattributes": (b"*.safetensors filter=lfs", False),
        "README.md": (b"# tiny adapter\n", False),
    }
    for path, (data, lfs) in files.items():
        local_hub.add_file(repo, path, data, lfs=lfs)
    catalog = write_catalog(tmp_path / "catalog.toml", catalog_entry("tiny-lora", "lora", repo))
    monkeypatch.setattr(modelstore.catalog, "CATALOG_PATH", catalog)

    seen: list[Progress] = []
    target = modelstore.pull("tiny-lora", exporter=export_verifier, progress=seen.append)
    assert target == models_dir() / "tiny-lora"
    assert sorted(p.name for p in target.iterdir()) == [
        modelstore.MANIFEST_NAME,
        "README.md",
        "adapter_config.json",
        "adapter_model.safetensors",
    ]
    for name in ("README.md", "adapter_config.json", "adapter_model.safetensors"):
        assert (target / name).read_bytes() == files[name][0]
    total = sum(len(files[n][0]) for n in ("README.md", "adapter_config.json"))
    total += len(files["adapter_model.safetensors"][0])
    assert max(p.done for p in seen if p.stage == "download") == total
    assert {p.total for p in seen} == {total}
    entry = modelstore.find_entry("tiny-lora")
    assert entry is not None and modelstore.sha256_state(entry) == "verified"
    (target / "adapter_config.json").write_bytes(b"{}")  # changed size: no longer as checked
    assert modelstore.sha256_state(entry) == "mismatch"


def test_delete_removes_a_download_never_a_bundled_model(gguf_hub: LocalHub) -> None:
    with pytest.raises(CannotDelete, match="it is not downloaded"):
        modelstore.delete(NAME)
    modelstore.pull(NAME, exporter=export_verifier, activate=True)
    assert load_settings().models.generator == NAME
    settings = modelstore.delete(NAME)
    # It was in use: the generator is the bundled default again, saved.
    assert settings.models.generator == load_settings().models.generator
    assert settings.models.generator == modelstore.BUNDLED_GENERATOR
    assert not (models_dir() / FILE).exists()
    assert {s.entry.name: s for s in modelstore.list_models()}[NAME].present is False
    with pytest.raises(CannotDelete) as info:
        modelstore.delete(modelstore.BUNDLED_VERIFIER)
    assert str(info.value) == (
        f"cannot delete model {modelstore.BUNDLED_VERIFIER!r}: it is bundled with the app; "
        "choose another model instead"
    )
    assert modelstore.BUNDLED_VERIFIER_DIR.is_dir()


def test_the_hub_stays_offline_outside_a_pull(
    gguf_hub: LocalHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's default (offline mode set by stay_offline) is lifted for a pull only."""
    import huggingface_hub
    from huggingface_hub import constants
    from huggingface_hub.errors import OfflineModeIsEnabled

    offline.stay_offline()  # as the app does at start; the flags were unset (a user's choice)
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert offline.offline_flag_set_by_user() is None
    saved = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True  # what huggingface_hub read at import after stay_offline
    try:
        path = modelstore.pull(NAME, exporter=export_verifier)
        assert path.read_bytes() == DATA
        assert constants.HF_HUB_OFFLINE is True  # back on after the pull
        before = len(gguf_hub.requests)
        url = huggingface_hub.hf_hub_url(REPO, FILE, endpoint=gguf_hub.endpoint)
        with pytest.raises(OfflineModeIsEnabled):
            huggingface_hub.get_hf_file_metadata(url)
        assert len(gguf_hub.requests) == before  # nothing reached the server
    finally:
        constants.HF_HUB_OFFLINE = saved
    # A flag the user set is obeyed: no download, and no request.
    offline._set_here.discard("TRANSFORMERS_OFFLINE")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    assert offline.offline_flag_set_by_user() == "TRANSFORMERS_OFFLINE"
    with pytest.raises(OfflineError, match=r"offline mode is on \(TRANSFORMERS_OFFLINE=1\)"):
        modelstore.pull(NAME, exporter=export_verifier)


def test_verifier_checkpoint_needs_the_torch_extra_before_any_download(
    local_hub: LocalHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for module in ("torch", "transformers"):
        monkeypatch.setitem(sys.modules, module, None)
    message = (
        "downloading verifai-deberta-scifact and exporting it to ONNX needs PyTorch, "
        "transformers and onnx, which is not installed; install the 'torch' extra: "
        "pip install 'verifai-desktop[torch]'"
    )
    with pytest.raises(MissingExtra) as info:
        modelstore.pull("verifai-deberta-scifact", exporter=export_verifier)
    assert str(info.value) == message
    status = {s.entry.name: s for s in modelstore.list_models()}["verifai-deberta-scifact"]
    assert status.needs == message
    assert main(["models", "pull", "verifai-deberta-scifact"]) == 1
    assert capsys.readouterr().err == f"error: {message}\n"
    assert local_hub.requests == []
    assert _left_in_models_dir() == []


def test_verifier_is_downloaded_exported_to_onnx_and_activated_in_one_call(
    local_hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verifai_desktop.verify.nli import get_verifier

    repo = "verifai-test/tiny-deberta-nli"
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    checkpoint = tiny_deberta_nli(tmp_path)
    for f in sorted(checkpoint.iterdir()):
        local_hub.add_file(repo, f.name, f.read_bytes(), lfs=f.suffix in (".safetensors", ".bin"))
    catalog = write_catalog(
        tmp_path / "catalog.toml",
        catalog_entry("tiny-nli", "verifier", repo, export=modelstore.EXPORT_ONNX_VERIFIER),
    )
    monkeypatch.setattr(modelstore.catalog, "CATALOG_PATH", catalog)

    stages: list[str] = []
    target = modelstore.pull(
        "tiny-nli",
        exporter=export_verifier,
        activate=True,
        progress=lambda p: stages.append(p.stage),
    )
    assert target == models_dir() / "tiny-nli"
    assert stages[0] == "download" and stages[-1] == "export"
    names = {p.name for p in target.iterdir()}
    assert {"model.onnx", "tokenizer.json", "config.json", "verifier.json"} <= names
    assert "model_fp32.onnx" not in names and "model.safetensors" not in names
    assert json.loads((target / "verifier.json").read_text())["int8"] is True
    assert load_settings().models.verifier == "tiny-nli"
    assert sorted(p.name for p in models_dir().iterdir()) == ["tiny-nli"]  # no staging left
    status = {s.entry.name: s for s in modelstore.list_models()}["tiny-nli"]
    assert (status.present, status.in_use, status.sha256) == (True, True, "verified")
    verifier = get_verifier(load_settings().models.verifier)
    probs = verifier.logits([("the drug reduces the risk of stroke .", "the drug reduces risk .")])
    assert probs.shape == (1, 3)
