"""The verifier's training loop (``train_verifier.py``): its stages, resumable checkpoints.

:class:`Trainer` fine-tunes every layer of a Hugging Face encoder as a 3-class cross-encoder on
the stages of ``pool.py``, any number of them in order (two, or three with the perturbation
stage): length-bucketed batches in a seeded order (:func:`batch_order`),
AdamW with linear warm-up/decay per stage, and ``OUT/checkpoint.pt`` holding model, optimiser,
scheduler, random states and the :class:`Position` in the schedule, so that a resumed run
continues the very same schedule. Dev sets (``dev_data.py``) are scored at each checkpoint and
logged to ``OUT/progress.jsonl``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pool as pl
import torch
from dev_data import DevSet, macro_f1

log = logging.getLogger("train_verifier")
CHECKPOINT = "checkpoint.pt"


def batch_order(lengths: Sequence[int], batch_size: int, seed: int) -> list[list[int]]:
    """Length-bucketed batches in a seeded random order (less padding on a CPU).

    The same ``seed`` always gives the same batches: resuming recomputes them and skips the
    ones already done.
    """
    rng = random.Random(seed)
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    out = []
    mega = batch_size * 32
    for s in range(0, len(idx), mega):
        chunk = sorted(idx[s : s + mega], key=lambda i: lengths[i])
        out += [chunk[j : j + batch_size] for j in range(0, len(chunk), batch_size)]
    rng.shuffle(out)
    return out


ENCODE_BLOCK = 4096
"""Pairs tokenized in one call; a block with an over-long hypothesis is redone pair by pair."""


@dataclass(slots=True)
class Position:
    """Where a run is in its schedule (saved in the checkpoint)."""

    stage: int = 0
    epoch: int = 0
    batch: int = 0  # batches done in this epoch
    step: int = 0  # optimiser steps done in this stage
    global_step: int = 0
    pairs_seen: int = 0
    train_seconds: float = 0.0
    done: bool = False


class Trainer:
    """Staged fine-tuning with checkpoints that resume the same schedule.

    Args:
        out: run folder (``checkpoint.pt``, ``progress.jsonl``, ``stage<N>_<name>/`` at the
            end of each stage, ``hf/`` final model).
        stages: the stages (``models/pool.py``), trained in order.
        base: Hugging Face model name or folder of the encoder to start from; a folder with a
            3-class head of the same labels (a finished run's ``hf/``) keeps its head.
        batch_size: pairs per optimiser step.
        seed: seeds torch, numpy, Python and the batch order.
        dev: dev sets scored at each checkpoint (may be empty).
        device: ``cuda`` or ``cpu``; default CUDA when available.
        threads: torch intra-op threads on the CPU.
    """

    def __init__(
        self,
        out: Path,
        stages: Sequence[pl.Stage],
        *,
        base: str,
        batch_size: int = 32,
        seed: int = 13,
        dev: Sequence[DevSet] = (),
        device: str | None = None,
        threads: int = 2,
    ) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.stages = list(stages)
        self.batch_size = batch_size
        self.seed = seed
        self.dev = list(dev)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        torch.set_num_threads(threads)
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        label2id = {lab: i for i, lab in enumerate(pl.LABELS)}
        self.tokenizer = AutoTokenizer.from_pretrained(base)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            base,
            num_labels=3,
            id2label={i: lab for lab, i in label2id.items()},
            label2id=label2id,
            ignore_mismatched_sizes=True,
        ).to(self.device)
        self.pos = Position()
        self._mark = time.monotonic()
        self._encoded: dict[int, tuple[list[list[int]], list[list[int]], list[int]]] = {}
        self._opt: torch.optim.Optimizer | None = None
        self._sched: torch.optim.lr_scheduler.LambdaLR | None = None

    # -- schedule ----------------------------------------------------------------------------

    def _encode(self, s: int) -> tuple[list[list[int]], list[list[int]], list[int]]:
        if s not in self._encoded:
            st = self.stages[s]
            ids: list[list[int]] = []
            types: list[list[int]] = []
            for start in range(0, len(st.pairs), ENCODE_BLOCK):
                block = st.pairs[start : start + ENCODE_BLOCK]
                try:
                    enc = self._tokenize(block, st.max_len, "only_first")
                except Exception:  # the tokenizers library raises a bare Exception
                    enc = self._tokenize_one_by_one(block, st.max_len)
                ids += enc[0]
                types += enc[1]
            self._encoded[s] = (ids, types, [len(x) for x in ids])
        return self._encoded[s]

    def _tokenize(
        self, pairs: Sequence[pl.PoolPair], max_len: int, truncation: str
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids and type ids of ``pairs``, premise truncated first (``only_first``).

        Raises:
            Exception: with ``only_first``, a hypothesis alone longer than ``max_len``
                (the tokenizers library raises a bare ``Exception``).
        """
        enc = self.tokenizer(
            [p.premise for p in pairs],
            [p.hypothesis for p in pairs],
            truncation=truncation,
            max_length=max_len,
        )
        ids = [list(x) for x in enc["input_ids"]]
        types = enc.get("token_type_ids") or [[0] * len(x) for x in ids]
        return ids, [list(x) for x in types]

    def _tokenize_one_by_one(
        self, pairs: Sequence[pl.PoolPair], max_len: int
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Like :meth:`_tokenize`, pair by pair: a pair whose hypothesis alone is longer than
        ``max_len`` is cut ``longest_first`` (hypothesis too), every other pair as before."""
        ids: list[list[int]] = []
        types: list[list[int]] = []
        cut = 0
        for pair in pairs:
            try:
                one = self._tokenize([pair], max_len, "only_first")
            except Exception:  # see _tokenize
                one = self._tokenize([pair], max_len, "longest_first")
                cut += 1
            ids += one[0]
            types += one[1]
        log.info("%d pairs with a hypothesis longer than %d tokens cut on both sides", cut, max_len)
        return ids, types

    def _steps(self, s: int) -> int:
        st = self.stages[s]
        return math.ceil(len(st.pairs) / self.batch_size) * st.epochs

    def _order_seed(self, s: int, epoch: int) -> int:
        return self.seed * 1000 + s * 100 + epoch

    def _new_optimiser(self, s: int) -> None:
        st = self.stages[s]
        total = self._steps(s)
        warm = max(1, int(0.06 * total))
        self._opt = torch.optim.AdamW(self.model.parameters(), lr=st.lr, weight_decay=0.01)
        self._sched = torch.optim.lr_scheduler.LambdaLR(
            self._opt,
            lambda k: min((k + 1) / warm, max(0.0, (total - k) / max(1, total - warm))),
        )

    # -- checkpoints -------------------------------------------------------------------------

    def _signature(self) -> list[tuple[str, int, int, float, int]]:
        return [(st.name, len(st.pairs), st.epochs, st.lr, st.max_len) for st in self.stages]

    def save_checkpoint(self) -> Path:
        """Write ``checkpoint.pt`` atomically (temporary file, then rename)."""
        assert self._opt is not None and self._sched is not None
        state = {
            "model": self.model.state_dict(),
            "optimizer": self._opt.state_dict(),
            "scheduler": self._sched.state_dict(),
            "position": asdict(self.pos),
            "rng": {
                "torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
                "numpy": np.random.get_state(),
                "python": random.getstate(),
            },
            "stages": self._signature(),
            "batch_size": self.batch_size,
            "seed": self.seed,
        }
        path = self.out / CHECKPOINT
        tmp = path.with_suffix(".tmp")
        torch.save(state, tmp)
        os.replace(tmp, path)
        return path

    def load_checkpoint(self) -> None:
        """Restore model, optimiser, scheduler, random states and position.

        Raises:
            FileNotFoundError: no checkpoint in ``out``.
            ValueError: the checkpoint was made with other stages, batch size or seed.
        """
        state = torch.load(self.out / CHECKPOINT, map_location=self.device, weights_only=False)
        mine = self._signature()
        theirs = [tuple(x) for x in state["stages"]]
        if theirs != mine or state["batch_size"] != self.batch_size or state["seed"] != self.seed:
            raise ValueError(
                f"checkpoint in {self.out} was made with other data or settings "
                f"({theirs}, batch {state['batch_size']}, seed {state['seed']}); "
                "start a new run folder or use the same arguments"
            )
        self.model.load_state_dict(state["model"])
        self.pos = Position(**state["position"])
        if not self.pos.done:
            self._new_optimiser(self.pos.stage)
            assert self._opt is not None and self._sched is not None
            self._opt.load_state_dict(state["optimizer"])
            self._sched.load_state_dict(state["scheduler"])
        rng = state["rng"]
        torch.set_rng_state(rng["torch"])
        if rng["cuda"] is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(rng["cuda"])
        np.random.set_state(rng["numpy"])
        random.setstate(rng["python"])

    # -- evaluation --------------------------------------------------------------------------

    @torch.no_grad()
    def predict(self, pairs: Sequence[tuple[str, str]], max_len: int = 256) -> np.ndarray:
        """Logits, float32, shape (n, 3), columns in :data:`pool.LABELS` order."""
        was = self.model.training
        self.model.eval()
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]))
        for s in range(0, len(order), 64):
            idx = order[s : s + 64]
            enc = self.tokenizer(
                [pairs[i][0] for i in idx],
                [pairs[i][1] for i in idx],
                truncation="only_first",
                max_length=max_len,
                padding=True,
                return_tensors="pt",
            ).to(self.device)
            out[idx] = self.model(**enc).logits.float().cpu().numpy()
        self.model.train(was)
        return out

    def evaluate_dev(self) -> dict[str, float]:
        """Macro F1 (and CONTRADICT F1) of the raw model on every dev set."""
        res: dict[str, float] = {}
        for d in self.dev:
            pred = self.predict(d.pairs).argmax(axis=1).tolist()
            m, per = macro_f1(d.gold, pred)
            res[f"{d.name}_macro_f1"] = round(m, 4)
            res[f"{d.name}_contradict_f1"] = round(per[1], 4)
        return res

    def _log_progress(self, record: dict[str, object]) -> None:
        with (self.out / "progress.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    # -- the loop ----------------------------------------------------------------------------

    def train(
        self,
        *,
        max_minutes: float | None = None,
        max_steps: int | None = None,
        stop_after_stage: int | None = None,
        checkpoint_minutes: float = 15.0,
        log_every: int = 20,
    ) -> bool:
        """Train from the current position until done, ``max_minutes`` or ``max_steps``.

        Args:
            max_minutes: wall-time budget of this call; the step that passes it is the last,
                then a checkpoint is written.
            max_steps: stop after this many optimiser steps in this call (tests).
            stop_after_stage: stop when stage ``N`` (1-based) has finished. The checkpoint
                written at a stage boundary holds no optimiser moments (the next stage starts a
                new optimiser), so it is about the size of the model weights (about 91 MB for
                MiniLM, fp32): small enough to keep with the code between sessions.
            checkpoint_minutes: checkpoint (with dev scores) at this interval.
            log_every: log loss and pairs/s every this many steps.

        Returns:
            True when the whole schedule is done (final model in ``out/hf``), False when
            stopped early (resume with :meth:`load_checkpoint`, then :meth:`train`).
        """
        t_call = time.monotonic()
        last_ckpt = t_call
        self._mark = t_call
        steps_this_call = 0
        self.model.train()
        while not self.pos.done:
            s = self.pos.stage
            st = self.stages[s]
            ids, types, lengths = self._encode(s)
            weights = torch.tensor([p.weight for p in st.pairs], dtype=torch.float32)
            labels = torch.tensor([pl.LABELS.index(p.label) for p in st.pairs])
            if self._opt is None:
                self._new_optimiser(s)
            assert self._opt is not None and self._sched is not None
            order = batch_order(lengths, self.batch_size, self._order_seed(s, self.pos.epoch))
            run_loss, run_pairs, t_window = 0.0, 0, time.monotonic()
            while self.pos.batch < len(order):
                b = order[self.pos.batch]
                width = max(lengths[i] for i in b)
                x = torch.full((len(b), width), self.tokenizer.pad_token_id or 0)
                tt = torch.zeros((len(b), width), dtype=torch.long)
                mask = torch.zeros((len(b), width), dtype=torch.long)
                for r, i in enumerate(b):
                    x[r, : lengths[i]] = torch.tensor(ids[i])
                    tt[r, : lengths[i]] = torch.tensor(types[i])
                    mask[r, : lengths[i]] = 1
                feeds = {"input_ids": x, "attention_mask": mask}
                if "token_type_ids" in self.tokenizer.model_input_names:
                    feeds["token_type_ids"] = tt
                feeds = {k: v.to(self.device) for k, v in feeds.items()}
                logits = self.model(**feeds).logits
                y = labels[b].to(self.device)
                w = weights[b].to(self.device)
                loss = (torch.nn.functional.cross_entropy(logits, y, reduction="none") * w).mean()
                loss.backward()  # type: ignore[no-untyped-call]
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self._opt.step()
                self._sched.step()
                self._opt.zero_grad()
                self.pos.batch += 1
                self.pos.step += 1
                self.pos.global_step += 1
                self.pos.pairs_seen += len(b)
                steps_this_call += 1
                run_loss += float(loss.detach())
                run_pairs += len(b)
                if self.pos.global_step % log_every == 0:
                    now = time.monotonic()
                    log.info(
                        "%s epoch %d step %d/%d loss %.4f %.1f pairs/s",
                        st.name, self.pos.epoch, self.pos.step, self._steps(s),
                        run_loss / log_every, run_pairs / max(1e-9, now - t_window),
                    )  # fmt: skip
                    run_loss, run_pairs, t_window = 0.0, 0, now
                now = time.monotonic()
                out_of_time = max_minutes is not None and now - t_call > max_minutes * 60
                out_of_steps = max_steps is not None and steps_this_call >= max_steps
                if out_of_time or out_of_steps or now - last_ckpt > checkpoint_minutes * 60:
                    self._checkpoint(now - t_call, with_dev=not out_of_steps)
                    last_ckpt = time.monotonic()
                    if out_of_time or out_of_steps:
                        log.warning(
                            "stopping at %s epoch %d batch %d/%d (resume with --resume)",
                            st.name, self.pos.epoch, self.pos.batch, len(order),
                        )  # fmt: skip
                        return False
            # end of epoch
            self.pos.epoch += 1
            self.pos.batch = 0
            if self.pos.epoch >= st.epochs:
                self.model.save_pretrained(str(self.out / f"stage{s + 1}_{st.name}"))
                self.tokenizer.save_pretrained(str(self.out / f"stage{s + 1}_{st.name}"))
                self.pos.stage += 1
                self.pos.epoch = 0
                self.pos.step = 0
                if self.pos.stage < len(self.stages):
                    self._new_optimiser(self.pos.stage)
                else:
                    self.pos.done = True
            self._checkpoint(time.monotonic() - t_call, with_dev=True)
            last_ckpt = time.monotonic()
            if (
                stop_after_stage is not None
                and not self.pos.done
                and self.pos.epoch == 0
                and self.pos.stage == stop_after_stage
            ):
                log.warning("stage %d finished: stopping (resume with --resume)", self.pos.stage)
                return False
        self.model.save_pretrained(str(self.out / "hf"))
        self.tokenizer.save_pretrained(str(self.out / "hf"))
        return True

    def _checkpoint(self, elapsed_call: float, *, with_dev: bool) -> None:
        t0 = time.monotonic()
        self.pos.train_seconds = round(self.pos.train_seconds + t0 - self._mark, 1)
        scores = self.evaluate_dev() if with_dev and self.dev else {}
        path = self.save_checkpoint()
        record = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            **asdict(self.pos),
            "call_minutes": round(elapsed_call / 60, 2),
            "dev_seconds": round(time.monotonic() - t0, 1),
            **scores,
        }
        self._log_progress(record)
        log.info("checkpoint %s: %s", path, record)
        self._mark = time.monotonic()
