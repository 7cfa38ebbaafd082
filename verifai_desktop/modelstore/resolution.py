"""Which model file or folder a name stands for, and which models the settings select.

:func:`resolve` turns a catalog name or a path into a :class:`ModelIdentity` (assembling a
bundled GGUF on first use, :mod:`~verifai_desktop.modelstore.bundled`); :func:`use` selects a
model for its role and saves the settings. Builds on
:mod:`~verifai_desktop.modelstore.catalog`; :mod:`~verifai_desktop.modelstore.download` and
:mod:`~verifai_desktop.modelstore.inventory` build on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop import settings as settings_mod
from verifai_desktop.domain import Progress
from verifai_desktop.errors import ModelLoadError, ModelNotFound, SettingsError
from verifai_desktop.modelstore.bundled import (
    best_installed_generator,
    bundled_gguf,
    bundled_gguf_parts,
    ensure_bundled_gguf,
)
from verifai_desktop.modelstore.catalog import (
    BUNDLED_EMBEDDER,
    BUNDLED_EMBEDDER_DIR,
    BUNDLED_VERIFIER,
    BUNDLED_VERIFIER_DIR,
    CatalogEntry,
    Role,
    find_entry,
    load_catalog,
)
from verifai_desktop.modelstore.hash_cache import cached_sha256
from verifai_desktop.settings import Settings


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


def download_path(entry: CatalogEntry) -> Path:
    """Where ``verifai models pull`` puts a catalog model (it may not be there yet)."""
    base = settings_mod.models_dir()
    return base / entry.file if entry.file else base / entry.name.replace("/", "--")


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
    return download_path(entry).exists()


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

    A catalog name of ``role`` wins; otherwise ``name_or_path`` is taken as a path. An empty
    generator name means the best bundled generator installed
    (:func:`~verifai_desktop.modelstore.bundled.best_installed_generator`). A bundled GGUF
    (:data:`~verifai_desktop.modelstore.bundled.BUNDLED_GGUFS`) is assembled on first use.

    Returns:
        The model's identity (name, path, sha256).

    Raises:
        ModelNotFound: neither a present catalog model nor an existing path.
        ModelLoadError: a file's sha256 does not match the catalog.
    """
    if role == "generator" and not name_or_path.strip():
        name_or_path = best_installed_generator()
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
        local = download_path(entry)
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
    """The name or path the settings select for ``role`` (``""`` for no LoRA; for an empty
    generator, the bundled one it means)."""
    models = settings.models
    return {
        "generator": models.generator or best_installed_generator(),
        "lora": models.lora_path,
        "verifier": models.verifier,
        "embedder": models.embedder,
    }[role]


def set_role(settings: Settings, role: Role, value: str) -> Settings:
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


def selected(settings: Settings, entry: CatalogEntry) -> bool:
    """Whether the settings select ``entry`` for its role (by name, or by its local path)."""
    chosen = in_use(settings, entry.role)
    if not chosen:
        return False
    return chosen == entry.name or (not entry.bundled and chosen == str(download_path(entry)))


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
    return chosen_role, set_role(settings, chosen_role, value)
