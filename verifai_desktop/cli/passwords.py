"""How ``verifai ingest`` gets the password of encrypted PDFs, and every command the password
of a PostgreSQL store (:func:`store_password_prompt`), without showing them to others.

A command-line argument is readable by every local user in ``/proc/PID/cmdline`` (and ``ps``)
while the ingest runs, so the password comes, in order of precedence, from one line of
standard input (``--pdf-password-stdin``), the ``--pdf-password`` argument (kept for scripts,
with a warning), the ``VERIFAI_PDF_PASSWORD`` environment variable (``/proc/PID/environ`` is
readable by the same user only), or a prompt without echo (``getpass``) when the run found
encrypted PDFs and standard input is a terminal.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from verifai_desktop.errors import VerifaiError
from verifai_desktop.store.pg.credentials import PasswordPrompt

PASSWORD_ENV = "VERIFAI_PDF_PASSWORD"

PASSWORD_HINT = f"set {PASSWORD_ENV} or use --pdf-password-stdin"
"""How a password is given on the command line (core messages only say "supply its password")."""

ARGUMENT_WARNING = (
    "warning: --pdf-password is visible to other local users (in the process list) while the "
    f"ingest runs; prefer {PASSWORD_ENV}, --pdf-password-stdin or the prompt"
)


def add_password_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--pdf-password-stdin`` and ``--pdf-password PW`` (mutually exclusive)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--pdf-password-stdin",
        action="store_true",
        help="read the password for encrypted PDFs from the first line of standard input",
    )
    group.add_argument(
        "--pdf-password",
        metavar="PW",
        help=f"password for encrypted PDFs; visible to other local users, prefer {PASSWORD_ENV}, "
        "--pdf-password-stdin or the prompt (asked when encrypted PDFs are found on a terminal)",
    )


def password_from_args(args: argparse.Namespace) -> str | None:
    """The password given up front, or ``None`` (then :func:`prompt_password` may ask).

    Raises:
        VerifaiError: ``--pdf-password-stdin`` and standard input is empty.
    """
    if args.pdf_password_stdin:
        line = sys.stdin.readline()
        password = line.rstrip("\r\n")
        if not password:
            raise VerifaiError("no password on standard input (--pdf-password-stdin)")
        return password
    if args.pdf_password is not None:
        print(ARGUMENT_WARNING, file=sys.stderr)
        return str(args.pdf_password)
    return os.environ.get(PASSWORD_ENV) or None


def can_prompt(args: argparse.Namespace) -> bool:
    """True when a password may be asked for: interactive, no JSON, stdin not the password."""
    return not args.json and not args.pdf_password_stdin and sys.stdin.isatty()


def prompt_password(n_files: int) -> str | None:
    """Ask for the password on the terminal without echo; ``None`` when the user skips."""
    what = "1 encrypted PDF" if n_files == 1 else f"{n_files} encrypted PDFs"
    try:
        password = getpass.getpass(f"{what}: password (Enter to skip): ")
    except EOFError:
        return None
    return password or None


def store_password_prompt() -> PasswordPrompt | None:
    """Asks for a PostgreSQL store's password on the terminal without echo, when standard
    input is one (else None: nobody to ask); used when neither libpq (``PGPASSWORD``,
    ``~/.pgpass``, the service file) nor the system keyring has it."""
    if not sys.stdin.isatty():
        return None

    def ask(account: str) -> str | None:
        try:
            return getpass.getpass(f"Password for {account}: ") or None
        except EOFError:
            return None

    return ask
