"""The core must never import Qt (Anki's one-way rule, enforced)."""

from __future__ import annotations

import subprocess
import sys

CORE_MODULES = [
    "verifai_desktop.domain",
    "verifai_desktop.errors",
    "verifai_desktop.settings",
    "verifai_desktop.cli",
    "verifai_desktop.modelstore",
    "verifai_desktop.hub",
    "verifai_desktop.hardware",
]


def test_core_imports_without_pyside6() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {CORE_MODULES!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
