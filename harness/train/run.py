"""Train one arm end to end: configs + prepared data → Lightning Trainer with telemetry → results store.

`train_run` is what `harness run` and the sweep workers call. Everything a user can get wrong is checked
before this point (each config as it is built, `harness run`'s checks or the sweep's plan, and `check_run_inputs`
below for what needs torch); what happens here is compute.
"""

from __future__ import annotations

import logging
import os
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

import torch
from lightning.pytorch import Callback, Trainer, seed_everything
from lightning.pytorch.loggers import Logger
from lightning.pytorch.plugins.environments import LightningEnvironment, SLURMEnvironment

from errors import ConfigError
from harness import calc
from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig
from harness.data import PreparedData, TokenDataModule
from harness.provenance import run_provenance
from harness.train.checkpointing import RunCheckpoints
from harness.train.checkpoints import TOKENIZER, checkpoint_dir, checkpoint_step, last_checkpoint
from harness.train.distributed import AgreeToStop, from_rank_zero, run_strategy
from harness.train.divergence import DivergenceMonitor
from harness.train.fencing import UNFENCED, Fence, StopWhenFenced
from harness.train.interrupt import RunInterrupted, StopOnRequest, clear_stop_request, stop_on_signals
from harness.train.lit import LitLM
from harness.train.logger import FlushOnCheckpoint, ResultsLogger
from harness.train.placement import SINGLE_DEVICE, Placement
from harness.train.probes import ProbeTelemetry
from harness.train.progress import StepProgressBar
from harness.train.spikes import SpikeMonitor
from harness.train.summary import RunSummary
from harness.train.telemetry import StepTelemetry
from harness.train.validation import ValidationLoss


def resolve_device(train: TrainConfig) -> str:
    """'cuda' or 'cpu' for `train.device` ('auto': cuda when available); cuda without a GPU is a ConfigError."""
    if train.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if train.device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("TrainConfig.device='cuda' is invalid: no CUDA device is visible; use device=auto or cpu.")
    return train.device


def check_run_inputs(data: PreparedData, train: TrainConfig, placement: Placement = SINGLE_DEVICE) -> None:
    """What needs torch to check, checked before any model: the device exists, the placement's processes share
    the batch evenly, and the corpus has room for seq_len windows and the probe batch (DataError otherwise)."""
    resolve_device(train)
    placement.check_batch(train.batch_size, "this cell")
    TokenDataModule(data, train.seq_len, train.batch_size, train.seed).probe_batch(train.probe_seqs)


@dataclass(frozen=True)
class RunSpec:
    """One arm to train and where its results go."""

    model: ModelConfig
    train: TrainConfig
    data: DataConfig
    results_dir: Path
    run_id: str
    resume: bool = False  # continue from the last checkpoint; with none, start again at step 0 as a new segment
    sweep: str | None = None
    arm: str | None = None
    keep_checkpoints: str = "last"  # harness.train.checkpoints.KEEP_CHECKPOINTS; no effect on results or keys


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended: status (completed | diverged | pruned | interrupted), its closing summary, where checkpoints
    are, and for an interrupted run the signal and the step of its stop checkpoint."""

    run_id: str
    status: str
    summary: dict[str, Any] = field(default_factory=dict)
    checkpoint_dir: Path | None = None
    interrupted: RunInterrupted | None = None


# Set by the SLURM backend's workers: only there is Lightning's SLURM detection wanted (and its own requeue,
# which would race the backend's, stays off). Elsewhere an installed `srun` made Lightning print a hint per run.
SLURM_BACKEND_ENV = "HARNESS_SLURM_BACKEND"


def cluster_environment():
    """The cluster environment plugin: SLURM's without auto-requeue under our SLURM backend, else none."""
    if os.environ.get(SLURM_BACKEND_ENV):
        return SLURMEnvironment(auto_requeue=False)
    return LightningEnvironment()


def telemetry_callbacks(train: TrainConfig, model: ModelConfig) -> list:
    """The measuring callbacks of a run: divergence first (the step rows are always written for the step it
    stops at), summary last (it reads the others when training ends)."""
    steps = StepTelemetry(train.tokens_per_step, train.log_every, log_z_loss=train.z_loss > 0,
                          log_aux_loss=model.is_moe)
    spikes = SpikeMonitor(train.spike_window, train.spike_sigma)
    divergence = DivergenceMonitor(train.divergence_factor)
    probes = ProbeTelemetry(train.probe_every, train.probe_seqs, train.steps)
    validation = ValidationLoss(train.val_every, train.val_seqs)
    return [divergence, steps, spikes, probes, validation, RunSummary(steps, probes, spikes, divergence, validation)]


def distribution(placement: Placement, rank: int) -> dict:
    """The Trainer's strategy, devices and plugins: one device with our cluster environment, or the placement's
    processes (started and joined by the caller) under DDP or FSDP."""
    if not placement.distributed:
        return dict(devices=1, plugins=[cluster_environment()])
    return dict(devices=placement.devices, strategy=run_strategy(placement, rank))


def trainer_precision(train: TrainConfig) -> Literal["bf16-mixed", "32-true"]:
    """Lightning's precision for the run: bf16 autocast, or full fp32."""
    return "bf16-mixed" if train.precision == "bf16" else "32-true"


def build_trainer(train: TrainConfig, device: str, callbacks: list, loggers: list, progress: bool,
                  checkpoints: RunCheckpoints, fence: Fence = UNFENCED, placement: Placement = SINGLE_DEVICE,
                  rank: int = 0) -> Trainer:
    """A Trainer on one device or the placement's: our callbacks measure, validate and checkpoint, so
    Lightning's own loops stay off."""
    if fence is not UNFENCED or placement.distributed:  # every process runs the same callbacks (collectives)
        callbacks = [StopWhenFenced(fence), *callbacks]  # first: a lost claim writes no row of its step
    if progress:
        callbacks = [*callbacks, StepProgressBar(train.steps * train.grad_accum)]
    return Trainer(
        accelerator="gpu" if device == "cuda" else "cpu",
        **distribution(placement, rank),
        precision=trainer_precision(train),
        max_steps=train.steps,
        max_epochs=-1,
        accumulate_grad_batches=train.grad_accum,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        callbacks=[*callbacks, FlushOnCheckpoint(), checkpoints, StopOnRequest(checkpoints),
                   *([AgreeToStop()] if placement.distributed else [])],
        logger=loggers,
        enable_progress_bar=progress,
        enable_model_summary=False,
        deterministic=device == "cpu",
        default_root_dir=checkpoints.ckpt_dir,
        enable_checkpointing=False,
        use_distributed_sampler=False,  # each process takes its share of every batch itself (TrainWindows)
    )


def quiet_lightning() -> None:
    """Hide Lightning's start-up chatter (device banner, tips) and warnings that do not apply to our setup."""
    logging.getLogger("lightning.pytorch.utilities.rank_zero").setLevel(logging.WARNING)
    logging.getLogger("lightning.pytorch.accelerators.cuda").setLevel(logging.WARNING)
    for message in (
        ".*val_dataloader.*no `validation_step`",  # validation runs in our callback, on purpose
        ".*Checkpoint directory .* exists and is not empty",  # the run's tokenizer lives there; resume adds to it
        ".*LeafSpec.*",  # a torch deprecation inside Lightning's own pytree helper
    ):
        warnings.filterwarnings("ignore", message=message)
    if not os.environ.get(SLURM_BACKEND_ENV):
        # Lightning probes for SLURM when resolving ckpt_path even with our environment plugin, and hints at
        # `srun` on every run once SLURM is installed; outside our SLURM backend the hint is noise.
        warnings.filterwarnings("ignore", message=".*The `srun` command is available on your system but is not used.*")


@contextmanager
def process_flags(train: TrainConfig, device: str) -> Iterator[None]:
    """Process-wide torch switches a run needs, undone afterwards for the caller (a test session, a notebook,
    a worker running several arms): flush-denormal on CPU, the deterministic kernels that
    Trainer(deterministic=True) turns on, and no NaN-filling of new buffers. torch cannot report the
    flush-denormal state, so it returns to its default, off."""
    deterministic_before = torch.are_deterministic_algorithms_enabled()
    # torch.utils.deterministic is a module whose class gives it this property; its stubs know no attribute.
    fill_before = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]
    # Deterministic mode also NaN-fills every fresh `torch.empty` (to expose reads of uninitialized memory):
    # ~170 extra fills a step, 3% of a tiny CPU step, and no effect on results since nothing reads them.
    torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]
    flush = device == "cpu" and train.flush_denormal
    if flush:
        torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic_before)
        torch.utils.deterministic.fill_uninitialized_memory = fill_before  # type: ignore[attr-defined]
        if flush:
            torch.set_flush_denormal(False)


def resume_point(spec: RunSpec, placement: Placement = SINGLE_DEVICE, rank: int = 0) -> tuple[Path | None, int | None]:
    """(the checkpoint to resume from, the first step of the new segment): (None, None) for a fresh run,
    (None, 0) for a resume with no usable checkpoint (a new segment that supersedes every row). Process 0's
    choice on every process of a multi-device run."""
    resume_from = last_checkpoint(spec.results_dir, spec.run_id) if spec.resume and rank == 0 else None
    if resume_from is not None:
        resume_from = Path(os.path.realpath(resume_from))  # the file, not the link another writer may re-point
    if resume_from is not None and checkpoint_step(resume_from) >= spec.train.steps:
        # Checkpointed at its last step but never closed (killed during the final validation): Lightning would
        # train nothing and skip the end-of-run callbacks, leaving no summary; train it again from step 0.
        resume_from = None
    resume_from = from_rank_zero(resume_from, placement)
    if resume_from is not None:
        return resume_from, checkpoint_step(resume_from) + 1
    return None, 0 if spec.resume else None


def results_logger(spec: RunSpec, data: PreparedData, start_step: int | None, fence: Fence, device: str,
                   placement: Placement = SINGLE_DEVICE) -> ResultsLogger:
    """The run's `ResultsLogger` (it writes on process 0 only), with the provenance its segment records."""
    model_cfg, train = spec.model, spec.train
    return ResultsLogger(
        spec.results_dir, spec.run_id,
        config={**model_cfg.to_dict(), **train.to_dict(), **spec.data.to_dict(), "corpus_hash": data.corpus_hash},
        sweep=spec.sweep, arm=spec.arm, seed=train.seed,
        params=calc.params(model_cfg), flops_per_token=calc.flops_per_token(model_cfg, train.seq_len),
        resume_from_step=start_step, fence=fence,
        provenance=run_provenance(device, trainer_precision(train), placement.devices),
    )


def train_run(
    spec: RunSpec, data: PreparedData, extra_loggers: Sequence[Logger] = (), progress: bool = True,
    extra_callbacks: Sequence[Callback] = (), fence: Fence = UNFENCED, placement: Placement = SINGLE_DEVICE,
    rank: int = 0,
) -> RunOutcome:
    """Train (or, with `spec.resume`, continue) one arm; a divergence is an outcome, not an exception, and so
    is a stop requested by SIGINT/SIGTERM (status `interrupted`, after a checkpoint at the current step).
    A sweep worker passes the `fence` of its claim: every write checks it, and `FenceLost` is raised once the
    claim is lost (the run then wrote nothing after noticing). On several devices (`placement`), every process
    calls this with its `rank` inside a process group its caller made; only rank 0 writes
    (harness.train.distributed)."""
    quiet_lightning()
    train, model_cfg, writer = spec.train, spec.model, rank == 0
    device = resolve_device(train)
    ckpt_dir = checkpoint_dir(spec.results_dir, spec.run_id)
    resume_from, start_step = resume_point(spec, placement, rank)
    seed_everything(train.seed, verbose=False)
    module = LitLM(model_cfg, train)
    datamodule = TokenDataModule(data, train.seq_len, train.batch_size, train.seed, share=(rank, placement.devices))
    results = results_logger(spec, data, start_step, fence, device, placement)
    callbacks = [*telemetry_callbacks(train, model_cfg), *extra_callbacks]  # extras see this step's telemetry
    if writer:
        ckpt_dir.mkdir(parents=True, exist_ok=True)
        data.tokenizer.save(str(ckpt_dir / TOKENIZER))  # `harness sample` decodes with exactly this tokenizer
    with process_flags(train, device), stop_on_signals():
        checkpoints = RunCheckpoints(spec.results_dir, spec.run_id, train.checkpoint_every, fence, resume_from,
                                     spec.keep_checkpoints)
        trainer = build_trainer(train, device, callbacks, [results, *extra_loggers], progress, checkpoints, fence,
                                placement, rank)
        try:
            trainer.fit(module, datamodule=datamodule, ckpt_path=resume_from, weights_only=True)  # no code runs on load
        except RunInterrupted as stop:
            clear_stop_request()  # handled: the caller sees it in the outcome; a next run must not stop at once
            if results.fence_lost is not None:
                raise results.fence_lost from None
            return RunOutcome(spec.run_id, "interrupted", {"steps": stop.step}, ckpt_dir, stop)
    if results.fence_lost is not None:  # lost by the time the segment would close: it was left open
        raise results.fence_lost
    summary = next(c for c in callbacks if isinstance(c, RunSummary)).summary
    status = "pruned" if results.pruned_at_step is not None else summary["status"]
    if writer:
        checkpoints.settle(status)
    return RunOutcome(spec.run_id, status, summary, ckpt_dir)
