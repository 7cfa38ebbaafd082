"""What of the catalog is on this machine, in what state: ``verifai models list`` and the
Models dialog.

:func:`list_models` gives every catalog model with whether it is present, selected, checked
(:func:`sha256_state`, from remembered hashes and download manifests: nothing is hashed here)
and half-downloaded. The top of :mod:`verifai_desktop.modelstore`: reads what
:mod:`~verifai_desktop.modelstore.download` leaves and what
:mod:`~verifai_desktop.modelstore.resolution` selects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from verifai_desktop import hub
from verifai_desktop import settings as settings_mod
from verifai_desktop.modelstore.bundled import bundled_gguf
from verifai_desktop.modelstore.catalog import (
    BUNDLED_EMBEDDER,
    BUNDLED_EMBEDDER_DIR,
    BUNDLED_VERIFIER,
    BUNDLED_VERIFIER_DIR,
    CatalogEntry,
    load_catalog,
)
from verifai_desktop.modelstore.download import (
    MANIFEST_NAME,
    export_missing,
    from_hub,
    hub_copy,
    size_in,
    staging_dir,
)
from verifai_desktop.modelstore.hash_cache import known_sha256
from verifai_desktop.modelstore.resolution import download_path, is_present, selected
from verifai_desktop.settings import Settings

Sha256State = Literal["verified", "not checked", "mismatch"]
"""What is known of the integrity of a model's files (:func:`sha256_state`)."""


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
    target = download_path(entry)
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
        if size_in(target, path) != info.get("size"):
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
        downloaded: a downloaded copy is in the models dir (it can be deleted); for a bundled
            generator, a copy downloaded from the Hub while its part packages are not
            installed.
        size_bytes: bytes on disk when present; else the known download size (a bundled
            GGUF's, the catalog's), 0 where unknown.
        sha256: :func:`sha256_state` of the model.
        partial_bytes: bytes of an unfinished download waiting to be resumed (0 if none).
        needs: why the model cannot be downloaded or used as is here (a missing extra, with
            the pip command), empty otherwise.
        from_hub: a download from the Hugging Face Hub would install it
            (:func:`~verifai_desktop.modelstore.download.from_hub`: a recommended model, or a
            bundled generator whose part packages are not installed and is not here yet).
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
    from_hub: bool = False


def model_status(entry: CatalogEntry, settings: Settings) -> ModelStatus:
    """The local state of one catalog entry (cheap: stats files, hashes nothing)."""
    gguf = bundled_gguf(entry.name) if entry.role == "generator" else None
    present = is_present(entry)
    downloaded = download_path(entry).exists() if not entry.bundled else hub_copy(entry)
    if gguf is not None:
        size = gguf.size_bytes
    elif entry.name == BUNDLED_VERIFIER:
        size = _disk_bytes(BUNDLED_VERIFIER_DIR)
    elif entry.name == BUNDLED_EMBEDDER:
        size = _disk_bytes(BUNDLED_EMBEDDER_DIR)
    elif downloaded:
        size = _disk_bytes(download_path(entry))
    else:
        size = entry.size_bytes
    missing = None if downloaded else export_missing(entry)
    return ModelStatus(
        entry=entry,
        present=present,
        in_use=selected(settings, entry),
        extra=gguf.extra if gguf else "",
        downloaded=downloaded,
        size_bytes=size,
        sha256=sha256_state(entry),
        partial_bytes=(
            hub.staged_bytes(staging_dir(entry) / "files")
            if not entry.bundled or gguf is not None
            else 0
        ),
        needs=str(missing) if missing is not None else "",
        from_hub=from_hub(entry),
    )


def list_models(settings: Settings | None = None) -> tuple[ModelStatus, ...]:
    """Every catalog model with whether it is present, in use, checked, half-downloaded."""
    settings = settings or settings_mod.load_settings()
    return tuple(model_status(entry, settings) for entry in load_catalog())
