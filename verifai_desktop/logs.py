"""Logging set-up shared by the command line and the desktop app (no Qt here)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from verifai_desktop.private import create_private_file, make_private_dir
from verifai_desktop.settings import data_root

LOG_FILE = "verifai.log"


def log_path() -> Path:
    """Where the log file is written (under the data root)."""
    return data_root() / LOG_FILE


def setup_logging(verbose: bool = False, *, to_file: bool = True) -> None:
    """Log warnings (debug with ``verbose``) to stderr and INFO and up to ``<root>/verifai.log``.

    The log file and the data root are user-only (0600 / 0700).

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
            make_private_dir(data_root())
            path = log_path()
            create_private_file(path)  # questions and file names end up in the log
            fh = logging.FileHandler(path, encoding="utf-8")
        except OSError:
            return
        fh.setLevel(logging.INFO)
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(fh)
