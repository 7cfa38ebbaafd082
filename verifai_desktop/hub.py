"""Resumable downloads from the Hugging Face Hub: the only module that opens a network connection.

It is imported by :func:`verifai_desktop.modelstore.pull` and nothing else. Why not
``hf_hub_download``: huggingface_hub 2.x writes into an ``<name>.<random>.incomplete`` file
unique to the call and deletes it when the call fails (``file_download._download_to_tmp_and_move``),
so it resumes after a dropped connection within one call but never after Cancel, a crash or a
reboot; a 4.37 GB GGUF must not start again from zero then. This module keeps its own staging
file per repository file and drives huggingface_hub's own building blocks:

- :func:`huggingface_hub.get_hf_file_metadata`: the HEAD request, following the Hub's relative
  redirects, reading ``X-Repo-Commit``, ``ETag`` / ``X-Linked-Etag``, ``X-Linked-Size`` /
  ``Content-Length`` and ``Location`` (the CDN address of an LFS file), which is then fetched.
- :func:`huggingface_hub.file_download.http_get` with ``resume_size`` = the bytes on disk: it
  sends ``Range: bytes=N-`` and appends, retries a dropped connection from where it broke, and
  starts over when a server ignores the range (200 instead of 206).
- its ``tqdm_class`` hook, which sees every chunk: progress is reported and Cancel checked there
  (:class:`~verifai_desktop.errors.Cancelled` is raised between chunks; the bytes so far stay).

Files of one model live in a staging folder (the caller's, ``<models dir>/.staging/<model>/``):
``<path>.incomplete`` (the bytes so far), ``<path>.incomplete.json`` (the ETag, commit and size
they belong to: a file that changed on the Hub starts again from zero) and, once complete and
its checksum verified, ``<path>``. The caller moves finished files into place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from verifai_desktop import offline
from verifai_desktop.domain import Progress
from verifai_desktop.errors import Cancelled, ChecksumMismatch, ModelNotFound, OfflineError
from verifai_desktop.private import create_private_file, make_private_dir, write_private_text

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://huggingface.co"
ENDPOINT_ENV = "HF_ENDPOINT"

CHUNK_BYTES = 1 << 20
"""Bytes per read of a download (huggingface_hub's default is 10 MiB): Cancel and progress
answer within one chunk, about a second on a 1 MB/s line."""

INCOMPLETE_SUFFIX = ".incomplete"
STATE_SUFFIX = ".incomplete.json"
_HASH_BLOCK_BYTES = 8 << 20
_chunk_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """A file of a Hub repository and the checksum it must have.

    Attributes:
        path: path inside the repository (``"config.json"``, ``"model.gguf"``).
        size_bytes: its size in bytes; None where only the HEAD request will tell.
        sha256: hex sha256 it must have (the catalog's, or the LFS pointer's); empty if none.
        git_sha1: hex git blob id it must have (a small file kept in git, not in LFS); empty
            if none.
    """

    path: str
    size_bytes: int | None = None
    sha256: str = ""
    git_sha1: str = ""

    @property
    def checkable(self) -> bool:
        """Whether a checksum is known for the file."""
        return bool(self.sha256 or self.git_sha1)


def endpoint() -> str:
    """The Hub's address: ``$HF_ENDPOINT`` (a mirror, or a test server) or huggingface.co.

    Read at every call, unlike huggingface_hub, which reads it once at import.
    """
    return (os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT).rstrip("/")


def _unreachable(model: str, repo: str, exc: BaseException) -> OfflineError:
    return OfflineError(
        f"cannot download {model} from {repo}: the Hugging Face Hub is unreachable "
        f"({type(exc).__name__}); check the network connection and try again"
    )


PROBE_TIMEOUT_S = 5.0
"""How long the first connection to the Hub may take before it counts as unreachable (s)."""
PROXY_ENVS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _check_reachable(model: str, repo: str) -> None:
    """Open and close one TCP connection to :func:`endpoint`, so that a machine without a
    network hears so at once: huggingface_hub retries a refused connection with back-off for
    about 25 s before it gives up. Skipped behind a proxy (the proxy makes the connection).

    Raises:
        OfflineError: the connection is refused, times out or the name does not resolve.
    """
    if any(os.environ.get(name) for name in PROXY_ENVS):
        return
    url = urlsplit(endpoint())
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        raise _unreachable(model, repo, exc) from exc


@contextlib.contextmanager
def _talking_to_hub(model: str, repo: str) -> Iterator[None]:
    """Lift huggingface_hub's offline switch and turn its failures into VerifaiErrors.

    Raises:
        OfflineError: the Hub cannot be reached (checked first, :func:`_check_reachable`).
        ModelNotFound: the Hub has no such repository, revision or file.
    """
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub import errors as hf_errors

    _check_reachable(model, repo)
    with _chunk_lock:  # read by http_get at each call
        constants.DOWNLOAD_CHUNK_SIZE = CHUNK_BYTES
    try:
        with offline.hub_online():
            yield
    except (
        hf_errors.RepositoryNotFoundError,
        hf_errors.RevisionNotFoundError,
        hf_errors.EntryNotFoundError,
    ) as exc:
        raise ModelNotFound(
            model, f"the Hub has no such file in {repo} ({type(exc).__name__}); check the catalog"
        ) from exc
    except hf_errors.HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else 0
        if status >= 500 or status in (408, 429):
            raise _unreachable(model, repo, exc) from exc
        raise ModelNotFound(
            model, f"the Hub refused the download ({exc}); check the catalog entry"
        ) from exc
    except (httpx2.TransportError, ConnectionError, TimeoutError) as exc:
        raise _unreachable(model, repo, exc) from exc


def list_files(model: str, repo: str, *, revision: str = "main") -> tuple[RemoteFile, ...]:
    """Every file of a Hub repository with its size and checksum (``list_repo_tree``).

    LFS files carry the sha256 of their content; files kept in git carry their git blob id.

    Raises:
        OfflineError: the Hub cannot be reached.
        ModelNotFound: the repository or revision does not exist.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    out: list[RemoteFile] = []
    with _talking_to_hub(model, repo):
        api = HfApi(endpoint=endpoint())
        for item in api.list_repo_tree(repo, revision=revision, recursive=True):
            if not isinstance(item, RepoFile):
                continue
            if item.lfs is not None:
                out.append(RemoteFile(item.path, item.size, sha256=item.lfs.sha256))
            elif getattr(item, "xet_hash", None):
                out.append(RemoteFile(item.path, item.size))  # blob id is the pointer's
            else:
                out.append(RemoteFile(item.path, item.size, git_sha1=item.blob_id))
    return tuple(sorted(out, key=lambda f: f.path))


def _bar_class(on_bytes: Callable[[int], None]) -> type[Any]:
    """A stand-in for tqdm that ``http_get`` updates after each chunk it receives.

    ``http_get`` builds it as ``cls(total=..., initial=..., desc=..., unit=..., unit_scale=...)``,
    enters it as a context manager and calls ``update(len(chunk))`` before writing the chunk
    (``update(-n)`` when a server ignored the range and the file starts over).
    """

    class _Bar:
        def __init__(self, *args: object, initial: int = 0, **kwargs: object) -> None:
            self.n = int(initial or 0)

        def __enter__(self) -> _Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def update(self, n: int = 1) -> None:
            self.n += int(n)
            on_bytes(self.n)

    return _Bar


def _read_state(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def staged_bytes(folder: Path) -> int:
    """Bytes of downloaded data under a staging folder (finished and unfinished files)."""
    if not folder.is_dir():
        return 0
    return sum(
        p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and not p.name.endswith(STATE_SUFFIX)
    )


def fetch(
    model: str,
    repo: str,
    remote: RemoteFile,
    folder: Path,
    *,
    revision: str = "main",
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Download ``remote`` to ``folder / remote.path``, resuming what an earlier call left.

    The bytes go to ``<path>.incomplete``; a later call asks the Hub only for the rest
    (``Range: bytes=N-``) if the file's ETag, commit and size are unchanged. The finished file
    is checked against ``remote.sha256`` (or ``remote.git_sha1``) before it is renamed to
    ``<path>``; a mismatch deletes it. A ``<path>`` already there is returned at once (it was
    checked when it was renamed).

    Args:
        model: the model's name, for messages.
        repo: Hub repository id (``"TheBloke/Mistral-7B-Instruct-v0.2-GGUF"``).
        remote: the file and its checksum.
        folder: the model's staging folder.
        revision: branch, tag or commit.
        progress: called with stage ``"download"`` (bytes on disk of this file, its size)
            per chunk of :data:`CHUNK_BYTES`, then ``"verify"`` (bytes hashed) while checking.
        cancel: when set, :class:`Cancelled` is raised at the next chunk; the bytes so far are
            kept for the next call.

    Returns:
        The complete, checked file.

    Raises:
        OfflineError: the Hub cannot be reached (the bytes so far are kept).
        ModelNotFound: the Hub has no such repository, revision or file.
        ChecksumMismatch: the finished file has another checksum (it is deleted).
        Cancelled: ``cancel`` was set.
    """
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils._headers import build_hf_headers

    final = folder / remote.path
    if final.is_file():
        return final
    partial = final.with_name(final.name + INCOMPLETE_SUFFIX)
    state_path = final.with_name(final.name + STATE_SUFFIX)
    _check_cancel(cancel, model)
    with _talking_to_hub(model, repo):
        url = hf_hub_url(repo, remote.path, revision=revision, endpoint=endpoint())
        meta = get_hf_file_metadata(url, endpoint=endpoint())
        size = meta.size if meta.size is not None else remote.size_bytes
        state: dict[str, object] = {
            "repo": repo,
            "revision": revision,
            "etag": meta.etag,
            "commit": meta.commit_hash,
            "size": size,
        }
        resume = 0
        if partial.is_file():
            have = partial.stat().st_size
            if _read_state(state_path) == state and (size is None or have <= size):
                resume = have
            else:
                log.info("%s changed on the Hub or its state is lost; downloading anew", url)
        make_private_dir(final.parent)
        write_private_text(state_path, json.dumps(state))
        if not resume:
            partial.unlink(missing_ok=True)
            create_private_file(partial)
        if resume:
            log.info("resuming %s at %d of %s bytes", remote.path, resume, size)

        def on_bytes(done: int) -> None:
            _check_cancel(cancel, model)
            if progress is not None:
                progress(Progress("download", done, size, "bytes", remote.path))

        if progress is not None:
            message = f"{remote.path} (resuming)" if resume else remote.path
            progress(Progress("download", resume, size, "bytes", message))
        headers = build_hf_headers()
        headers["Accept-Encoding"] = "identity"  # ranges of the file, not of a gzip stream
        with partial.open("r+b") as fh:
            fh.seek(resume)
            fh.truncate()
            try:
                http_get(
                    meta.location,
                    fh,
                    resume_size=resume,
                    headers=headers,
                    expected_size=size,
                    displayed_filename=remote.path,
                    tqdm_class=cast(Any, _bar_class(on_bytes)),
                )
            except OSError as exc:
                if isinstance(exc, ConnectionError):
                    raise
                # http_get's size check ("Consistency check failed") or a write error: the
                # bytes on disk cannot be trusted to continue from.
                fh.close()
                _discard(partial, state_path)
                raise OfflineError(
                    f"the download of {model} ({remote.path}) failed: {exc}; try again"
                ) from exc
    _verify(model, remote, partial, state_path, progress=progress, cancel=cancel)
    os.replace(partial, final)
    state_path.unlink(missing_ok=True)
    return final


def _check_cancel(cancel: threading.Event | None, model: str) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled(f"download of {model}")


def _discard(*paths: Path) -> None:
    for p in paths:
        with contextlib.suppress(OSError):
            p.unlink()


def _verify(
    model: str,
    remote: RemoteFile,
    partial: Path,
    state_path: Path,
    *,
    progress: Callable[[Progress], None] | None,
    cancel: threading.Event | None,
) -> None:
    """Check the finished bytes against the expected checksum; delete them on a mismatch."""
    if not remote.checkable:
        log.warning("%s of %s has no known checksum; not checked", remote.path, model)
        return
    size = partial.stat().st_size
    if remote.sha256:
        digest = hashlib.sha256()
        expected, algorithm = remote.sha256.lower(), "sha256"
    else:
        digest = hashlib.sha1(usedforsecurity=False)
        digest.update(f"blob {size}\0".encode())
        expected, algorithm = remote.git_sha1.lower(), "git-sha1"
    done = 0
    with partial.open("rb") as fh:
        while block := fh.read(_HASH_BLOCK_BYTES):
            _check_cancel(cancel, model)
            digest.update(block)
            done += len(block)
            if progress is not None:
                progress(Progress("verify", done, size, "bytes", remote.path))
    actual = digest.hexdigest()
    if actual != expected:
        _discard(partial, state_path)
        raise ChecksumMismatch(model, remote.path, expected, actual, algorithm)
