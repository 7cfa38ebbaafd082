"""User-only files and folders: everything VerifAI writes is mode 0700 (folders) or 0600 (files).

A collection holds the decrypted text of the documents put in it (password-protected PDFs
included), so nothing under the data root may be readable by other local users, whatever the
process umask. Files are created with the private mode where VerifAI creates them itself; the
files third-party engines write (Tantivy segments, SQLite's ``-wal``/``-shm``) are tightened
after each commit and whenever a collection opens, inside folders no one else may enter.
On Windows the modes mean little (ACLs rule); the calls are harmless there.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) as user-only folders; tighten it if it exists.

    Only the folders created here and ``path`` itself are changed, never existing parents
    other than ``path`` (the data root's parent may be the user's home).

    Returns:
        ``path``.

    Raises:
        OSError: the folder cannot be created.
    """
    missing: list[Path] = []
    cur = path
    while not cur.exists() and cur != cur.parent:
        missing.append(cur)
        cur = cur.parent
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    for folder in (*missing, path):
        _chmod(folder, DIR_MODE)
    return path


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if missing; tighten it to 0600 if present.

    Raises:
        OSError: the file cannot be created.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    os.close(fd)
    _chmod(path, FILE_MODE)


def write_private_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (temp file, then rename), mode 0600.

    Raises:
        OSError: the file cannot be written.
    """
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    _chmod(tmp, FILE_MODE)  # an older temp file left behind keeps its mode under O_CREAT
    os.replace(tmp, path)


def tighten(path: Path) -> None:
    """Make ``path`` and everything under it user-only (folders 0700, files 0600).

    Symbolic links are not followed; entries that vanish meanwhile or that belong to another
    user are skipped (logged). Cheap: one ``lstat`` per entry, ``chmod`` only when needed.
    """
    _chmod(path, DIR_MODE if path.is_dir() else FILE_MODE)
    if not path.is_dir() or path.is_symlink():
        return
    for root, dirs, files in os.walk(path):
        for name in dirs:
            _chmod(Path(root, name), DIR_MODE)
        for name in files:
            _chmod(Path(root, name), FILE_MODE)


def _chmod(path: Path, mode: int) -> None:
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode) or stat.S_IMODE(st.st_mode) == mode:
            return
        os.chmod(path, mode)
    except FileNotFoundError:
        return
    except OSError as exc:
        log.warning("could not make %s private: %s", path, exc)
