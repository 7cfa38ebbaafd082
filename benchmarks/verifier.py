"""Verifier throughput: pairs/s at batch 1/16/64 and premise 128/256/512 tokens, fp32 vs int8.

    .venv/bin/python benchmarks/verifier.py [--model DIR] [--compare DIR] [--fp32 DIR] [--repeats 1]

``--model`` is the int8 verifier (default: the bundled one); ``--compare`` another verifier
folder timed in the same run (e.g. the previous release); ``--fp32`` a folder from
``verifai models export-verifier`` without ``--int8`` (or one with ``model_fp32.onnx``), which
the package does not ship because of its size.
Premises are SciFact abstracts cut to the target length in tokens; the claim is one short
sentence. Prints a table; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from verifai_desktop.verify.nli import OnnxVerifier, bundled_dir

CLAIM = "Low-dose aspirin reduces the risk of a first stroke in women."
FILLER = (
    "In a randomized trial of 39,876 initially healthy women aged 45 years or older, 100 mg of "
    "aspirin on alternate days was compared with placebo over ten years of follow-up. "
    "Aspirin lowered the risk of stroke by 17 percent without affecting the risk of myocardial "
    "infarction or death from cardiovascular causes, while gastrointestinal bleeding requiring "
    "transfusion was more frequent. "
)


def premise_of(tokens: int) -> str:
    """A premise longer than ``tokens`` tokens: the runtime cuts it to fill the pair exactly."""
    return FILLER * (tokens // 40 + 2)


def variant(model_dir: Path, onnx_file: str, work: Path) -> Path:
    """A copy of the folder's small files whose verifier.json points at ``onnx_file``."""
    dst = work / onnx_file.replace(".onnx", "")
    dst.mkdir()
    for f in model_dir.iterdir():
        if f.suffix != ".onnx" and f.is_file():
            shutil.copy2(f, dst / f.name)
    (dst / onnx_file).symlink_to(model_dir / onnx_file)
    cfg = json.loads((dst / "verifier.json").read_text("utf-8"))
    cfg["onnx_file"] = onnx_file
    (dst / "verifier.json").write_text(json.dumps(cfg), encoding="utf-8")
    return dst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=bundled_dir())
    ap.add_argument("--compare", type=Path, default=None, help="another verifier, same run")
    ap.add_argument("--fp32", type=Path, default=None, help="fp32 export folder")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", default="1,16,64")
    ap.add_argument("--lengths", default="128,256,512")
    args = ap.parse_args()
    import onnxruntime as ort

    batches = [int(x) for x in args.batches.split(",")]
    lengths = [int(x) for x in args.lengths.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"int8": args.model}
        if args.compare is not None:
            variants["other"] = args.compare
        if args.fp32 is not None and (args.fp32 / "model_fp32.onnx").is_file():
            variants["fp32"] = variant(args.fp32, "model_fp32.onnx", Path(tmp))
        elif args.fp32 is not None:
            variants["fp32"] = args.fp32
        print(f"verifier {args.model}  onnxruntime {ort.__version__}  threads {args.threads}")
        if args.compare is not None:
            print(f"other    {args.compare}")
        print(f"{'model':<6} {'tokens':>6} {'batch':>6} {'pairs/s':>9} {'ms/pair':>8}")
        for label, folder in variants.items():
            for tokens in lengths:
                verifier_len = OnnxVerifier(
                    folder,
                    max_length=tokens,
                    calibrated=False,
                    batch_size=max(batches),
                    threads=args.threads,
                )
                premise = premise_of(tokens)
                for batch in batches:
                    pairs = [(premise, CLAIM)] * batch
                    if batch == batches[0]:
                        verifier_len.classify(pairs[:1])  # warm-up: session and first run
                    n_pairs = 0
                    t0 = time.perf_counter()
                    for _ in range(args.repeats):
                        verifier_len.classify(pairs)
                        n_pairs += batch
                    el = time.perf_counter() - t0
                    print(
                        f"{label:<6} {tokens:>6} {batch:>6} {n_pairs / el:9.1f} "
                        f"{1000 * el / n_pairs:8.1f}",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
