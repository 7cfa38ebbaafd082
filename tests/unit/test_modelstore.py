"""Model store: catalog, assembly of the bundled GGUF from parts, resolution, use, offline pull."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifai_desktop import modelstore
from verifai_desktop.errors import ModelLoadError, ModelNotFound, OfflineError
from verifai_desktop.settings import load_settings, models_dir


def _parts(tmp_path: Path) -> tuple[list[Path], bytes]:
    chunks = [b"alpha-" * 1000, b"beta-" * 7, b"", b"gamma" * 3333]
    paths = []
    for i, data in enumerate(chunks, start=1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        paths.append(p)
    return paths, b"".join(chunks)


def test_catalog_lists_bundled_and_production_models() -> None:
    entries = {e.name: e for e in modelstore.load_catalog()}
    assert entries[modelstore.BUNDLED_GENERATOR].sha256 == modelstore.BUNDLED_GENERATOR_SHA256
    assert entries[modelstore.BUNDLED_GENERATOR].bundled
    mistral = entries["mistral-7b-instruct-v0.2-q4_k_m"]
    assert (mistral.repo, mistral.file, mistral.licence) == (
        "TheBloke/Mistral-7B-Instruct-v0.2-GGUF",
        "mistral-7b-instruct-v0.2.Q4_K_M.gguf",
        "Apache-2.0",
    )
    assert (
        entries["verifai-deberta-scifact"].repo
        == "MilosKosRad/TextualEntailment_DeBERTa_preprocessedSciFACT"
    )
    assert entries["verifai-mistral-7b-instruct-v0.2-pqa-10"].role == "lora"
    roles = {e.role for e in entries.values()}
    assert roles == {"generator", "lora", "verifier", "embedder"}
    # the models/ link points at the packaged catalog
    link = Path(__file__).resolve().parents[2] / "models" / "catalog.toml"
    assert link.resolve() == modelstore.CATALOG_PATH.resolve()


def test_catalog_lists_each_model_once() -> None:
    # `verifai models list` once showed the bundled embedder twice (bundled, and its Hub copy)
    keys = [(e.role, e.repo, e.file) for e in modelstore.load_catalog()]
    assert len(keys) == len(set(keys))


def test_assemble_concatenates_in_order(tmp_path: Path) -> None:
    parts, data = _parts(tmp_path)
    target = tmp_path / "out" / "model.gguf"
    got = modelstore.assemble_file(parts, target, hashlib.sha256(data).hexdigest())
    assert got == target
    assert target.read_bytes() == data
    assert list(target.parent.iterdir()) == [target]  # no temp file left behind


def test_assemble_with_wrong_order_fails_and_leaves_nothing(tmp_path: Path) -> None:
    parts, data = _parts(tmp_path)
    target = tmp_path / "out" / "model.gguf"
    with pytest.raises(ModelLoadError, match="sha256"):
        modelstore.assemble_file(list(reversed(parts)), target, hashlib.sha256(data).hexdigest())
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_bundled_generator_assembled_once_and_checked() -> None:
    first = modelstore.ensure_bundled_generator()
    assert first == models_dir() / modelstore.BUNDLED_GENERATOR_FILE
    assert modelstore.sha256_file(first) == modelstore.BUNDLED_GENERATOR_SHA256
    mtime = first.stat().st_mtime_ns
    ident = modelstore.resolve(modelstore.BUNDLED_GENERATOR, "generator")
    assert ident.path == first and ident.sha256 == modelstore.BUNDLED_GENERATOR_SHA256
    assert first.stat().st_mtime_ns == mtime  # reused, not rebuilt
    # a damaged file is detected (size/mtime change invalidates the cached hash) and rebuilt
    with first.open("r+b") as fh:
        fh.seek(1000)
        fh.write(b"\x00\x01\x02")
    os.utime(first, ns=(mtime + 10**9, mtime + 10**9))
    again = modelstore.ensure_bundled_generator()
    assert modelstore.sha256_file(again) == modelstore.BUNDLED_GENERATOR_SHA256
    os.remove(again)


def test_parts_are_found_from_package_metadata() -> None:
    parts = modelstore.bundled_generator_parts()
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 7)]


def test_resolve_path_and_unknown(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF-not-really")
    ident = modelstore.resolve(str(gguf), "generator")
    assert ident.name == "tiny.gguf"
    assert ident.sha256 == hashlib.sha256(b"GGUF-not-really").hexdigest()
    with pytest.raises(ModelNotFound, match="no-such-model"):
        modelstore.resolve("no-such-model", "generator")
    with pytest.raises(ModelNotFound, match="models pull mistral"):
        modelstore.resolve("mistral-7b-instruct-v0.2-q4_k_m", "generator")


def test_use_writes_settings(tmp_path: Path) -> None:
    role, _ = modelstore.use("mistral-7b-instruct-v0.2-q4_k_m")
    assert role == "generator"
    assert load_settings().models.generator == "mistral-7b-instruct-v0.2-q4_k_m"
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"x")
    role, _ = modelstore.use(str(gguf))
    assert role == "generator"
    assert load_settings().models.generator == str(gguf.resolve())
    status = {s.entry.name: s for s in modelstore.list_models()}
    assert not status["mistral-7b-instruct-v0.2-q4_k_m"].in_use
    assert status["all-MiniLM-L6-v2"].in_use and status["all-MiniLM-L6-v2"].present
    assert not status["mistral-7b-instruct-v0.2-q4_k_m"].present


def test_pull_offline_is_a_clear_error_and_leaves_nothing() -> None:
    with pytest.raises(OfflineError, match="offline mode"):
        modelstore.pull("mistral-7b-instruct-v0.2-q4_k_m")
    assert not models_dir().exists() or list(models_dir().iterdir()) == []


def test_pull_with_unreachable_hub_is_offline_error(tmp_path: Path) -> None:
    code = (
        "from verifai_desktop import modelstore, settings\n"
        "from verifai_desktop.errors import OfflineError\n"
        "try:\n"
        "    modelstore.pull('verifai-deberta-scifact')\n"
        "except OfflineError as exc:\n"
        "    print('OFFLINE', exc)\n"
        "import os\n"
        "d = settings.models_dir()\n"
        "print('LEFT', sorted(os.listdir(d)) if d.exists() else [])\n"
    )
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="0",
        HF_ENDPOINT="http://127.0.0.1:9",
        VERIFAI_HOME=str(tmp_path / "h"),
    )
    env.pop("TRANSFORMERS_OFFLINE", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert "OFFLINE cannot download verifai-deberta-scifact" in out.stdout, out.stderr
    assert "LEFT []" in out.stdout


def test_models_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    from verifai_desktop.cli import main

    assert main(["models", "pull", "mistral-7b-instruct-v0.2-q4_k_m"]) == 1
    assert "offline mode is on" in capsys.readouterr().err
    assert main(["models", "use", "mistral-7b-instruct-v0.2-q4_k_m"]) == 0
    assert capsys.readouterr().out.strip() == "generator: mistral-7b-instruct-v0.2-q4_k_m"
    assert main(["models", "list", "--json"]) == 0
    rows = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert rows["mistral-7b-instruct-v0.2-q4_k_m"]["in_use"] is True
    assert rows[modelstore.BUNDLED_GENERATOR]["in_use"] is False
    assert main(["models", "use", str(tmp_path / "missing.gguf")]) == 1
    assert "missing.gguf" in capsys.readouterr().err
