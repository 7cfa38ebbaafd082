"""Collection names: the folder a collection lives in, and the name a user gives it.

A collection's folder name is restricted (letters, digits, ``-``, ``_``, ``.``; at most 80
characters) so that it is a safe file name on every platform. The name a user sees and types
(its *display name*) may be anything printable: "Grant proposals 2026", "Études", "Q3 / Q4".
It is kept in ``collection.toml`` (``display_name``); a collection made with a valid folder
name has none and shows its folder name.

Commands and the app accept either: :func:`resolve` turns what the user typed into the folder
of an existing collection, or into the folder a new one gets (:func:`folder_for_new`).
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from verifai_desktop.errors import InvalidCollectionName
from verifai_desktop.private import write_private_text
from verifai_desktop.settings import collections_dir

CONFIG_FILE = "collection.toml"
MAX_NAME_CHARS = 80

_FOLDER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
_NOT_FOLDER_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class CollectionName:
    """One existing collection's names.

    Attributes:
        folder: its folder under ``collections_dir()`` (what ``--collection`` also accepts).
        display: the name shown to the user (the folder name when none was given).
    """

    folder: str
    display: str


def is_folder_name(name: str) -> bool:
    """True if ``name`` can be used as a collection folder as it is."""
    return bool(_FOLDER_RE.match(name)) and name not in {".", ".."}


def validate_name(name: str) -> str:
    """Return ``name`` if it is a valid collection *folder* name.

    Raises:
        InvalidCollectionName: it is not.
    """
    if not is_folder_name(name):
        raise InvalidCollectionName(name)
    return name


def validate_display_name(name: str) -> str:
    """``name`` with surrounding white space removed, if it can name a collection.

    Any printable text of 1 to :data:`MAX_NAME_CHARS` characters (spaces and non-ASCII
    letters included).

    Raises:
        InvalidCollectionName: empty, too long, or holding control characters.
    """
    text = name.strip()
    if not text or len(text) > MAX_NAME_CHARS:
        raise InvalidCollectionName(name)
    if any(unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp"} for ch in text):
        raise InvalidCollectionName(name)
    return text


def slug(name: str) -> str:
    """A folder name made from a display name ("Grant proposals 2026" -> "Grant-proposals-2026").

    Accents are dropped (NFKD), runs of other characters become ``-``; ``"collection"`` when
    nothing usable is left.
    """
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = _NOT_FOLDER_CHARS.sub("-", ascii_text).strip("-._")[:MAX_NAME_CHARS].rstrip("-._")
    return text or "collection"


def read_config(folder: Path) -> dict[str, object]:
    """The parsed ``collection.toml`` of a collection folder.

    Raises:
        OSError: it cannot be read.
        tomllib.TOMLDecodeError: it is not TOML.
    """
    return tomllib.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))


def write_config(folder: Path, config: dict[str, object]) -> None:
    """Write ``collection.toml`` atomically (user-only, temp file then rename)."""
    write_private_text(folder / CONFIG_FILE, tomli_w.dumps(config))


def display_name_of(folder: Path) -> str:
    """The display name recorded in a collection folder, or the folder name."""
    try:
        value = read_config(folder).get("display_name")
    except (OSError, tomllib.TOMLDecodeError):
        value = None
    return value if isinstance(value, str) and value else folder.name


def list_folders() -> list[Path]:
    """The folders of the existing collections (repair staging folders left out)."""
    root = collections_dir()
    if not root.is_dir():
        return []
    return [p for p in root.iterdir() if (p / CONFIG_FILE).is_file() and not p.name.startswith(".")]


def list_names() -> list[CollectionName]:
    """Every existing collection's folder and display name, sorted by display name."""
    names = [CollectionName(p.name, display_name_of(p)) for p in list_folders()]
    return sorted(names, key=lambda n: (n.display.casefold(), n.folder))


def find(name: str) -> CollectionName | None:
    """The existing collection ``name`` refers to: by folder name first, then by display name
    (exactly, then ignoring case and surrounding spaces); ``None`` if there is none."""
    if is_folder_name(name) and (collections_dir() / name / CONFIG_FILE).is_file():
        return CollectionName(name, display_name_of(collections_dir() / name))
    names = list_names()
    for n in names:
        if n.display == name:
            return n
    key = name.strip().casefold()
    matches = [n for n in names if n.display.casefold() == key]
    return matches[0] if len(matches) == 1 else None


def folder_for_new(name: str) -> tuple[str, str | None]:
    """The folder a new collection called ``name`` gets, and the display name to record.

    A valid folder name is used as it is (no display name recorded); any other name gets a
    folder made by :func:`slug`, with ``-2``, ``-3``... added while that folder is taken.

    Raises:
        InvalidCollectionName: ``name`` cannot name a collection.
    """
    if is_folder_name(name):
        return name, None
    display = validate_display_name(name)
    if is_folder_name(display):
        return display, None
    base = slug(display)
    root = collections_dir()
    candidate, n = base, 1
    while (root / candidate).exists():
        n += 1
        suffix = f"-{n}"
        candidate = base[: MAX_NAME_CHARS - len(suffix)] + suffix
    return candidate, display


def resolve(name: str) -> str:
    """The folder of the existing collection ``name`` refers to, else the folder a new one of
    that name would get.

    Raises:
        InvalidCollectionName: no such collection and ``name`` cannot name one.
    """
    found = find(name)
    return found.folder if found is not None else folder_for_new(name)[0]
