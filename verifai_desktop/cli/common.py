"""Helpers shared by the ``verifai`` sub-commands: JSON output, collection argument, errors."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from verifai_desktop.cli.passwords import store_password_prompt
from verifai_desktop.errors import (
    BeirCollectionMismatch,
    CollectionNotFound,
    EmbedderMismatch,
    HistoryCorrupt,
    IndexCorrupt,
    VerifaiError,
)
from verifai_desktop.names import dumps_json
from verifai_desktop.settings import Settings
from verifai_desktop.store.collection import Collection
from verifai_desktop.store.pg.connect import is_store_url
from verifai_desktop.store.pg.credentials import KEYRING_SERVICE
from verifai_desktop.store.pg.store import PgStore


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


def add_store_arg(parser: argparse.ArgumentParser, *, acl: bool = False) -> None:
    """Add ``--store URL`` (a PostgreSQL store; default: the embedded store on this machine),
    and ``--acl GROUP`` when ``acl``."""
    parser.add_argument(
        "--store",
        metavar="URL",
        help="a PostgreSQL server holding the collection, postgresql://USER@HOST[:PORT]/DB"
        "[?sslmode=verify-full] (the password from PGPASSWORD, ~/.pgpass, the system keyring "
        f"(keyring set {KEYRING_SERVICE} USER@HOST:PORT/DB) or asked on a terminal, never in "
        "the URL; needs the 'postgres' extra); default: the collections on this machine",
    )
    if acl:
        parser.add_argument(
            "--acl",
            metavar="GROUP",
            help="with --store: the PostgreSQL role whose members may read the documents "
            "ingested (default: the collection's owner role)",
        )


def open_store(
    args: argparse.Namespace,
    *,
    create: bool = False,
    settings: Settings | None = None,
    embedder: str | None = None,
    reconcile: bool = True,
) -> Collection | PgStore:
    """The collection ``args.collection``, in the store ``args.store`` names (the embedded
    store when it is not given).

    Raises:
        VerifaiError: ``--store`` is not a postgresql:// URL, ``--acl`` without ``--store``,
            or what :meth:`Collection.open` / :meth:`PgStore.open` raise.
    """
    store: str | None = getattr(args, "store", None)
    acl: str | None = getattr(args, "acl", None)
    if store is None:
        if acl is not None:
            raise VerifaiError(
                "--acl needs --store postgresql://...: local collections are private"
            )
        return Collection.open(
            args.collection,
            create=create,
            settings=settings,
            embedder=embedder,
            reconcile=reconcile,
        )
    if not is_store_url(store):
        raise VerifaiError("--store takes a postgresql://USER@HOST/DATABASE URL")
    return PgStore.open(
        store,
        args.collection,
        create=create,
        settings=settings,
        embedder=embedder,
        acl=acl,
        password_prompt=store_password_prompt(),
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
