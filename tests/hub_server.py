"""A local Hugging Face Hub for tests: the file-download protocol huggingface_hub 2.x speaks.

Two stdlib ``http.server`` instances on 127.0.0.1 with ephemeral ports, each in a daemon thread:

- the Hub (point ``HF_ENDPOINT`` at :attr:`LocalHub.endpoint`):
  ``HEAD|GET /{repo}/resolve/{revision}/{path}``. A file kept in git is answered directly (200,
  ``ETag`` = its git blob id, ``X-Repo-Commit``, ``Content-Length``); an LFS file with a 302 to
  the CDN carrying ``X-Linked-Etag`` (its sha256), ``X-Linked-Size``, ``X-Repo-Commit`` and an
  absolute ``Location``, as huggingface.co does. ``GET /api/models/{repo}/tree/{revision}``
  lists the files (``path``, ``size``, ``oid``, ``lfs: {oid, size, pointerSize}``). Unknown
  repositories and files get 404 with ``X-Error-Code`` ``RepoNotFound`` / ``EntryNotFound``.
- the CDN, on another port (another origin, so huggingface_hub stops at the 302 and reads the
  metadata there): ``GET /cdn/{sha256}`` serves the bytes, honouring ``Range: bytes=N-`` and
  ``bytes=N-M`` with 206 and ``Content-Range``.

Faults, each on the first GET of a file's bytes only: :meth:`LocalHub.drop_after` sends N bytes
of a full-length response and closes the connection; :meth:`LocalHub.hold_after` sends N bytes
and waits (at most ``hold_s``) for :attr:`LocalHub.release` before sending the rest. Every
request is recorded (:attr:`LocalHub.requests`), with the size the file given to
:meth:`LocalHub.watch` (the client's partial download) had when the request arrived. Both
servers stop by themselves after ``lifetime_s`` even if :meth:`LocalHub.close` is never called.
"""

from __future__ import annotations

import hashlib
import json
import socket
import sys
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the server saw it."""

    server: str  # "hub" or "cdn"
    method: str
    path: str
    headers: dict[str, str]
    watched_bytes: int | None = None  # size of the watched file when the request arrived


@dataclass
class _File:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def git_sha1(self) -> str:
        return hashlib.sha1(b"blob %d\0" % len(self.data) + self.data).hexdigest()


@dataclass
class _Fault:
    kind: str  # "drop" or "hold"
    after_bytes: int
    used: bool = False


@dataclass
class _State:
    repos: dict[str, dict[str, _File]] = field(default_factory=dict)
    faults: dict[str, _Fault] = field(default_factory=dict)  # by sha256 of the file
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class LocalHub:
    """The Hub and its CDN on 127.0.0.1; a context manager that stops both on exit.

    Args:
        lifetime_s: both servers shut down by themselves after this many seconds.
        hold_s: the longest a held download waits for :attr:`release`.
    """

    def __init__(self, *, lifetime_s: float = 120.0, hold_s: float = 30.0) -> None:
        self._state = _State()
        self.release = threading.Event()
        self.hold_s = hold_s
        self._watched: Path | None = None
        self._hub = _Server(("127.0.0.1", 0), _handler(self, "hub"))
        self._cdn = _Server(("127.0.0.1", 0), _handler(self, "cdn"))
        self.endpoint = f"http://127.0.0.1:{self._hub.server_address[1]}"
        self.cdn = f"http://127.0.0.1:{self._cdn.server_address[1]}"
        self._threads = [
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for s in (self._hub, self._cdn)
        ]
        for t in self._threads:
            t.start()
        self._timer = threading.Timer(lifetime_s, self.close)
        self._timer.daemon = True
        self._timer.start()

    # -- content ----------------------------------------------------------------------------

    def add_file(self, repo: str, path: str, data: bytes, *, lfs: bool = True) -> str:
        """Serve ``data`` as ``path`` of ``repo``; returns its sha256."""
        with self._state.lock:
            f = _File(data, lfs)
            self._state.repos.setdefault(repo, {})[path] = f
            return f.sha256

    def drop_after(self, repo: str, path: str, n_bytes: int) -> None:
        """The first GET of the file's bytes sends ``n_bytes`` and closes the connection."""
        with self._state.lock:
            sha = self._state.repos[repo][path].sha256
            self._state.faults[sha] = _Fault("drop", n_bytes)

    def hold_after(self, repo: str, path: str, n_bytes: int) -> None:
        """The first GET of the file's bytes sends ``n_bytes``, then waits for :attr:`release`."""
        with self._state.lock:
            sha = self._state.repos[repo][path].sha256
            self._state.faults[sha] = _Fault("hold", n_bytes)

    def watch(self, path: Path) -> None:
        """Record the size of ``path`` (if it exists) with every later request."""
        self._watched = path

    @property
    def requests(self) -> list[Request]:
        """Every request so far, in order."""
        with self._state.lock:
            return list(self._state.requests)

    def byte_requests(self, repo: str, path: str) -> list[Request]:
        """The GETs of a file's bytes (CDN for LFS files, resolve for git files)."""
        with self._state.lock:
            f = self._state.repos[repo][path]
        want = f"/cdn/{f.sha256}" if f.lfs else None
        return [
            r
            for r in self.requests
            if r.method == "GET"
            and (r.path.split("?")[0] == want if want else r.path.endswith(f"/resolve/main/{path}"))
        ]

    # -- life -------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop both servers (idempotent)."""
        self.release.set()
        self._timer.cancel()
        for s in (self._hub, self._cdn):
            if not s.stopped:
                s.stopped = True
                s.shutdown()
                s.server_close()

    def __enter__(self) -> LocalHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving (called by the handler threads) -------------------------------------------

    def _record(self, server: str, handler: BaseHTTPRequestHandler) -> None:
        watched = self._watched
        size = watched.stat().st_size if watched is not None and watched.is_file() else None
        headers = dict(handler.headers.items())
        with self._state.lock:
            self._state.requests.append(
                Request(server, handler.command, handler.path, headers, size)
            )

    def _lookup(self, repo: str, path: str) -> tuple[_File | None, str]:
        with self._state.lock:
            files = self._state.repos.get(repo)
            if files is None:
                return None, "RepoNotFound"
            f = files.get(path)
            return f, "" if f is not None else "EntryNotFound"

    def _by_sha(self, sha: str) -> _File | None:
        with self._state.lock:
            for files in self._state.repos.values():
                for f in files.values():
                    if f.lfs and f.sha256 == sha:
                        return f
        return None

    def _take_fault(self, sha: str) -> _Fault | None:
        with self._state.lock:
            fault = self._state.faults.get(sha)
            if fault is None or fault.used:
                return None
            fault.used = True
            return fault

    def _tree(self, repo: str) -> list[dict[str, object]] | None:
        with self._state.lock:
            files = self._state.repos.get(repo)
            if files is None:
                return None
            out: list[dict[str, object]] = []
            for path, f in sorted(files.items()):
                item: dict[str, object] = {"type": "file", "path": path, "size": len(f.data)}
                if f.lfs:
                    item["oid"] = hashlib.sha1(path.encode()).hexdigest()  # the pointer's id
                    item["lfs"] = {"oid": f.sha256, "size": len(f.data), "pointerSize": 134}
                else:
                    item["oid"] = f.git_sha1
                out.append(item)
            return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stopped = False

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that stops reading (Cancel, Ctrl+C, a dropped connection) is a test's
        # intent, not a server fault.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def _handler(hub: LocalHub, server: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_HEAD(self) -> None:
            hub._record(server, self)
            self._route(send_body=False)

        def do_GET(self) -> None:
            hub._record(server, self)
            self._route(send_body=True)

        def _route(self, *, send_body: bool) -> None:
            url = urllib.parse.urlsplit(self.path)
            parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
            if server == "cdn":
                f = hub._by_sha(parts[1]) if len(parts) == 2 and parts[0] == "cdn" else None
                if f is None:
                    self._error(404, "EntryNotFound")
                else:
                    self._bytes(f, send_body=send_body, etag=f.sha256)
                return
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
                tree = hub._tree(f"{parts[2]}/{parts[3]}")
                if tree is None:
                    self._error(404, "RepoNotFound")
                else:
                    self._json(tree)
                return
            if len(parts) >= 5 and parts[2] == "resolve":
                repo, path = f"{parts[0]}/{parts[1]}", "/".join(parts[4:])
                f, code = hub._lookup(repo, path)
                if f is None:
                    self._error(404, code)
                elif f.lfs:
                    self.send_response(302)
                    self.send_header("Location", f"{hub.cdn}/cdn/{f.sha256}?signed=test")
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("X-Linked-Etag", f'"{f.sha256}"')
                    self.send_header("X-Linked-Size", str(len(f.data)))
                    self.send_header("ETag", f'"{hashlib.sha1(path.encode()).hexdigest()}"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._bytes(f, send_body=send_body, etag=f.git_sha1)
                return
            self._error(404, "RepoNotFound")

        def _error(self, status: int, code: str) -> None:
            body = json.dumps({"error": code}).encode()
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, data: object) -> None:
            body = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _bytes(self, f: _File, *, send_body: bool, etag: str) -> None:
            data = f.data
            start, end = 0, len(data) - 1
            ranged = self.headers.get("Range", "")
            if ranged.startswith("bytes="):
                first, _, last = ranged[len("bytes=") :].partition("-")
                start = int(first)
                end = int(last) if last else end
            if start >= len(data) and data:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = data[start : end + 1]
            self.send_response(206 if ranged else 200)
            if ranged:
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", f'"{etag}"')
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not send_body:
                return
            fault = hub._take_fault(f.sha256)
            if fault is None:
                self.wfile.write(body)
                return
            self.wfile.write(body[: fault.after_bytes])
            self.wfile.flush()
            if fault.kind == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            hub.release.wait(hub.hold_s)
            self.wfile.write(body[fault.after_bytes :])

    return Handler


def catalog_entry(
    name: str,
    role: str,
    repo: str,
    *,
    file: str = "",
    sha256: str = "",
    export: str = "",
    licence: str = "Apache-2.0",
) -> str:
    """One ``[[model]]`` table of a catalog, for :func:`write_catalog`."""
    lines = [
        "[[model]]",
        f'name = "{name}"',
        f'role = "{role}"',
        "bundled = false",
        'source = "local test Hub"',
        f'repo = "{repo}"',
        f'file = "{file}"',
        f'sha256 = "{sha256}"',
        f'licence = "{licence}"',
        f'description = "{name}, served by tests/hub_server.py"',
    ]
    if export:
        lines.append(f'export = "{export}"')
    return "\n".join(lines) + "\n"


def write_catalog(path: Path, *entries: str) -> Path:
    """The packaged catalog followed by ``entries``, written to ``path``."""
    from verifai_desktop import modelstore

    text = modelstore.CATALOG_PATH.read_text(encoding="utf-8")
    path.write_text(text + "\n" + "\n".join(entries), encoding="utf-8")
    return path


def serve_generator(
    hub: LocalHub,
    catalog_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    name: str,
    repo: str,
    file: str,
    data: bytes,
    sha256: str,
) -> LocalHub:
    """Serve ``data`` as ``repo/file`` and make it the catalog's generator ``name`` with the
    expected ``sha256`` (the packaged catalog plus that entry, written to ``catalog_path``)."""
    from verifai_desktop import modelstore

    hub.add_file(repo, file, data)
    catalog = write_catalog(
        catalog_path, catalog_entry(name, "generator", repo, file=file, sha256=sha256)
    )
    monkeypatch.setattr(modelstore.catalog, "CATALOG_PATH", catalog)
    return hub
