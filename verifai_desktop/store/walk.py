"""Walking the files and folders given to an ingest run (:func:`expand_paths`), and telling
whether a catalogued file is gone (:func:`is_gone`), without ever treating "could not be read"
as "deleted".

A folder walk skips hidden files and folders (names starting with ``.``: ``.git``,
``.Trash-1000``, editors' ``.~lock`` files), files of other kinds than :data:`FOLDER_SUFFIXES`,
and folders reached through symbolic links; :func:`reached_by_walk` applies the same rules to one
path under a folder, so that folder watching (:mod:`verifai_desktop.store.watch`) takes in
exactly what an ingest of the folder would.
"""

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
        files: files to ingest (sorted per folder, unique): resolved when named on their own,
            as found (links not resolved) when found in a folder.
        folders: the folders walked (given, or parts of a followed folder).
        unreadable: folders (given or found inside) that could not be listed, with the reason.
        external: files found in a folder that are symbolic links to a file outside every
            folder given (and every followed folder), with their resolved target.
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


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _walked_file(name: str) -> bool:
    """Whether a folder walk takes in a file of this name."""
    return not _hidden(name) and Path(name).suffix.lower() in FOLDER_SUFFIXES


def reached_by_walk(path: Path, folder: Path) -> bool:
    """Whether walking ``folder`` reaches ``path`` (the folder itself, or a file or folder
    under it): no name below ``folder`` is hidden, no folder on the way is a symbolic link
    (never followed), and a file is of a kind walked (:data:`FOLDER_SUFFIXES`).

    Args:
        path: an absolute path under ``folder`` (links not resolved); it may be gone.
        folder: an absolute, resolved folder.

    Returns:
        False also when ``path`` is not under ``folder``.
    """
    if not path.is_relative_to(folder):
        return False
    parts = path.relative_to(folder).parts
    if any(_hidden(p) for p in parts):
        return False
    for depth in range(1, len(parts)):
        if os.path.islink(folder.joinpath(*parts[:depth])):
            return False
    if not parts:
        return True
    if _is_dir(path):
        return not os.path.islink(path)
    return _walked_file(parts[-1])


def expand_paths(paths: Sequence[Path], within: Sequence[Path] = ()) -> Walk:
    """Walk files and folders; unreadable folders are collected, never silently skipped.

    Args:
        paths: files and folders; a path given on its own is resolved (a link named by the
            user is followed), unless it lies under one of ``within``.
        within: folders already followed (absolute, resolved: a watched folder). A path under
            one is taken as a part of that folder's walk: kept only when the walk reaches it
            (:func:`reached_by_walk`), not resolved, and a link among its files is judged
            against these folders as well as those given.

    Returns:
        What was found.
    """
    files: dict[Path, None] = {}
    folders: list[Path] = []
    unreadable: list[tuple[Path, str]] = []
    links: list[Path] = []

    def on_error(exc: OSError) -> None:
        folder = Path(os.fsdecode(exc.filename)) if exc.filename else Path("?")
        reason = exc.strerror.lower() if exc.strerror else str(exc)
        unreadable.append((folder, f"folder cannot be read ({reason}); its files were skipped"))

    def found(path: Path) -> None:
        files.setdefault(path, None)
        if os.path.islink(path):  # False, not an error, when lstat fails
            links.append(path)

    for raw in paths:
        path = Path(os.path.abspath(Path(raw).expanduser()))
        owner = next((f for f in within if path.is_relative_to(f)), None)
        if owner is None:
            path = Path(raw).expanduser().resolve()
        elif not reached_by_walk(path, owner):
            continue
        if not _is_dir(path):
            if owner is None:
                files.setdefault(path, None)
            else:
                found(path)
            continue
        folders.append(path)
        for root, dirs, names in os.walk(path, onerror=on_error):
            dirs[:] = sorted(d for d in dirs if not _hidden(d))
            for name in sorted(names):
                if _walked_file(name):
                    found(Path(root) / name)
    bounds = [*folders, *within]
    external: dict[Path, Path] = {}
    for link in links:
        target = Path(os.path.realpath(link))
        if not any(target.is_relative_to(folder) for folder in bounds):
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
