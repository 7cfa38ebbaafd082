"""The VerifaiError tree: every failure a user may see, with a message that says what to do."""

from __future__ import annotations

from pathlib import Path


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
            "the password given is wrong; supply the right one (--pdf-password)"
            if wrong_password
            else "it is encrypted; supply its password (--pdf-password) to index it"
        )
        super().__init__(path, reason)
        self.wrong_password = wrong_password


class NeedsOcr(ParseError):
    """A file has no text layer (a scan); it needs OCR before it can be indexed."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(path, "it has no text layer (scanned pages); run OCR on it first")


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
        super().__init__(
            f"no collection named {name!r}; "
            f"create it with `verifai ingest PATH --collection {name}`"
        )


class IndexCorrupt(VerifaiError):
    """A collection's catalog or index cannot be opened."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        super().__init__(
            f"the index at {self.path} is damaged ({reason}); re-ingest the collection"
        )


class ModelNotFound(VerifaiError):
    """A model named in settings or on the command line is not on this machine."""

    def __init__(self, name: str, hint: str = "") -> None:
        self.name = name
        super().__init__(
            f"model {name!r} is not available on this machine"
            + (f"; {hint}" if hint else "; see `verifai models list`")
        )


class ModelLoadError(VerifaiError):
    """A model file exists but could not be loaded (corrupt, wrong format, checksum mismatch)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        super().__init__(f"could not load model {self.path}: {reason}")


class GenerationError(VerifaiError):
    """The language model failed while writing an answer."""


class SettingsError(VerifaiError):
    """The settings file or a setting value is invalid."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"invalid setting {where}: {reason}")


class OfflineError(VerifaiError):
    """A download was asked for but the machine cannot reach the model hub."""


class Cancelled(VerifaiError):
    """The user cancelled a running task. Raised by core functions when ``cancel`` is set."""

    def __init__(self, what: str = "task") -> None:
        super().__init__(f"{what} cancelled")


class InvalidCollectionName(VerifaiError):
    """A collection name with characters other than letters, digits, ``-``, ``_``, ``.``."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"invalid collection name {name!r}; use letters, digits, '-', '_' or '.' "
            "(starting with a letter or digit, at most 80 characters)"
        )


class CollectionBusy(VerifaiError):
    """Another process is writing the collection (holds its write lock)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"collection {name!r} is being written by another process (an ingest is running); "
            "wait for it to finish and try again"
        )
