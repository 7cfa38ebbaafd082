"""`verifai eval verifier` and `verifai models export-verifier`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from verifai_desktop import modelstore
from verifai_desktop.cli.common import add_json_arg, print_json
from verifai_desktop.domain import Progress
from verifai_desktop.errors import SettingsError
from verifai_desktop.evaluate import verifier as ev
from verifai_desktop.settings import VERIFY_PRESETS, load_settings
from verifai_desktop.verify.check import Verifier
from verifai_desktop.verify.checks import NO_CHECKS, Checks
from verifai_desktop.verify.nli import BUNDLED_NAME, OnnxVerifier, get_verifier
from verifai_desktop.verify.premises import GRANULARITIES
from verifai_desktop.verify.presets import effective_thresholds


def register_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai eval verifier``."""
    p = sub.add_parser(
        "verifier",
        help="score the NLI verifier on SciFact, HealthVer or an NLI file",
        description=(
            "Classify labelled (premise, claim) pairs with the verifier and print per-class "
            "precision, recall and F1, macro and weighted F1, accuracy, ECE and the confusion "
            "matrix. SciFact pairs are claim + cited abstract (VerifAI's transformation)."
        ),
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--scifact",
        type=Path,
        metavar="DIR",
        help="SciFact release folder (claims_<split>.jsonl, corpus.jsonl)",
    )
    src.add_argument("--healthver", type=Path, metavar="FILE", help="HealthVer CSV")
    src.add_argument(
        "--nli",
        type=Path,
        metavar="FILE",
        help="SNLI jsonl, TextFooler TSV, SICK txt, FEVER-Symmetric jsonl, or an NLI pool JSONL "
        "(premise, hypothesis, label)",
    )
    p.add_argument("--split", default="dev", help="SciFact split (default: %(default)s)")
    p.add_argument(
        "--granularity",
        choices=GRANULARITIES,
        default=None,
        help="premise: whole passage, or 1-3 sentence windows (default: the app's, "
        "settings verify.premise)",
    )
    p.add_argument(
        "--preset",
        choices=VERIFY_PRESETS,
        default=None,
        help="threshold preset of the shown labels (default: the app's, settings verify.preset)",
    )
    p.add_argument(
        "--checks",
        choices=("all", "none"),
        default="all",
        help="the checks of the shown labels (aims, figures, negations, support-first "
        "windows) as in the app, or none (aggregation by maximum); default: %(default)s",
    )
    p.add_argument(
        "--model",
        default=None,
        metavar="NAME|DIR",
        help="verifier folder or name (default: the bundled verifier)",
    )
    p.add_argument(
        "--system",
        choices=("model", "lexical", "llm"),
        default="model",
        help="evaluate the verifier, the lexical-overlap baseline or the LLM judge",
    )
    p.add_argument(
        "--gguf",
        type=Path,
        default=None,
        help="GGUF for --system llm (default: the bundled Qwen generator)",
    )
    p.add_argument(
        "--uncalibrated",
        action="store_true",
        help="raw model probabilities (no temperature, no feature layer)",
    )
    p.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="FILE.png",
        help="also draw the reliability diagram and the precision/coverage curves "
        "(needs the 'plots' extra, matplotlib)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="only the first N pairs (a slice, say so when reporting)",
    )
    add_json_arg(p)
    p.set_defaults(func=run_eval)


def register_models(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verifai models export-verifier``."""
    from verifai_desktop.verify.export import INT8_SCHEMES  # no torch: imported inside

    p = sub.add_parser(
        "export-verifier",
        help="export a Hugging Face NLI checkpoint (DeBERTa, BERT-like) to an ONNX verifier",
        description=(
            "Export a sequence-classification checkpoint with three NLI labels to ONNX, with "
            "its tokenizer and label map, into a folder `verifai models use` accepts."
        ),
    )
    p.add_argument("hf_dir", type=Path, metavar="HF_MODEL_DIR")
    p.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    p.add_argument("--int8", action="store_true", help="int8 weights (~4x smaller)")
    p.add_argument(
        "--int8-scheme",
        choices=INT8_SCHEMES,
        default=INT8_SCHEMES[0],
        help="blocks: int8 weights, float32 products (default); rows: int8 products, each "
        "token's activations scaled on their own (about 2x faster on a CPU)",
    )
    p.add_argument("--max-length", type=int, default=512, help="tokens per pair (default: 512)")
    p.set_defaults(func=run_export)


def _stderr_progress(p: Progress) -> None:
    if p.total:
        sys.stderr.write(f"\r{p.stage}: {p.done}/{p.total} {p.unit}  ")
        if p.done >= p.total:
            sys.stderr.write("\n")
    else:
        sys.stderr.write(f"{p.stage}: {p.message}\n")
    sys.stderr.flush()


def run_eval(args: argparse.Namespace) -> int:
    """Handler of ``verifai eval verifier``: every system through the app's verification path."""
    if args.scifact is not None:
        pairs = ev.load_scifact(args.scifact, args.split)
        dataset = f"scifact_{args.split}"
    elif args.healthver is not None:
        pairs = ev.load_healthver(args.healthver)
        dataset = args.healthver.stem
    else:
        pairs = ev.load_nli(args.nli)
        dataset = args.nli.stem
    if args.limit is not None:
        if args.limit < 1:
            raise SettingsError("--limit", "must be at least 1")
        pairs = pairs[: args.limit]
        dataset += f"[:{args.limit}]"

    system: Verifier
    if args.system == "lexical":
        system, name = ev.LexicalOverlapVerifier(), "lexical-overlap"
    elif args.system == "llm":
        gguf = args.gguf
        if gguf is None:
            gguf = modelstore.ensure_bundled_generator()
        system, name = ev.LlmJudgeVerifier(gguf), f"llm-judge:{Path(gguf).name}"
    else:
        verifier = get_verifier(args.model or BUNDLED_NAME)
        if args.uncalibrated:
            verifier = OnnxVerifier(verifier.model_dir, calibrated=False)
        system = verifier
        name = f"{verifier.card.name} ({verifier.provider}"
        name += ", uncalibrated)" if args.uncalibrated else ")"
    settings = load_settings().verify
    if args.preset is not None:
        settings = dataclasses.replace(settings, preset=args.preset)
    card = getattr(system, "card", None)
    thresholds = effective_thresholds(settings, getattr(card, "presets", {}))
    result = ev.evaluate_pairs(
        system,
        pairs,
        dataset=dataset,
        system=name,
        granularity=args.granularity or settings.premise,
        thresholds=thresholds,
        checks=Checks() if args.checks == "all" else NO_CHECKS,
        progress=None if args.json else _stderr_progress,
    )
    if args.plot is not None:
        # Deferred on purpose: matplotlib loads only when a plot is asked for.
        from verifai_desktop.evaluate.plots import plot_verifier

        plot_verifier(result, args.plot, thresholds)
    if args.json:
        print_json(result.as_dict())
    else:
        print(ev.format_report(result))
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Handler of ``verifai models export-verifier``."""
    # Deferred on purpose: the exporter is build tooling (torch, transformers), not the app.
    from verifai_desktop.verify.export import export_verifier

    result = export_verifier(
        args.hf_dir,
        args.out_dir,
        int8=args.int8,
        int8_scheme=args.int8_scheme,
        max_length=args.max_length,
        progress=_stderr_progress,
    )
    print(
        f"exported {result.onnx_path} ({result.size_bytes / 1e6:.1f} MB, "
        f"labels {', '.join(result.labels)}, int8={result.int8_scheme or 'no'})"
    )
    return 0
