"""Signatures of audit records: a per-install Ed25519 key, so that no field of an exported
record can be edited unnoticed.

The private key is made on first use and kept in ``<data root>/keys/audit-ed25519.pem``
(PKCS #8, mode 0600, in a 0700 folder; :mod:`verifai_desktop.private`). Each record carries the
matching public key (``public_key``, ``"ed25519:"`` and the 32 raw bytes in base64) and a
signature (``signature``, base64) of :func:`canonical_bytes`: the record without its
``signature`` field as JSON with sorted keys, no spaces, UTF-8 (so the indentation of the
exported file does not matter). Ed25519: RFC 8032, through the ``cryptography`` package.

Anyone may re-sign an edited record with another key; the check therefore says whose key
signed it (this install's, or an unknown one: not verified unless ``verifai audit check --key``
names it); the answer kept in the collection's history is the second witness
(:mod:`verifai_desktop.audit.check`).

Every public key this install has signed with is kept in ``keys/audit-ed25519.known`` (one a
line, 0600): a private key deleted and made anew is said (:func:`ensure_key` returns why), and
records signed with the earlier key are still known as this install's. A private key that other
users may read (mode 0644) is refused for signing, with what to do.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from verifai_desktop.errors import AuditKeyError
from verifai_desktop.private import FILE_MODE, make_private_dir
from verifai_desktop.settings import data_root

log = logging.getLogger(__name__)

KEY_PREFIX = "ed25519:"
"""Prefix of a public key as written in records and printed by ``verifai audit key``."""

SIGNATURE_FIELD = "signature"
PUBLIC_KEY_FIELD = "public_key"
_KEY_FILE = "audit-ed25519.pem"
_KNOWN_FILE = "audit-ed25519.known"
_MAX_KEY_FILE_BYTES = 4096
_MAX_KNOWN_BYTES = 1 << 20


def key_path() -> Path:
    """Where this install's private signing key is kept (it may not exist yet)."""
    return data_root() / "keys" / _KEY_FILE


def known_keys_path() -> Path:
    """Where the public keys this install has signed with are listed, one a line."""
    return data_root() / "keys" / _KNOWN_FILE


def known_keys() -> tuple[str, ...]:
    """The public keys (:func:`public_key_text`) this install has signed with, oldest first;
    ``()`` when none is listed (or the list cannot be read)."""
    try:
        with known_keys_path().open("rb") as fh:
            text = fh.read(_MAX_KNOWN_BYTES).decode("ascii", "replace")
    except OSError:
        return ()
    return tuple(dict.fromkeys(k for k in text.split() if k.startswith(KEY_PREFIX)))


def _remember(public_key: str, *, strict: bool) -> None:
    """Add ``public_key`` to :func:`known_keys` (0600) unless it is listed; a failure raises
    only when ``strict`` (signing), else it is logged."""
    if public_key in known_keys():
        return
    path = known_keys_path()
    try:
        make_private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        with os.fdopen(fd, "a", encoding="ascii") as fh:
            fh.write(public_key + "\n")
    except OSError as exc:
        if not strict:
            log.warning("cannot list the audit key in %s: %s", path, exc)
            return
        raise AuditKeyError(
            path, f"it cannot be written ({exc.strerror or exc}); check the data folder"
        ) from exc


def fingerprint(public_key: str) -> str:
    """A short name of a public key for people: the first 16 hex digits of the SHA-256 of
    :func:`public_key_text`'s text."""
    return hashlib.sha256(public_key.encode("ascii", "replace")).hexdigest()[:16]


def ensure_key() -> str:
    """Make this install's signing key if there is none, and say so when it replaces one
    that was deleted.

    Returns:
        ``""``, or a warning for people when a new key was made although earlier ones are
        listed (:func:`known_keys`): the key file was deleted; records signed with the
        earlier key are still recognised as this install's.

    Raises:
        AuditKeyError: the key cannot be created, read, or is readable by other users.
    """
    earlier = known_keys()
    existed = key_path().exists()
    key = install_key()
    assert key is not None  # created when missing
    if existed or not earlier:
        return ""
    new = public_key_text(key.public_key())
    olds = ", ".join(fingerprint(k) for k in earlier if k != new)
    return (
        f"the audit signing key {key_path()} was missing (deleted?); a new key was made "
        f"(fingerprint {fingerprint(new)}). Earlier key(s) {olds} stay listed in "
        f"{known_keys_path()}, so records they signed still check as this install's; if you "
        "did not delete it, find out who did"
    )


def canonical_bytes(record: Mapping[str, Any]) -> bytes:
    """What the signature covers: every field of ``record`` but ``signature``, as compact
    JSON with sorted keys, UTF-8."""
    body = {k: v for k, v in record.items() if k != SIGNATURE_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )


def public_key_text(key: Ed25519PublicKey) -> str:
    """``"ed25519:"`` and the key's 32 raw bytes in base64."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return KEY_PREFIX + base64.b64encode(raw).decode("ascii")


def parse_public_key(text: str) -> Ed25519PublicKey:
    """A public key written by :func:`public_key_text`.

    Raises:
        AuditKeyError: ``text`` is not such a key.
    """
    if not text.startswith(KEY_PREFIX):
        raise AuditKeyError("", f"{text[:60]!r} does not start with {KEY_PREFIX!r}")
    try:
        raw = base64.b64decode(text[len(KEY_PREFIX) :], validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError) as exc:
        raise AuditKeyError(
            "", "it is not 32 bytes in base64; copy it whole from `verifai audit key`"
        ) from exc


def install_key(*, create: bool = True, signing: bool = True) -> Ed25519PrivateKey | None:
    """This install's private signing key, made (0600) on first use when ``create``; its
    public key is added to :func:`known_keys`.

    Args:
        create: make the key when there is none.
        signing: the key will sign: refuse a key file other users may read or write.

    Returns:
        The key, or None when there is none yet and ``create`` is False.

    Raises:
        AuditKeyError: the key file cannot be read, is damaged, cannot be created, or (when
            ``signing``) its mode lets other users read or write it.
    """
    path = key_path()
    if not path.exists():
        if not create:
            return None
        _create_key(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError as exc:
        raise AuditKeyError(path, f"{exc.strerror or exc}; check its permissions") from exc
    if signing and mode & 0o077:
        raise AuditKeyError(
            path,
            f"its mode is {mode:04o}: other users may read it, and anyone who did can sign "
            f"records as this install. If no one else could, make it private (chmod 600 "
            f"{path}); otherwise move it away to make a new key",
        )
    try:
        with path.open("rb") as fh:
            pem = fh.read(_MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise AuditKeyError(path, f"{exc.strerror or exc}; check its permissions") from exc
    try:
        if len(pem) > _MAX_KEY_FILE_BYTES:
            raise ValueError("too large")
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise AuditKeyError(path, _DAMAGED) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise AuditKeyError(path, _DAMAGED)
    # A key made before the list existed is listed now.
    _remember(public_key_text(key.public_key()), strict=signing)
    return key


_DAMAGED = (
    "it is damaged or not an Ed25519 key; move it away to make a new key (records it signed "
    "will then be shown as signed by another install)"
)


def _create_key(path: Path) -> None:
    """Write a new key to ``path`` unless another process just did (hard link: atomic)."""
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        make_private_dir(path.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use that
            os.link(tmp, path)
    except OSError as exc:
        raise AuditKeyError(
            path, f"it cannot be created ({exc.strerror or exc}); check the data folder"
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)


def install_public_key(*, create: bool = True) -> str | None:
    """This install's public key as :func:`public_key_text` (None: no key yet, not created).

    Raises:
        AuditKeyError: the key file is damaged or cannot be created.
    """
    key = install_key(create=create, signing=False)
    return None if key is None else public_key_text(key.public_key())


def sign_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with this install's ``public_key`` and the ``signature`` of everything else.

    Raises:
        AuditKeyError: the key cannot be created or read.
    """
    key = install_key()
    assert key is not None  # created when missing
    signed = {k: v for k, v in record.items() if k not in (SIGNATURE_FIELD, PUBLIC_KEY_FIELD)}
    signed[PUBLIC_KEY_FIELD] = public_key_text(key.public_key())
    signed[SIGNATURE_FIELD] = base64.b64encode(key.sign(canonical_bytes(signed))).decode("ascii")
    return signed


def signature_holds(record: Mapping[str, Any]) -> bool | None:
    """Whether ``record``'s signature is valid for its own ``public_key`` and content.

    Returns:
        None when the record carries no signature or no public key; False when either is
        malformed or the signature does not match the content; True when it matches.
    """
    key_text = record.get(PUBLIC_KEY_FIELD)
    signature = record.get(SIGNATURE_FIELD)
    if not isinstance(key_text, str) or not isinstance(signature, str):
        return None
    try:
        key = parse_public_key(key_text)
        key.verify(base64.b64decode(signature, validate=True), canonical_bytes(record))
    except (AuditKeyError, binascii.Error, ValueError, InvalidSignature):
        return False
    return True
