"""Logging set-up shared by the command line and the desktop app (no Qt here)."""

from __future__ import annotations

import logging
import os

from verifai_desktop.settings import data_root


def setup_logging(verbose: bool = False, *, to_file: bool = True) -> None:
    """Log warnings (debug with ``verbose``) to stderr and INFO and up to ``<root>/verifai.log``.

    ``$VERIFAI_LOG_LEVEL`` overrides the console level.
    """
    level_name = os.environ.get("VERIFAI_LOG_LEVEL", "DEBUG" if verbose else "WARNING")
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    for h in list(root.handlers):
        root.removeHandler(h)
    console = logging.StreamHandler()
    console.setLevel(getattr(logging, level_name.upper(), logging.WARNING))
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(console)
    if to_file:
        try:
            log_dir = data_root()
            log_dir.mkdir(parents=True, exist_ok=True)
            fh = logging.FileHandler(log_dir / "verifai.log", encoding="utf-8")
        except OSError:
            return
        fh.setLevel(logging.INFO)
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(fh)
