"""Signatures of audit records: a per-install Ed25519 key, so that no field of an exported
record can be edited unnoticed.

The private key is made on first use and kept in ``<data root>/keys/audit-ed25519.pem``
(PKCS #8, mode 0600, in a 0700 folder; :mod:`verifai_desktop.private`). Each record carries the
matching public key (``public_key``, ``"ed25519:"`` and the 32 raw bytes in base64) and a
signature (``signature``, base64) of :func:`canonical_bytes`: the record without its
``signature`` field as JSON with sorted keys, no spaces, UTF-8 (so the indentation of the
exported file does not matter). Ed25519: RFC 8032, through the ``cryptography`` package.

Anyone may re-sign an edited record with another key; the check therefore says whose key
signed it (this install's or another one's) and can require a given key
(``verifai audit check --key``); the answer kept in the collection's history is the second
witness (:mod:`verifai_desktop.audit.check`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
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

KEY_PREFIX = "ed25519:"
"""Prefix of a public key as written in records and printed by ``verifai audit key``."""

SIGNATURE_FIELD = "signature"
PUBLIC_KEY_FIELD = "public_key"
_KEY_FILE = "audit-ed25519.pem"
_MAX_KEY_FILE_BYTES = 4096


def key_path() -> Path:
    """Where this install's private signing key is kept (it may not exist yet)."""
    return data_root() / "keys" / _KEY_FILE


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


def install_key(*, create: bool = True) -> Ed25519PrivateKey | None:
    """This install's private signing key, made (0600) on first use when ``create``.

    Returns:
        The key, or None when there is none yet and ``create`` is False.

    Raises:
        AuditKeyError: the key file cannot be read, is damaged, or cannot be created.
    """
    path = key_path()
    if not path.exists():
        if not create:
            return None
        _create_key(path)
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
    key = install_key(create=create)
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
