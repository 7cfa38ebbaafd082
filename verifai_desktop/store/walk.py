"""Walking the files and folders given to an ingest run (:func:`expand_paths`), and telling
whether a catalogued file is gone (:func:`is_gone`), without ever treating "could not be read"
as "deleted"."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FOLDER_SUFFIXES = frozenset(
    {".pdf", ".docx", ".pptx", ".epub", ".md", ".markdown", ".txt", ".text"}
)
"""File name suffixes picked up when walking a folder (files named explicitly are always tried)."""


@dataclass(frozen=True, slots=True)
class Walk:
    """What walking the given paths found.

    Attributes:
        files: files to ingest (resolved, sorted, unique).
        folders: the folders given (walked).
        unreadable: folders (given or found inside) that could not be listed, with the reason.
        external: files found in a folder that are symbolic links to a file outside every
            folder given, with their resolved target.
    """

    files: list[Path]
    folders: list[Path]
    unreadable: list[tuple[Path, str]]
    external: dict[Path, Path]


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # e.g. a parent folder that cannot be searched: reported as a file
        return False


def expand_paths(paths: Sequence[Path]) -> Walk:
    """Walk files and folders; unreadable folders are collected, never silently skipped."""
    files: dict[Path, None] = {}
    folders: list[Path] = []
    unreadable: list[tuple[Path, str]] = []
    links: list[Path] = []

    def on_error(exc: OSError) -> None:
        folder = Path(os.fsdecode(exc.filename)) if exc.filename else Path("?")
        reason = exc.strerror.lower() if exc.strerror else str(exc)
        unreadable.append((folder, f"folder cannot be read ({reason}); its files were skipped"))

    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if _is_dir(path):
            folders.append(path)
            for root, dirs, names in os.walk(path, onerror=on_error):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if name.startswith(".") or Path(name).suffix.lower() not in FOLDER_SUFFIXES:
                        continue
                    found = Path(root) / name
                    files.setdefault(found, None)
                    if os.path.islink(found):  # False, not an error, when lstat fails
                        links.append(found)
        else:
            files.setdefault(path, None)
    external: dict[Path, Path] = {}
    for link in links:
        target = Path(os.path.realpath(link))
        if not any(target.is_relative_to(folder) for folder in folders):
            external[link] = target
    return Walk(list(files), folders, unreadable, external)


def is_gone(source: str, unreadable: Sequence[Path]) -> bool:
    """Whether a catalogued file no longer exists; ``False`` when that cannot be told (a folder
    on its path cannot be read), so nothing is removed because it could not be read."""
    path = Path(source)
    if any(path.is_relative_to(folder) for folder in unreadable):
        return False
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False
