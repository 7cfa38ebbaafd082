"""Where the app's icons, style sheet and sample documents are (inside the installed package)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QToolButton

RESOURCES_DIR = Path(__file__).resolve().parents[1] / "resources"
SAMPLE_DIR = RESOURCES_DIR / "sample"
SAMPLE_COLLECTION = "sample"


def icon(name: str) -> QIcon:
    """The SVG icon ``resources/icons/<name>.svg`` (an empty icon if it is missing)."""
    path = RESOURCES_DIR / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()


def tool_button(icon_name: str, tip: str) -> QToolButton:
    """A tool button showing icon ``icon_name``, with ``tip`` as tooltip and accessible name."""
    button = QToolButton()
    button.setIcon(icon(icon_name))
    button.setToolTip(tip)
    button.setAccessibleName(tip)
    return button


def stylesheet() -> str:
    """The application style sheet (``resources/style.qss``), '' if missing."""
    path = RESOURCES_DIR / "style.qss"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def sample_files() -> list[Path]:
    """The sample collection's documents, sorted."""
    return sorted(p for p in SAMPLE_DIR.iterdir() if p.is_file()) if SAMPLE_DIR.is_dir() else []
