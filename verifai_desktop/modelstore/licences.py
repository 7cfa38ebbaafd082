"""The licences of the models that come with the app, as their own files state them: the catalog
entry of each bundled model (:mod:`~verifai_desktop.modelstore.catalog`), the verifier's model
card (``model_card.json``: its base model and the licence of each training set) and the
embedder's export record (``embedder.json``, with ``ATTRIBUTION.md`` and ``LICENSE`` beside it).
Read for the app's Help menu; nothing is downloaded or loaded.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifai_desktop.modelstore.bundled import BUNDLED_GGUFS, is_installed
from verifai_desktop.modelstore.catalog import (
    BUNDLED_EMBEDDER_DIR,
    BUNDLED_VERIFIER_DIR,
    Role,
    load_catalog,
)

log = logging.getLogger(__name__)

VERIFIER_CARD = "model_card.json"
EMBEDDER_RECORD = "embedder.json"


@dataclass(frozen=True, slots=True)
class ModelLicence:
    """The licence of one bundled model.

    Attributes:
        name: catalog name.
        role: ``generator``, ``verifier`` or ``embedder``.
        licence: the licence of the weights (an SPDX id, or the card's words).
        notes: further licences the model card names (the base model, each training set),
            one line each; empty when it names none.
        installed: the model's files are on this machine (a bundled generator's packages may
            be an optional extra).
        licence_file: the licence text shipped beside the model, if any.
    """

    name: str
    role: Role
    licence: str
    notes: tuple[str, ...] = ()
    installed: bool = True
    licence_file: Path | None = None


def _read_json(path: Path) -> dict[str, Any]:
    """``path``'s JSON object, or ``{}`` when it cannot be read (logged)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("cannot read %s: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def _verifier_notes(folder: Path) -> tuple[str, ...]:
    card = _read_json(folder / VERIFIER_CARD)
    notes = [f"Base model: {card['base_model']}"] if card.get("base_model") else []
    for item in card.get("training_data", ()):
        if isinstance(item, dict) and item.get("name") and item.get("licence"):
            notes.append(f"Trained on {item['name']}: {item['licence']}")
    return tuple(notes)


def _embedder_notes(folder: Path) -> tuple[str, ...]:
    record = _read_json(folder / EMBEDDER_RECORD)
    notes = [f"Source: {record['source']}"] if record.get("source") else []
    if (folder / "ATTRIBUTION.md").is_file():
        notes.append(f"Attribution: {folder / 'ATTRIBUTION.md'}")
    return tuple(notes)


def bundled_licences() -> tuple[ModelLicence, ...]:
    """The licence of every bundled model, in catalog order.

    Raises:
        SettingsError: the model catalog cannot be read.
    """
    installed = {g.name: is_installed(g) for g in BUNDLED_GGUFS}
    out: list[ModelLicence] = []
    for entry in load_catalog():
        if not entry.bundled:
            continue
        notes: tuple[str, ...] = ()
        licence_file: Path | None = None
        if entry.role == "verifier" and (BUNDLED_VERIFIER_DIR / VERIFIER_CARD).is_file():
            notes = _verifier_notes(BUNDLED_VERIFIER_DIR)
        elif entry.role == "embedder" and (BUNDLED_EMBEDDER_DIR / EMBEDDER_RECORD).is_file():
            notes = _embedder_notes(BUNDLED_EMBEDDER_DIR)
            if (BUNDLED_EMBEDDER_DIR / "LICENSE").is_file():
                licence_file = BUNDLED_EMBEDDER_DIR / "LICENSE"
        out.append(
            ModelLicence(
                entry.name,
                entry.role,
                entry.licence,
                notes,
                installed.get(entry.name, True),
                licence_file,
            )
        )
    return tuple(out)
