"""The Models dialog's wording: role titles, statuses and tooltips in the user's words (no
package names nor install commands), and what a failed download says to do instead
(:func:`offline_remedy`: the folder and the file names to copy).

Split from :mod:`verifai_desktop.ui.models_dialog`, which builds the dialog.
"""

from __future__ import annotations

from verifai_desktop import modelstore
from verifai_desktop.modelstore import CatalogEntry, ModelStatus, Role, format_bytes

ROLE_TITLES: dict[Role, str] = {
    "generator": "Generators: write the answers",
    "verifier": "Verifiers: check each sentence against its sources",
    "embedder": "Embedders: find the passages that match a question",
    "lora": "LoRA adapters: tune a generator",
}
ROLE_ORDER: tuple[Role, ...] = ("generator", "verifier", "embedder", "lora")
SHA_TEXT = {"verified": "verified ✓", "not checked": "not checked", "mismatch": "mismatch ✗"}
STAGE_TEXT = {
    "download": "Downloading",
    "verify": "Checking sha256 of",
    "export": "Converting for the app",
}
LORA_NOTE = (
    "A PEFT adapter: convert it to GGUF with llama.cpp's convert_lora_to_gguf.py, then choose "
    "the file as the LoRA in Settings."
)
GPU_NOTE = (
    "How much of the generator runs on the GPU is set in Settings "
    "(Edit → Settings…, Models and devices)."
)
NEEDS_TEXT = "recommended; needs PyTorch, which is not installed"
NEEDS_TIP = (
    "This model is converted for the app after its download, which needs PyTorch, "
    "transformers and onnx; they are not installed with this copy of the app. An "
    "installation of the app with its PyTorch option can download it."
)
BUNDLED_TIP = "Comes with the app; nothing to download."
MISSING_TIP = "Comes with the app, but its files are missing here: reinstall the app."
HUB_TIP = "Downloaded from the Hugging Face Hub ({repo}), checked against its sha256 before use."
OFFLINE_TIP = (
    " On a computer without internet, the app's offline installation puts the same file in place."
)


def status_text(row: ModelStatus) -> str:
    """The Status column in the user's words: where the model comes from, whether it is here,
    active, resumable (no package names nor install commands: :func:`status_tip` and the
    description say how to get it)."""
    e = row.entry
    kind = "optional" if e.bundled else "recommended"
    if row.downloaded:
        text = "downloaded" + (", converted for the app" if e.export else "")
    elif e.bundled and row.present:
        text = "bundled"
    elif row.needs:
        text = NEEDS_TEXT
    elif row.partial_bytes:
        of = f" of {format_bytes(row.size_bytes)}" if row.size_bytes else ""
        text = f"{kind}; {format_bytes(row.partial_bytes)}{of} downloaded, resumable"
    elif row.from_hub or not e.bundled:
        text = f"{kind}, not downloaded"
    else:
        text = "bundled, missing: reinstall the app"
    return f"{text} · active" if row.in_use else text


def status_tip(row: ModelStatus) -> str:
    """The Status column's tooltip: where the model comes from and how it gets here."""
    e = row.entry
    if row.needs:
        return NEEDS_TIP
    if e.bundled and not (row.from_hub or row.downloaded or row.partial_bytes):
        return BUNDLED_TIP if row.present else MISSING_TIP
    tip = HUB_TIP.format(repo=e.repo) if e.repo else BUNDLED_TIP
    return tip + (OFFLINE_TIP if row.extra else "")


def offline_remedy(entry: CatalogEntry) -> str:
    """What a failed download of ``entry`` says to do instead: copy its file (or the files of
    its repository) from another computer into the folder the app reads it from, named.

    Returns:
        E.g. "Or copy the model onto this computer: download
        mistral-7b-instruct-v0.2.Q4_K_M.gguf from https://huggingface.co/TheBloke/... on
        another computer and put it in /home/me/.local/share/verifai/models (as
        /home/me/.../mistral-7b-instruct-v0.2.Q4_K_M.gguf); the Models dialog then lists it as
        downloaded."; ``""`` for a model without a repository.
    """
    if not entry.repo:
        return ""
    page = f"https://huggingface.co/{entry.repo}"
    target = modelstore.download_path(entry)
    if entry.file:
        what = f"download {entry.file} from {page}"
        where = f"put it in the folder {target.parent} (as {target})"
    else:
        what = (
            f"download every file of {page} (its config, tokenizer and weights files, e.g. "
            "config.json, tokenizer.json and model.safetensors)"
        )
        where = f"put them in the folder {target}"
    if entry.export:  # a checkpoint to convert first (needs the torch option)
        where = "put them in a folder of their own"
        then = (
            "convert it with `verifai models export-verifier FOLDER OUT_FOLDER` and choose "
            "OUT_FOLDER as the verifier in Settings"
        )
    else:
        then = "the Models dialog then lists it as downloaded"
    return (
        f"Check the network connection and try again. Or copy the model onto this computer: "
        f"{what} on another computer and {where}; {then}."
    )
