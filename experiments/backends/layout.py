"""How a sweep's workers sit on devices, in the same words for every backend (docs/sweeps.md, "Workers"):

- a **worker** is one claim loop: it trains one cell at a time, on `devices_per_cell` devices (one process per
  device, the worker being the first; a SLURM task holds one worker and all its processes);
- `workers_per_device` workers share one GPU (tiny proxies), which a multi-device cell cannot;
- `workers` counts workers in all, here or on SLURM, where an **array element** (one allocation on one node)
  holds `per_element(G)` of them and the array has `elements(G)` elements.
"""

from __future__ import annotations

from dataclasses import dataclass

from errors import ConfigError
from harness.train.placement import SINGLE_DEVICE, Placement


@dataclass(frozen=True)
class Layout:
    """Workers (None: one per device slot here, one array element's on SLURM), workers per GPU, and where each
    cell trains."""

    workers: int | None = None
    workers_per_device: int = 1
    placement: Placement = SINGLE_DEVICE

    def __post_init__(self) -> None:
        for option, value in (("--workers", self.workers), ("--workers-per-device", self.workers_per_device)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{option} {value!r} is invalid: must be an integer ≥ 1.")
        if self.workers_per_device > 1 and self.placement.distributed:
            raise ConfigError(f"--workers-per-device {self.workers_per_device} and --devices-per-cell "
                              f"{self.placement.devices}: a cell on several devices does not share them; give one.")

    @property
    def devices_per_cell(self) -> int:
        return self.placement.devices

    def per_element(self, gpus: int) -> int:
        """Workers in one array element holding `gpus` GPUs: `workers_per_device` per group of `devices_per_cell`
        GPUs; on an element without GPUs, `workers_per_device` on its CPUs."""
        if gpus == 0:
            return self.workers_per_device
        if gpus % self.devices_per_cell:
            raise ConfigError(f"--gpus-per-element {gpus} is not a multiple of --devices-per-cell "
                              f"{self.devices_per_cell}: each worker takes {self.devices_per_cell} of its element's "
                              "GPUs.")
        return gpus // self.devices_per_cell * self.workers_per_device

    def elements(self, gpus: int) -> int:
        """Array elements of the SLURM job: `workers` over the workers one element holds (which must divide it)."""
        per = self.per_element(gpus)
        workers = self.workers or per
        if workers % per:
            lower, upper = workers // per * per, (workers // per + 1) * per
            raise ConfigError(f"--workers {workers} is not a multiple of the {per} workers an array element holds "
                              f"({self._element_words(gpus)}): use {f'{lower} or ' if lower else ''}{upper}.")
        return workers // per

    def _element_words(self, gpus: int) -> str:
        if gpus == 0:
            return f"--workers-per-device {self.workers_per_device} on its CPUs"
        if self.placement.distributed:
            return f"--gpus-per-element {gpus} / --devices-per-cell {self.devices_per_cell}"
        return f"--gpus-per-element {gpus} × --workers-per-device {self.workers_per_device}"
