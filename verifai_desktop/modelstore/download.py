"""Download (the only network access of the app) and delete catalog models.

Only :func:`pull` opens a network connection (Hugging Face Hub, through
:mod:`verifai_desktop.hub`): it downloads into a staging folder under the models dir
(``.staging/<name>/``), resumes an interrupted download from the bytes already there, and moves
a model into place only once its checksums match. A bundled generator whose part packages are
not installed (the 1.5B without its extra) is downloaded the same way, as the file the parts
would assemble into (:func:`from_hub`). A verifier checkpoint is exported to ONNX by
the :class:`VerifierExporter` the caller passes. :func:`delete` removes a downloaded model.
Builds on :mod:`~verifai_desktop.modelstore.resolution` (where a model goes, selecting it);
:mod:`~verifai_desktop.modelstore.inventory` reads the staging folders and manifests written
here.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.util
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from verifai_desktop import hub, offline
from verifai_desktop import settings as settings_mod
from verifai_desktop.domain import Progress
from verifai_desktop.errors import (
    Cancelled,
    CannotDelete,
    MissingExtra,
    ModelNotFound,
    OfflineError,
)
from verifai_desktop.modelstore.bundled import (
    BUNDLED_GENERATOR,
    bundled_gguf,
    has_verified_file,
    is_installed,
)
from verifai_desktop.modelstore.catalog import EXPORT_ONNX_VERIFIER, CatalogEntry, find_entry
from verifai_desktop.modelstore.hash_cache import remember_hash
from verifai_desktop.modelstore.resolution import (
    download_path,
    in_use,
    resolve,
    selected,
    set_role,
    use,
)
from verifai_desktop.private import make_private_dir, write_private_text
from verifai_desktop.settings import Settings

log = logging.getLogger(__name__)

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


def from_hub(entry: CatalogEntry) -> bool:
    """Whether :func:`pull` downloads ``entry`` from the Hub.

    True for a model that is not bundled and names a repository, and for a bundled generator
    whose part packages are not installed and whose file is not here yet, when the catalog
    names its Hub file and sha256 (the same file the parts assemble into, checked against the
    same sha256). Stats files only.
    """
    if not entry.bundled:
        return bool(entry.repo)
    gguf = bundled_gguf(entry.name) if entry.role == "generator" else None
    if gguf is None or not (entry.repo and entry.file and entry.sha256):
        return False
    return not is_installed(gguf) and not has_verified_file(gguf)


def hub_copy(entry: CatalogEntry) -> bool:
    """Whether ``entry`` is a bundled generator downloaded from the Hub (its file is here and
    its part packages are not installed): it can be deleted like a downloaded model."""
    gguf = bundled_gguf(entry.name) if entry.role == "generator" else None
    return gguf is not None and download_path(entry).is_file() and not is_installed(gguf)


def fallback(entry: CatalogEntry) -> str:
    """What the settings select for ``entry``'s role once ``entry`` is deleted: the role's
    default (:func:`~verifai_desktop.modelstore.resolution.in_use` of default settings),
    the default bundled generator where that default is ``entry`` itself (a downloaded 1.5B)."""
    default = in_use(Settings(), entry.role)
    return BUNDLED_GENERATOR if default == entry.name else default


class VerifierExporter(Protocol):
    """Exports a Hugging Face NLI checkpoint folder to an ONNX verifier folder.

    :func:`verifai_desktop.verify.export.export_verifier`, passed in by the front ends: the
    exporter belongs to the verifier stage, a layer above the model files.
    """

    def __call__(
        self,
        hf_dir: Path,
        out_dir: Path,
        /,
        *,
        int8: bool,
        progress: Callable[[Progress], None] | None,
    ) -> object:
        """Write the verifier folder ``out_dir`` from the checkpoint folder ``hf_dir``.

        Args:
            hf_dir: the downloaded checkpoint (``config.json``, weights, tokenizer files).
            out_dir: the folder to write (``model.onnx``, tokenizer, ``verifier.json``).
            int8: quantize the weights to int8 (the fp32 graph is then also written, as
                ``model_fp32.onnx``).
            progress: called with stage ``"export"`` after each step.

        Returns:
            What was written (not used here).

        Raises:
            MissingExtra: PyTorch, transformers or onnx is not installed.
            ModelLoadError: the checkpoint cannot be loaded or exported.
        """
        ...


def pull(
    name: str,
    *,
    exporter: VerifierExporter,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    activate: bool = False,
    settings: Settings | None = None,
) -> Path:
    """Download a catalog model from the Hugging Face Hub into the models dir; resume if
    an earlier download of it stopped.

    A bundled model is downloaded only where :func:`from_hub` says so (a bundled generator
    whose part packages are not installed); otherwise it is resolved (assembled) in place.
    Files are downloaded into :func:`staging_dir` (``<models dir>/.staging/<name>/files/``),
    each resumed from the bytes already there (:func:`verifai_desktop.hub.fetch`) and checked
    against its sha256 (the catalog's for a single file; the Hub's LFS sha256 or git blob id
    for the files of a folder) before it counts as done. Only a complete, checked model is
    moved into place (a catalog verifier with ``export = "onnx-verifier"`` is exported to ONNX
    first, by ``exporter``), and only then, with ``activate``, selected in the settings. Reaches
    the network only when the user has not set ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``; the
    app's own default of offline mode is lifted for this call
    (:func:`verifai_desktop.offline.hub_online`).

    Args:
        name: catalog name.
        exporter: turns a downloaded verifier checkpoint into an ONNX verifier folder
            (:func:`verifai_desktop.verify.export.export_verifier`; used only for a catalog
            entry with ``export = "onnx-verifier"``).
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
    if entry.bundled and not from_hub(entry):
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
    target = download_path(entry)
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
            built = _export_verifier(entry, files_dir, staging / "onnx", exporter, progress, cancel)
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
    exporter: VerifierExporter,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
) -> Path:
    """Export a downloaded NLI checkpoint to an ONNX verifier folder (int8, see
    :data:`EXPORT_INT8`); the fp32 graph is not kept."""
    if cancel is not None and cancel.is_set():
        raise Cancelled(f"download of {entry.name}")
    shutil.rmtree(out_dir, ignore_errors=True)  # an export that stopped half-way
    log.info("exporting %s to ONNX in %s", entry.name, out_dir)
    exporter(checkpoint, out_dir, int8=EXPORT_INT8, progress=progress)
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
            remember_hash(target, entry.sha256)
        return
    manifest = {
        "name": entry.name,
        "repo": entry.repo,
        "export": entry.export,
        "files": {
            r.path: {"size": size_in(built, r.path), "sha256": r.sha256, "git_sha1": r.git_sha1}
            for r in remotes
        },
        "verified": all(r.checkable for r in remotes),
    }
    write_private_text(built / MANIFEST_NAME, json.dumps(manifest, indent=1))
    if target.exists():
        _remove(target)
    os.replace(built, target)


def size_in(folder: Path, path: str) -> int | None:
    """Size in bytes of the file ``path`` (relative) in ``folder``, None if it is not there."""
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

    A model selected in the settings is replaced there by the role's default
    (:func:`fallback`: the bundled model; no LoRA), and the settings are saved.

    Args:
        name: catalog name of a downloaded model (a bundled generator only when it was
            downloaded from the Hub, :func:`hub_copy`).
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
    staging = staging_dir(entry)
    # A bundled model's file goes only when it came from the Hub; its partial download always.
    target = download_path(entry) if not entry.bundled or hub_copy(entry) else None
    if entry.bundled and target is None and not staging.exists():
        raise CannotDelete(name, "it is bundled with the app; choose another model instead")
    if (target is None or not target.exists()) and not staging.exists():
        raise CannotDelete(name, "it is not downloaded")
    settings = settings or settings_mod.load_settings()
    # An empty generator setting (automatic) stays so: it then means the best one left.
    automatic = entry.role == "generator" and not settings.models.generator
    if target is not None and selected(settings, entry) and not automatic:
        default = fallback(entry)
        log.info("%s was in use as the %s; back to %r", name, entry.role, default)
        settings = set_role(settings, entry.role, default)
    if target is not None and target.exists():
        _remove(target)
    shutil.rmtree(staging, ignore_errors=True)
    _remove_empty_dirs(staging.parent)
    return settings
