"""Helpers shared by the ``verifai`` sub-commands: JSON output, collection argument, errors."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_collection_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--collection NAME`` (default ``default``)."""
    parser.add_argument(
        "--collection", "-c", default="default", help="collection name (default: %(default)s)"
    )


def add_json_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--json`` for machine-readable output on stdout."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON (paths and enums as strings)."""
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
