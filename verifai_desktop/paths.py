"""Where VerifAI keeps its files: one data root (``$VERIFAI_HOME`` or the platform's user data
folder, platformdirs) with collections, models and the settings file under it. Re-exported by
:mod:`verifai_desktop.settings`."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "verifai-desktop"
HOME_ENV = "VERIFAI_HOME"


def data_root() -> Path:
    """The root folder of everything VerifAI stores (``$VERIFAI_HOME`` or the platform dir)."""
    env = os.environ.get(HOME_ENV)
    root = (
        Path(env).expanduser()
        if env
        else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    )
    return root


def collections_dir() -> Path:
    """Folder holding one sub-folder per named collection."""
    return data_root() / "collections"


def models_dir() -> Path:
    """Folder for model files VerifAI assembles or downloads (GGUF, ONNX exports)."""
    return data_root() / "models"


def settings_path() -> Path:
    """Path of the settings TOML file."""
    return data_root() / "settings.toml"
