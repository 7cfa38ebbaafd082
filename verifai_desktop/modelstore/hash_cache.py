"""The sha256 of model files, remembered by size and mtime so a 4 GB GGUF is hashed once.

The cache is ``sha256-cache.json`` in :func:`verifai_desktop.settings.models_dir`, keyed by the
resolved path. The hash itself is :func:`verifai_desktop.hashing.sha256_file`. Used by the
other parts of :mod:`verifai_desktop.modelstore` (assembly, resolution, download, inventory);
imports none of them.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from verifai_desktop import settings as settings_mod
from verifai_desktop.hashing import sha256_file
from verifai_desktop.private import make_private_dir, write_private_text

log = logging.getLogger(__name__)

_HASH_CACHE_NAME = "sha256-cache.json"


def _hash_cache_path() -> Path:
    return settings_mod.models_dir() / _HASH_CACHE_NAME


def _read_hash_cache() -> dict[str, dict[str, object]]:
    try:
        data = json.loads(_hash_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember_hash(path: Path, sha256: str) -> None:
    """Record ``sha256`` as the hash of ``path`` at its present size and mtime.

    A cache that cannot be written (a read-only data dir) is logged, not raised: it only costs
    a re-hash next time.
    """
    cache = _read_hash_cache()
    st = path.stat()
    cache[str(path.resolve())] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    cache_path = _hash_cache_path()
    try:
        make_private_dir(cache_path.parent)
        write_private_text(cache_path, json.dumps(cache, indent=1))
    except OSError as exc:
        log.warning("cannot write %s: %s", cache_path, exc)


def known_sha256(path: Path) -> str | None:
    """The sha256 of ``path`` if it was computed for its present size and mtime, else None.

    Never reads the file (the Models dialog lists a 4 GB GGUF without hashing it).
    """
    try:
        st = path.stat()
    except OSError:
        return None
    hit = _read_hash_cache().get(str(path.resolve()))
    if hit and hit.get("size") == st.st_size and hit.get("mtime_ns") == st.st_mtime_ns:
        return str(hit["sha256"])
    return None


def cached_sha256(path: Path) -> str:
    """sha256 of ``path``, cached by (size, mtime) so a 4 GB GGUF is hashed only once.

    Raises:
        OSError: ``path`` cannot be stat'ed.
        ParseError: it is not a regular file or cannot be read
            (:func:`verifai_desktop.hashing.sha256_file`).
    """
    known = known_sha256(path)
    if known is not None:
        return known
    st = path.stat()
    log.info("computing sha256 of %s (%.0f MB)", path, st.st_size / 1e6)
    sha = sha256_file(path)
    remember_hash(path, sha)
    return sha
