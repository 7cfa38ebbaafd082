"""Parse any supported file into a Document, in-process or in a crash-proof worker process.

:func:`parse_file` picks the parser by detected format. :class:`ParserPool` runs it in a
separate worker process (``spawn`` start method: the parent may hold torch threads, which do
not survive ``fork``) that is killed and restarted when a file takes longer than its timeout
or crashes the worker (e.g. a segfault in a native library); the file then gets a ParseError.
The worker also hashes files (:meth:`ParserPool.sha256`), so no read of a file can block the
ingest run: only regular files are opened (:func:`verifai_desktop.hashing.sha256_file`), and a
read that stalls (a hung network mount) is stopped by the same time limit as parsing. OCR of
scanned PDF pages (:mod:`verifai_desktop.ingest.ocr`) and of the images of DOCX, PPTX and EPUB
files (:mod:`verifai_desktop.ingest.embedded`) runs in the worker too, under the same limit; it
reports each page or image it starts through the pipe, and a cancel stops the worker at once,
in the middle of a page.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from verifai_desktop import errors
from verifai_desktop.domain import DocFormat, Document
from verifai_desktop.errors import Cancelled, ParseError, VerifaiError
from verifai_desktop.foreground import FOREGROUND, lower_priority
from verifai_desktop.hashing import sha256_file
from verifai_desktop.ingest import clock
from verifai_desktop.ingest.formats import detect_format

if TYPE_CHECKING:  # the PDF parser and OCR load on first use (PyMuPDF, numpy)
    from verifai_desktop.ingest.ocr import OcrOptions, PageProgress

log = logging.getLogger(__name__)


class ParseFunction(Protocol):
    """Signature of :func:`parse_file` (and of test stand-ins run by :class:`ParserPool`)."""

    def __call__(
        self,
        path: Path,
        *,
        password: str | None = None,
        timeout_s: float = 60.0,
        ocr: OcrOptions | None = None,
        on_page: PageProgress | None = None,
    ) -> Document: ...


class HashFunction(Protocol):
    """Signature of :func:`verifai_desktop.hashing.sha256_file` (and of test stand-ins run by
    :class:`ParserPool`)."""

    def __call__(self, path: Path) -> str: ...


class FormatParser(Protocol):
    """One format's parser: ``parse_pdf``, ``parse_docx``, ``parse_pptx``, ``parse_epub``,
    ``parse_markdown``, ``parse_txt``. ``password`` is used by PDF only; ``deadline`` is a
    :func:`verifai_desktop.ingest.clock.now` value checked between pages, slides, chapters."""

    def __call__(
        self, path: Path, *, password: str | None = None, deadline: float | None = None
    ) -> Document: ...


PARSERS: dict[DocFormat, tuple[str, str]] = {
    DocFormat.PDF: ("verifai_desktop.ingest.pdf", "parse_pdf"),
    DocFormat.DOCX: ("verifai_desktop.ingest.office", "parse_docx"),
    DocFormat.PPTX: ("verifai_desktop.ingest.office", "parse_pptx"),
    DocFormat.EPUB: ("verifai_desktop.ingest.epub", "parse_epub"),
    DocFormat.MD: ("verifai_desktop.ingest.text", "parse_markdown"),
    DocFormat.TXT: ("verifai_desktop.ingest.text", "parse_txt"),
}
"""Parser per format as (module, function), imported on first use to keep imports cheap."""

OCR_FORMATS = frozenset({DocFormat.PDF, DocFormat.DOCX, DocFormat.PPTX, DocFormat.EPUB})
"""Formats whose scanned pages (PDF) or images (DOCX, PPTX, EPUB) OCR reads: their parsers
also take ``ocr`` and ``on_page`` (as :func:`~verifai_desktop.ingest.pdf.parse_pdf`)."""


def get_parser(fmt: DocFormat) -> FormatParser:
    """The parser function for a format (imports its module)."""
    module, name = PARSERS[fmt]
    parser: FormatParser = getattr(importlib.import_module(module), name)
    return parser


def parse_file(
    path: Path,
    *,
    password: str | None = None,
    timeout_s: float = 60.0,
    ocr: OcrOptions | None = None,
    on_page: PageProgress | None = None,
) -> Document:
    """Parse one file of any supported format.

    Args:
        path: the file.
        password: password for an encrypted PDF (ignored for other formats).
        timeout_s: wall-clock budget in seconds, checked cooperatively between pages, slides,
            chapters; a native call that hangs is only stopped by :class:`ParserPool`.
        ocr: how PDF pages without a text layer and the images of DOCX, PPTX and EPUB files
            are recognised (``None``: not at all).
        on_page: OCR progress, called before each page or image is recognised.

    Returns:
        The parsed Document; a valid file with no text (a deck with no slides) gives text
        ``""`` and no sections.

    Raises:
        UnsupportedFormat: not PDF, DOCX, PPTX, EPUB, MD or TXT.
        EncryptedDocument: a PDF needs a password, or the one given is wrong.
        NeedsOcr: a PDF without a text layer, or a DOCX, PPTX or EPUB without text but
            with images, that OCR did not read.
        ParseError: any other failure (damaged, truncated, empty, timed out).
    """
    path = Path(path)
    fmt = detect_format(path)
    deadline = clock.now() + timeout_s
    try:
        if fmt in OCR_FORMATS:
            module, name = PARSERS[fmt]
            reader: Callable[..., Document] = getattr(importlib.import_module(module), name)
            return reader(path, password=password, deadline=deadline, ocr=ocr, on_page=on_page)
        return get_parser(fmt)(path, password=password, deadline=deadline)
    except VerifaiError:
        raise
    except RecursionError as exc:
        raise ParseError(path, "nesting too deep (self-referencing content?)") from exc
    except MemoryError as exc:
        raise ParseError(path, "out of memory while parsing") from exc
    except Exception as exc:  # any library failure becomes a per-file status
        log.debug("parser failure on %s", path, exc_info=True)
        raise ParseError(path, f"{type(exc).__name__}: {exc}") from exc


# ---------------------------------------------------------------------------------------------
# Worker process

_ErrorState = tuple[str, str, dict[str, object]]  # (class name, message, attributes)


def _error_state(err: VerifaiError) -> _ErrorState:
    return type(err).__name__, str(err), dict(vars(err))


def _rebuild_error(state: _ErrorState) -> VerifaiError:
    """The worker's exception, same class, message and attributes (``path``, ``reason``, ...).

    VerifaiError subclasses build their message in ``__init__`` from several arguments, so
    they do not round-trip through pickle; they are rebuilt from their state instead.
    """
    name, message, attrs = state
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, VerifaiError)):
        cls = VerifaiError
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(attrs)
    return err


def _worker_main(
    conn: Connection,
    parse_fn: ParseFunction,
    hash_fn: HashFunction,
    paused: clock.PauseCounter | None = None,
) -> None:
    """Worker loop: receive ``("parse" | "hash", path, password, timeout_s, ocr)``, send
    ``("page", done, total, number, unit)`` before each page or image OCR reads, then back a
    Document (or a hex digest) or an error. ``paused``: the seconds the parent kept this
    process suspended (its deadlines leave them out)."""
    clock.count_pauses_in(paused)
    # Ctrl-C in a terminal reaches the whole process group; the parent decides about cancelling,
    # so the worker must not die mid-file and report a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Import every parser before reporting ready, so library imports do not eat into the
    # first file's timeout.
    for fmt in PARSERS:
        get_parser(fmt)
    conn.send(("ready",))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        kind, path, password, timeout_s, ocr = job

        def on_page(done: int, total: int, number: int, unit: str) -> None:
            conn.send(("page", done, total, number, unit))

        try:
            if kind == "hash":
                conn.send(("ok", hash_fn(path)))
            else:
                doc = parse_fn(
                    path, password=password, timeout_s=timeout_s, ocr=ocr, on_page=on_page
                )
                conn.send(("ok", doc))
        except VerifaiError as err:
            conn.send(("err", _error_state(err)))
        except BaseException as exc:  # report, never die silently
            reason = f"{type(exc).__name__}: {exc}"
            conn.send(("err", _error_state(ParseError(path, reason))))


@contextlib.contextmanager
def _main_file_hidden_if_missing() -> Iterator[None]:
    """Hide ``__main__.__file__`` while spawning when it is no file (``python - < script``).

    ``spawn`` re-runs the parent's main script in the child from that path; "<stdin>" does
    not exist, and the worker would die at start.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    hide = (
        main is not None
        and path is not None
        and getattr(main, "__spec__", None) is None
        and not os.path.isfile(path)
    )
    if hide:
        del main.__file__  # type: ignore[union-attr]
    try:
        yield
    finally:
        if hide:
            main.__file__ = path  # type: ignore[union-attr]


class ParserPool:
    """One long-lived parser worker process with a per-file wall-clock timeout.

    The worker starts on the first :meth:`parse` or :meth:`sha256` (not in the constructor)
    and is reused for later files. A file that runs past ``timeout_s`` or kills the worker
    (segfault, abort, out of memory) raises ParseError; the worker is then restarted for the
    next file.

    Args:
        timeout_s: wall-clock limit in seconds for parsing one file, and again for hashing it
            (worker start-up is not counted).
        parse_fn: the parse function run in the worker; must be picklable (a module-level
            function). Defaults to :func:`parse_file`; tests pass stand-ins that hang or crash.
        hash_fn: the hash function run in the worker, as ``parse_fn``; defaults to
            :func:`verifai_desktop.hashing.sha256_file`.
        start_method: ``"spawn"`` (default) or ``"forkserver"``; never ``"fork"``.
        ocr: how PDF pages without a text layer and the images of DOCX, PPTX and EPUB files
            are recognised in the worker (``None``: OCR off), under the same time limit.
    """

    STARTUP_TIMEOUT_S = 120.0
    CANCEL_POLL_S = 0.2
    """How often a running job looks at its ``cancel`` event, seconds."""

    def __init__(
        self,
        timeout_s: float = 60.0,
        *,
        parse_fn: ParseFunction = parse_file,
        hash_fn: HashFunction = sha256_file,
        start_method: str = "spawn",
        ocr: OcrOptions | None = None,
    ) -> None:
        if start_method == "fork":
            raise ValueError("ParserPool must not fork (torch threads); use spawn or forkserver")
        self.timeout_s = timeout_s
        self.ocr = ocr
        self._parse_fn = parse_fn
        self._hash_fn = hash_fn
        self._ctx: Any = multiprocessing.get_context(start_method)
        self._proc: BaseProcess | None = None
        self._conn: Connection | None = None
        self.restarts = 0
        """How many times the worker was killed (timeout) or died (crash) and was restarted."""
        self._paused: clock.PauseCounter | None = None

    def _now(self) -> float:
        """The worker's clock (:mod:`verifai_desktop.ingest.clock`): wall time less the
        seconds the worker was held suspended, the current suspension included."""
        proc = self._proc
        if proc is None or proc.pid is None:
            return time.monotonic()
        return time.monotonic() - FOREGROUND.paused_seconds(proc.pid)

    def _start(self) -> Connection:
        pipe: tuple[Connection, Connection] = self._ctx.Pipe(duplex=True)
        parent_conn, child_conn = pipe
        self._paused = self._ctx.Value("d", 0.0)
        proc = self._ctx.Process(
            target=_worker_main,
            args=(child_conn, self._parse_fn, self._hash_fn, self._paused),
            name="verifai-parser",
            daemon=True,
        )
        with _main_file_hidden_if_missing():
            proc.start()
        lower_priority(proc.pid)  # background work: an answer being written goes first
        child_conn.close()
        if not parent_conn.poll(self.STARTUP_TIMEOUT_S):
            proc.kill()
            proc.join()
            raise ParseError("parser worker", "the parser process did not start")
        try:
            parent_conn.recv()
        except EOFError as exc:
            proc.join()
            raise ParseError(
                "parser worker", f"the parser process died at start (exit {proc.exitcode})"
            ) from exc
        self._proc, self._conn = proc, parent_conn
        if proc.pid is not None:
            FOREGROUND.hold(proc.pid, self._paused)  # suspended while an answer is written
        return parent_conn

    def _stop(self, *, kill: bool) -> None:
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if proc is not None and proc.pid is not None:
            FOREGROUND.release(proc.pid)
        if conn is not None:
            if not kill:
                with contextlib.suppress(OSError):
                    conn.send(None)
            conn.close()
        if proc is not None:
            if kill:
                proc.kill()
            proc.join(timeout=5.0)
            if proc.is_alive():
                proc.kill()
                proc.join()

    def parse(
        self,
        path: Path,
        password: str | None = None,
        *,
        on_page: PageProgress | None = None,
        cancel: threading.Event | None = None,
    ) -> Document:
        """Parse ``path`` in the worker process.

        Args:
            path: the file.
            password: password for an encrypted PDF.
            on_page: OCR progress, called here (in the caller's thread) before the worker
                recognises each page or image.
            cancel: when set, the worker is stopped within :attr:`CANCEL_POLL_S` (in the
                middle of a page) and restarted for the next file.

        Returns:
            The parsed Document, as :func:`parse_file` returns it.

        Raises:
            ParseError: also ``"timed out after N s"`` and ``"the parser process crashed"``.
            EncryptedDocument, NeedsOcr, UnsupportedFormat: as from :func:`parse_file`.
            Cancelled: ``cancel`` was set.
        """
        doc: Document = self._call("parse", Path(path), password, on_page, cancel)
        return doc

    def sha256(self, path: Path) -> str:
        """Hash ``path`` in the worker process, under the same time limit as parsing.

        Args:
            path: the file; only a regular file is read (see
                :func:`verifai_desktop.hashing.sha256_file`).

        Returns:
            Its sha256 as 64 lowercase hex digits.

        Raises:
            ParseError: not a regular file, unreadable, timed out, or the worker crashed.
        """
        digest: str = self._call("hash", Path(path), None)
        return digest

    def _call(
        self,
        kind: str,
        path: Path,
        password: str | None,
        on_page: PageProgress | None = None,
        cancel: threading.Event | None = None,
    ) -> Any:
        """Run one job in the worker within ``timeout_s``; restart the worker when it fails
        or ``cancel`` is set."""
        if self._proc is not None and not self._proc.is_alive():
            log.warning("parser process died between files (exit %s)", self._proc.exitcode)
            self._stop(kill=True)
            self.restarts += 1
        conn = self._conn if self._conn is not None else self._start()
        job = (kind, path, password, self.timeout_s, self.ocr)
        try:
            conn.send(job)
        except (OSError, BrokenPipeError):
            self._stop(kill=True)
            conn = self._start()
            conn.send(job)
        deadline = self._now() + self.timeout_s
        while True:
            reply = self._reply(conn, path, deadline, cancel)
            if reply[0] != "page":
                break
            if on_page is not None:
                on_page(*reply[1:])
        if reply[0] == "ok":
            return reply[1]
        raise _rebuild_error(reply[1])

    def _reply(
        self, conn: Connection, path: Path, deadline: float, cancel: threading.Event | None
    ) -> Any:
        """The worker's next message; kill it when ``deadline`` passes or ``cancel`` is set."""
        while not conn.poll(min(self.CANCEL_POLL_S, max(0.0, deadline - self._now()))):
            if cancel is not None and cancel.is_set():
                self._stop(kill=True)
                self.restarts += 1
                raise Cancelled("parsing")
            if self._now() >= deadline:
                log.warning("%s timed out after %g s; restarting", path, self.timeout_s)
                self._stop(kill=True)
                self.restarts += 1
                raise ParseError(path, f"timed out after {self.timeout_s:g} s")
        try:
            return conn.recv()
        except (EOFError, OSError) as exc:
            proc = self._proc
            self._stop(kill=True)
            self.restarts += 1
            code = proc.exitcode if proc is not None else None
            raise ParseError(path, f"the parser process crashed (exit code {code})") from exc

    def close(self) -> None:
        """Stop the worker process (idempotent)."""
        self._stop(kill=False)

    def __enter__(self) -> ParserPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self._stop(kill=True)
