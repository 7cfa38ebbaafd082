"""The ``verifai`` command. Imports the core only; each command group lives in its own module.

Every module here exposes some of ``register(sub)``, ``register_eval(sub)`` and
``register_models(sub)``; each sub-parser sets ``func(args) -> int`` as its handler.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from collections.abc import Sequence

from verifai_desktop import __version__
from verifai_desktop.cli import (
    ask_cmd,
    check_cmd,
    eval_cmd,
    history_cmd,
    ingest_cmd,
    models_cmd,
    repair_cmd,
    search_cmd,
    selfcheck_cmd,
    verifier_cmd,
    watch_cmd,
)
from verifai_desktop.cli.common import error_hint
from verifai_desktop.errors import Cancelled, VerifaiError
from verifai_desktop.logs import setup_logging
from verifai_desktop.offline import disable_telemetry, stay_offline

_MODULES = (
    ingest_cmd,
    watch_cmd,
    repair_cmd,
    search_cmd,
    ask_cmd,
    history_cmd,
    check_cmd,
    eval_cmd,
    verifier_cmd,
    selfcheck_cmd,
    models_cmd,
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser of ``verifai``."""
    parser = argparse.ArgumentParser(
        prog="verifai",
        description=(
            "Ask questions of your own documents; every answer sentence is cited and verified."
        ),
    )
    parser.add_argument("--version", action="version", version=f"verifai {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    eval_parser = sub.add_parser("eval", help="evaluate retrieval, the verifier or whole answers")
    eval_sub = eval_parser.add_subparsers(dest="eval_command", required=True, metavar="WHAT")
    models_parser = sub.add_parser("models", help="list, download, choose and export models")
    models_sub = models_parser.add_subparsers(
        dest="models_command", required=True, metavar="ACTION"
    )
    for module in _MODULES:
        if hasattr(module, "register"):
            module.register(sub)
        if hasattr(module, "register_eval"):
            module.register_eval(eval_sub)
        if hasattr(module, "register_models"):
            module.register_models(models_sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``verifai``. Returns the process exit code (0 ok, 1 error, 130 cancelled).

    When the reader of standard output goes away (``verifai search ... | head``), the command
    stops quietly with code 1 instead of a ``BrokenPipeError`` traceback.
    """
    # In a frozen build (installers/verifai.spec) the ingest's parser worker is this
    # executable started again with --multiprocessing-fork: run the worker and exit here.
    multiprocessing.freeze_support()
    try:
        code = _main(argv)
        sys.stdout.flush()  # a broken pipe shows here, not at interpreter exit
    except BrokenPipeError:
        # Python docs, "Note on SIGPIPE" (signal module): point stdout at devnull so the
        # flush at exit does not fail again, and exit 1.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.command, getattr(args, "models_command", None)) != ("models", "pull"):
        stay_offline()  # only a download may reach the Hugging Face Hub
    else:
        disable_telemetry()  # a download still sends nothing to ONNX Runtime's telemetry
    setup_logging(args.verbose)
    try:
        code: int = args.func(args)
    except Cancelled:
        print("cancelled", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except VerifaiError as exc:
        print(f"error: {exc}{error_hint(exc)}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
