"""Audit records of verified answers: what was answered, from which exact text, by which models,
signed so that no field can be edited unnoticed.

- :mod:`.record`: building a record from a saved answer (:func:`build_record`) and its JSON;
- :mod:`.signing`: this install's Ed25519 key and the record's signature;
- :mod:`.validate`: reading a record from a file, every field checked, with size and depth
  limits (:func:`read_record`);
- :mod:`.check`: checking a record whole, against its signature, the answer it holds, the
  collection's history and the documents (:func:`check_record`).

The readable HTML view and the export of both files are :mod:`verifai_desktop.audit_view`'s.
"""

from verifai_desktop.audit.check import CheckReport, Problem, ProblemKind, Signer, check_record
from verifai_desktop.audit.record import (
    AUDIT_SCHEMA,
    Quote,
    QuoteRole,
    build_record,
    record_to_json,
    unsigned_record,
)
from verifai_desktop.audit.signing import (
    ensure_key,
    install_public_key,
    key_path,
    parse_public_key,
    public_key_text,
    sign_record,
    signature_holds,
)
from verifai_desktop.audit.validate import (
    MAX_DEPTH,
    MAX_RECORD_BYTES,
    read_record,
    validate_record,
)

__all__ = [
    "AUDIT_SCHEMA",
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "CheckReport",
    "Problem",
    "ProblemKind",
    "Quote",
    "QuoteRole",
    "Signer",
    "build_record",
    "check_record",
    "ensure_key",
    "install_public_key",
    "key_path",
    "parse_public_key",
    "public_key_text",
    "read_record",
    "record_to_json",
    "sign_record",
    "signature_holds",
    "unsigned_record",
    "validate_record",
]
