"""Per-label thresholds in effect: a named preset from the verifier's model card, or custom.

Each verifier's model card (``presets`` in ``model_card.json``) holds the thresholds of the
``strict``, ``balanced`` and ``lenient`` presets, chosen on dev sets for a stated precision of
SUPPORT and CONTRADICT (``models/choose_thresholds.py``), with the precision and coverage each
reached there. A downloaded verifier carries its own; ``verify.preset = "custom"`` uses the
thresholds of the settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from verifai_desktop.settings import VerifySettings

Presets = Mapping[str, Mapping[str, float]]
"""Preset name -> ``{"support_threshold": ..., "contradict_threshold": ..., ...}``."""


def effective_thresholds(settings: VerifySettings, presets: Presets) -> VerifySettings:
    """``settings`` with the thresholds of its preset filled in.

    Args:
        settings: the verification settings (``preset`` names the thresholds).
        presets: the verifier's presets (its model card's ``presets``; empty when it has none).

    Returns:
        ``settings`` unchanged for ``custom`` or a preset the card lacks; otherwise a copy
        whose ``support_threshold`` and ``contradict_threshold`` are the preset's.
    """
    chosen = presets.get(settings.preset) if settings.preset != "custom" else None
    if not chosen:
        return settings
    return dataclasses.replace(
        settings,
        support_threshold=float(chosen["support_threshold"]),
        contradict_threshold=float(chosen["contradict_threshold"]),
    )
