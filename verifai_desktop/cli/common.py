"""Helpers shared by the ``verifai`` sub-commands: JSON output, collection argument, errors."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from verifai_desktop.errors import (
    BeirCollectionMismatch,
    CollectionNotFound,
    EmbedderMismatch,
    HistoryCorrupt,
    IndexCorrupt,
    VerifaiError,
)
from verifai_desktop.names import dumps_json


def error_hint(exc: VerifaiError) -> str:
    """The command-line way to do what ``exc``'s message advises, as `` (...)``, or ``""``.

    Core messages fit the app and the command line alike; the CLI adds its flags here.
    """
    if isinstance(exc, CollectionNotFound):
        return f" (`verifai ingest PATH --collection {exc.name}`)"
    if isinstance(exc, HistoryCorrupt) and exc.collection:
        return f" (`verifai repair --history --collection {exc.collection}`)"
    if isinstance(exc, IndexCorrupt) and exc.collection:
        return f" (`verifai repair --collection {exc.collection}`)"
    if isinstance(exc, EmbedderMismatch | BeirCollectionMismatch):
        return " (--collection NAME)"
    return ""


def _at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{value} is below {least}; give {least} or more")
    return value


def positive_int(text: str) -> int:
    """An argparse ``type``: a whole number of 1 or more (else a usage error, exit 2).

    Raises:
        argparse.ArgumentTypeError: ``text`` is not an integer or is below 1.
    """
    return _at_least(text, 1)


def non_negative_int(text: str) -> int:
    """An argparse ``type``: a whole number of 0 or more (else a usage error, exit 2).

    Raises:
        argparse.ArgumentTypeError: ``text`` is not an integer or is below 0.
    """
    return _at_least(text, 0)


def add_collection_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--collection NAME`` (default ``default``)."""
    parser.add_argument(
        "--collection",
        "-c",
        default="default",
        help="collection name, spaces allowed (quote it); default: %(default)s",
    )


def add_json_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--json`` for machine-readable output on stdout."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON, always valid UTF-8.

    File names in ``data`` are expected as :func:`~verifai_desktop.names.name_json` fields; any
    undecodable byte left in some text is written escaped (:func:`~verifai_desktop.names.
    dumps_json`). On a terminal whose encoding cannot show a character, the same JSON is
    written with ``\\u`` escapes (ASCII).
    """
    text = dumps_json(data, indent=2, default=str)  # paths and enums as strings
    try:
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:
        sys.stdout.write(json.dumps(json.loads(text), indent=2) + "\n")
