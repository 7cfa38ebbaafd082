"""The VerifaiError tree: every failure a user may see, with a message that says what to do."""

from __future__ import annotations

import errno
from pathlib import Path

from verifai_desktop.names import printable, redact_url, redact_urls


class VerifaiError(Exception):
    """Base of every user-facing failure; ``str(err)`` is the message to show."""


class ParseError(VerifaiError):
    """A file could not be read as its format (damaged, truncated, unsupported, timed out)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"could not read {self.path.name}: {reason}")


class EncryptedDocument(ParseError):
    """A password-protected file was given no password or a wrong one."""

    def __init__(self, path: Path | str, *, wrong_password: bool = False) -> None:
        reason = (
            "the password given is wrong; supply the right one"
            if wrong_password
            else "it is encrypted; supply its password to index it"
        )
        super().__init__(path, reason)
        self.wrong_password = wrong_password


class NeedsOcr(ParseError):
    """A file has no text layer (a scan); it needs OCR before it can be indexed."""

    def __init__(
        self,
        path: Path | str,
        reason: str = "it has no text layer (scanned pages); run OCR on it first",
    ) -> None:
        super().__init__(path, reason)


class UnsupportedFormat(ParseError):
    """A file whose type is none of PDF, DOCX, PPTX, EPUB, MD, TXT."""

    def __init__(self, path: Path | str, detected: str) -> None:
        super().__init__(
            path, f"unsupported file type ({detected}); use PDF, DOCX, PPTX, EPUB, MD or TXT"
        )


class CollectionNotFound(VerifaiError):
    """A named collection does not exist."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"no collection named {name!r}; create it by adding documents to it")


class CollectionExists(VerifaiError):
    """A collection is to be created or renamed to a name that another collection has."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"a collection named {name!r} already exists; choose another name or delete it first"
        )


class EmbedderMismatch(VerifaiError):
    """An existing collection is asked for with another embedder than it was built with."""

    def __init__(self, name: str, built_with: str, asked: str) -> None:
        self.name = name
        self.built_with = built_with
        self.asked = asked
        super().__init__(
            f"collection {name!r} was built with the embedder {built_with!r}, not {asked!r}; "
            "use another collection name for a different embedder"
        )


class BeirCollectionMismatch(VerifaiError):
    """A collection named for reuse holds something other than the BEIR corpus."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        super().__init__(
            f"collection {name!r} does not hold this BEIR corpus ({reason}); use another "
            "collection name, or none for a dedicated beir-<dataset> collection"
        )


class MissingPath(VerifaiError):
    """A file or folder given to ingest does not exist."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        super().__init__(f"{self.path} does not exist; give existing files or folders")


class IndexCorrupt(VerifaiError):
    """A collection's catalog or index is damaged (unreadable, empty, failed its check).

    Attributes:
        path: the damaged file.
        collection: the collection's folder name when known (the app offers to repair it, the
            command line names the repair command).
    """

    _ADVICE = (
        "repair {what} to rebuild it from its source files, or delete it and add the files again"
    )
    """What to do, ``{what}`` naming the collection."""

    def __init__(self, path: Path | str, reason: str, *, collection: str | None = None) -> None:
        self.path = Path(path)
        self.reason = reason
        self.collection = collection
        what = f"collection {collection!r}" if collection else "the collection"
        super().__init__(
            f"{printable(str(self.path))} is damaged ({reason}); {self._ADVICE.format(what=what)}"
        )


class HistoryCorrupt(IndexCorrupt):
    """A collection's answer history (``history.sqlite``) is damaged: not a database, or it
    failed SQLite's check when opened. Repairing the history keeps every answer that can
    still be read and sets the damaged file aside.

    Attributes:
        path: the damaged history file.
        collection: the collection's folder name when known.
    """

    _ADVICE = (
        "repair the answer history of {what} to keep every answer that can still be read (the "
        "damaged file is kept beside it)"
    )


class RepairImpossible(VerifaiError):
    """A damaged collection cannot be rebuilt: its catalog names no source file still there.

    Attributes:
        name: the collection.
        reason: why ("its catalog names no file that still exists").
    """

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(
            f"cannot rebuild collection {name!r}: {reason}; delete it and add its files again, "
            "or name the files to rebuild it from"
        )


class ModelNotFound(VerifaiError):
    """A model named in settings or on the command line is not on this machine."""

    def __init__(self, name: str, hint: str = "") -> None:
        self.name = name
        super().__init__(
            f"model {name!r} is not available on this machine"
            + (f"; {hint}" if hint else "; choose an installed model or give the path of one")
        )


class ModelLoadError(VerifaiError):
    """A model file exists but could not be loaded (corrupt, wrong format, checksum mismatch)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        super().__init__(f"could not load model {self.path}: {reason}")


class ChecksumMismatch(VerifaiError):
    """A downloaded file's sha256 differs from what the catalog (or the Hub's LFS record) says.

    The file is deleted and nothing is activated before this is raised.

    Attributes:
        name: the model.
        file: the file inside the model's repository.
        expected: the hex digest the file should have.
        actual: the hex digest it had.
        algorithm: ``"sha256"``, or ``"git-sha1"`` for a small non-LFS file of a repository.
    """

    def __init__(
        self, name: str, file: str, expected: str, actual: str, algorithm: str = "sha256"
    ) -> None:
        self.name = name
        self.file = file
        self.expected = expected
        self.actual = actual
        self.algorithm = algorithm
        super().__init__(
            f"the download of model {name!r} was rejected: {file} has {algorithm} {actual}, "
            f"expected {expected}; the file was deleted and no model was changed. Download it "
            "again; if the mismatch repeats, the file on the Hub is not the one the catalog names"
        )


class CannotDelete(VerifaiError):
    """A model that cannot be deleted (it is bundled with the app, or not downloaded)."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"cannot delete model {name!r}: {reason}")


class MissingExtra(VerifaiError):
    """A task needs packages of an optional extra that is not installed (e.g. PyTorch).

    Attributes:
        extra: the ``verifai-desktop`` extra that provides them (``torch``, ``cpu``).
    """

    def __init__(self, what: str, extra: str, packages: str) -> None:
        self.what = what
        self.extra = extra
        super().__init__(
            f"{what} needs {packages}, which is not installed; install the {extra!r} extra: "
            f"pip install 'verifai-desktop[{extra}]'"
        )


class StoreUnavailable(VerifaiError):
    """A server store (PostgreSQL) cannot be used: unreachable, TLS, authentication, missing
    extension, schema version or permissions.

    Attributes:
        store: the server's address without credentials (``host:port/database``).
        kind: ``unreachable``, ``tls``, ``authentication``, ``extension``, ``schema``,
            ``permission`` or ``url``.
        reason: what went wrong and what to do.
    """

    def __init__(self, store: str, kind: str, reason: str) -> None:
        self.store = store
        self.kind = kind
        self.reason = reason
        super().__init__(f"PostgreSQL store {store}: {reason}")


class ClusterError(VerifaiError):
    """A Ray cluster an ingest was spread over cannot be used: it cannot be reached or
    started, or one of its workers failed.

    Attributes:
        address: the cluster's address, ``"local"`` for one started on this machine.
        reason: what went wrong.
    """

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        self.reason = reason
        super().__init__(f"Ray cluster {address}: {reason}")


class GenerationError(VerifaiError):
    """The language model failed while writing an answer."""


class EmptyClaim(VerifaiError):
    """A claim to check has no word left once its citation markers are removed."""

    def __init__(self, claim: str) -> None:
        self.claim = claim
        super().__init__(f"nothing to check in {claim!r}: type a statement with words")


class SettingsError(VerifaiError):
    """The settings file or a setting value is invalid."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"invalid setting {where}: {reason}")


class OfflineError(VerifaiError):
    """A download was asked for but the machine cannot reach the model hub."""


class Cancelled(VerifaiError):
    """The user cancelled a running task. Raised by core functions when ``cancel`` is set."""

    def __init__(self, what: str = "task") -> None:
        super().__init__(f"{what} cancelled")


class InvalidCollectionName(VerifaiError):
    """A collection name with characters other than letters, digits, ``-``, ``_``, ``.``."""

    def __init__(
        self,
        name: str,
        rule: str = "letters, digits, '-', '_' or '.' (starting with a letter or digit, at most "
        "80 characters)",
    ) -> None:
        self.name = name
        super().__init__(f"invalid collection name {name!r}; use {rule}")


class CollectionBusy(VerifaiError):
    """Another process is writing the collection (holds its write lock)."""

    def __init__(self, name: str, *, rebuilding: bool = False) -> None:
        self.name = name
        self.rebuilding = rebuilding
        super().__init__(
            f"the indexes of collection {name!r} are being rebuilt by another process after "
            "an interrupted run; try again in a moment"
            if rebuilding
            else f"collection {name!r} is being written by another process (an ingest is "
            "running); wait for it to finish and try again"
        )


class EvalDataError(VerifaiError):
    """An evaluation file or folder is missing or not in a known format."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        super().__init__(f"cannot read evaluation data {self.path}: {reason}")


class DatasetError(VerifaiError):
    """The PubMedQA file of an answer evaluation cannot be read."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        super().__init__(
            f"cannot read PubMedQA file {self.path}: {reason}; give PubMedQA's ori_pqal.json"
        )


class UnsupportedExportFormat(VerifaiError):
    """An answer is to be saved under a file suffix that names no export format."""

    def __init__(self, path: Path | str, suffixes: tuple[str, ...]) -> None:
        self.path = Path(path)
        self.suffixes = suffixes
        super().__init__(
            f"cannot save an answer as {self.path.name!r}: unknown file type "
            f"{self.path.suffix or '(no suffix)'}; use one of {', '.join(suffixes)}"
        )


class BadRecord(VerifaiError):
    """A saved answer, audit record or feedback file cannot be read (damaged, or written by
    another program or a newer version)."""

    def __init__(self, what: str, reason: str) -> None:
        self.what = what
        self.reason = reason
        super().__init__(f"cannot read {what}: {reason}")


class HistoryNotFound(VerifaiError):
    """No saved answer has the id asked for, or the history is empty."""

    def __init__(self, collection: str, answer_id: int | None) -> None:
        self.collection = collection
        self.answer_id = answer_id
        if answer_id is None:
            message = f"collection {collection!r} has no saved answers yet; ask a question first"
        else:
            message = (
                f"collection {collection!r} has no saved answer {answer_id}; "
                "list them with the history"
            )
        super().__init__(message)


class RemoteGeneratorError(VerifaiError):
    """An OpenAI-compatible generation server refused, failed or could not be reached.

    Attributes:
        base_url: the server's address with its credentials removed
            (:func:`~verifai_desktop.names.redact_url`).
        reason: why, with the credentials of any URL it quotes removed.
    """

    def __init__(self, base_url: str, reason: str) -> None:
        self.base_url = redact_url(base_url)
        self.reason = redact_urls(reason)
        super().__init__(f"the generation server at {self.base_url} failed: {self.reason}")


_WRITE_FAILURES: dict[int, str] = {
    errno.EISDIR: "it is a folder; give a file name inside it",
    errno.ENOENT: "its folder does not exist; create the folder or choose another",
    errno.ENOTDIR: "a part of the path is a file, not a folder; choose another path",
    errno.EACCES: "permission denied; choose a folder you may write to",
    errno.EPERM: "permission denied; choose a folder you may write to",
    errno.EROFS: "the disk is read-only; choose another disk",
    errno.ENOSPC: "the disk is full; free some space or choose another disk",
    errno.EDQUOT: "the disk quota is used up; free some space or choose another disk",
    errno.EFBIG: "the file is too large for this disk or account; choose another disk",
    errno.ENAMETOOLONG: "the name is too long; choose a shorter one",
}


class ExportFailed(VerifaiError):
    """An export (an answer, an audit record, feedback for training) could not be written.

    Nothing was left half-written: the files are written whole beside their target and only
    then renamed into place, so the target keeps its former content, or stays missing.

    Attributes:
        path: the file that could not be written.
        reason: why, and what to do.
    """

    def __init__(self, path: Path | str, what: str, reason: str | OSError) -> None:
        self.path = Path(path)
        if isinstance(reason, OSError):
            known = _WRITE_FAILURES.get(reason.errno or 0)
            reason = known or f"{reason.strerror or reason}; choose another file or folder"
        self.reason = reason
        super().__init__(
            f"could not write the {what} to {printable(repr(str(path)))}: {reason} "
            "(no file was changed)"
        )


class AuditKeyError(VerifaiError):
    """This install's audit signing key (or a public key given to check with) is unusable.

    Attributes:
        path: the key file ('' for a key given on the command line).
        reason: what is wrong and what to do.
    """

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        where = f"the audit signing key {printable(self.path)}" if self.path else "the public key"
        super().__init__(f"cannot use {where}: {reason}")
