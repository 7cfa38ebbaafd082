"""User-only files and folders: everything VerifAI writes is mode 0700 (folders) or 0600 (files).

A collection holds the decrypted text of the documents put in it (password-protected PDFs
included), so nothing under the data root may be readable by other local users, whatever the
process umask. Files are created with the private mode where VerifAI creates them itself; the
files third-party engines write (Tantivy segments, SQLite's ``-wal``/``-shm``) are tightened
after each commit and whenever a collection opens, inside folders no one else may enter.
On Windows the modes mean little (ACLs rule); the calls are harmless there.

Exports the user asks for (an answer, an audit record and its HTML view, feedback for
training) hold document text too: :func:`export_private_texts` writes them 0600, whole or not
at all (temp files beside their targets, renamed into place only once every one is written).
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from verifai_desktop.errors import ExportFailed

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


def export_private_texts(files: Sequence[tuple[Path | str, str]], *, what: str) -> None:
    """Write each ``(path, text)`` as UTF-8, mode 0600, all of them or none.

    Every text goes to a temp file in its target's folder (flushed to disk); only when all
    are written are they renamed over their targets, so a failure (a full disk, a folder that
    is missing or read-only) leaves every target as it was and no temp file behind. A target
    that is a folder, a device (``/dev/full``) or a pipe is refused: renaming over it would
    replace it, so it is not written at all.

    Args:
        files: the targets and their texts; ``""`` as a path is refused.
        what: what is written, for the error (``"audit record"``).

    Raises:
        ExportFailed: a target cannot be written; it names the file and what to do.
    """
    targets = [(export_target(path, what), text) for path, text in files]
    temps: list[tuple[Path, Path]] = []
    placed: list[Path] = []
    current = targets[0][0] if targets else Path()
    try:
        for current, text in targets:
            fd, name = tempfile.mkstemp(
                dir=current.parent, prefix=f".{current.name}.", suffix=".tmp"
            )
            temps.append((Path(name), current))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        for tmp, current in temps:
            existed = current.exists()
            os.replace(tmp, current)
            if not existed:
                placed.append(current)
    except BaseException as exc:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
        for done in placed:  # a later rename failed: take back the files that were new
            done.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise ExportFailed(current, what, exc) from exc
        raise


def export_target(path: Path | str, what: str) -> Path:
    """``path`` as the target of an export, checked before anything is rendered or written.

    Args:
        path: where the user asked for the export.
        what: what is exported, for the error (``"answer"``).

    Returns:
        ``path`` as a :class:`~pathlib.Path`: missing, or an existing regular file.

    Raises:
        ExportFailed: ``path`` is empty, a folder, a device or a pipe, or cannot be looked at.
    """
    if not str(path).strip():
        raise ExportFailed(path, what, "no file name given; give the path of a file to write")
    target = Path(path)
    try:
        st = target.stat()
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise ExportFailed(path, what, exc) from exc
    if stat.S_ISDIR(st.st_mode):
        raise ExportFailed(path, what, "it is a folder; give a file name inside it")
    if not stat.S_ISREG(st.st_mode):
        raise ExportFailed(
            path, what, "it is a device or a pipe, not a file; give the path of a file to write"
        )
    return target


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
