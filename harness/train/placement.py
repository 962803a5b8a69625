"""Where one run trains: on how many devices, and how they split the work (docs/training.md, "One run on several
devices"). Torch-free, so the command line checks a placement before importing anything heavy.

A placement is not part of the experiment: `TrainConfig.batch_size` stays the batch of one optimizer step, and
each of N devices trains on its 1/N share of that same batch, so a cell's key, its data and (up to float
rounding) its losses are the same on one device or several, and a cell may resume on another device count.
"""

from __future__ import annotations

from dataclasses import dataclass

from errors import ConfigError, did_you_mean

STRATEGIES = ("ddp", "fsdp")  # Lightning's DDPStrategy (a full copy per device) / FSDPStrategy (sharded weights)


@dataclass(frozen=True)
class Placement:
    """`devices` processes, one per device, train one run together with `strategy`; process 0 writes the store."""

    devices: int = 1
    strategy: str = "ddp"

    def __post_init__(self) -> None:
        if isinstance(self.devices, bool) or not isinstance(self.devices, int) or self.devices < 1:
            raise ConfigError(f"--devices-per-cell {self.devices!r} is invalid: must be an integer ≥ 1.")
        if self.strategy not in STRATEGIES:
            hint = did_you_mean(str(self.strategy), STRATEGIES)
            raise ConfigError(f"--strategy {self.strategy!r} is invalid: use {' or '.join(STRATEGIES)}{hint or '.'}")

    @property
    def distributed(self) -> bool:
        """Whether the run spans several processes (collectives, one writer)."""
        return self.devices > 1

    def check_batch(self, batch_size: int, where: str) -> None:
        """ConfigError unless every device gets an equal whole share of `batch_size` sequences."""
        if batch_size % self.devices:
            shares = [n for n in range(1, batch_size + 1) if batch_size % n == 0]
            raise ConfigError(
                f"--devices-per-cell {self.devices} does not divide TrainConfig.batch_size={batch_size} of {where}: "
                f"each device trains an equal share of the batch; use one of {', '.join(map(str, shares))}, or "
                f"--set batch_size=… to a multiple of {self.devices}.")

    def worker_args(self) -> tuple[str, ...]:
        """The sweep worker's options that carry this placement (`python -m experiments.workers.worker`)."""
        return ("--devices-per-cell", str(self.devices), "--strategy", self.strategy)


SINGLE_DEVICE = Placement()
