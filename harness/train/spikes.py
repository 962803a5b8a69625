"""Loss and grad-norm spikes: a value ≥ mean + k·σ of the previous W values of its series.

OLMo 2 (k = 7, W = 1000) and OLMo-core (k = 6, W = 128) use this rule; both are one `TrainConfig` away
(`spike_sigma`, `spike_window`). A value is only judged once W earlier values exist, and every value
(spike or not) then enters the window, as in OLMo-core. Only rises count: OLMo 2's text says "away from"
the rolling average, but a loss or gradient norm falling fast is not an instability (OLMo-core also
tests value > mean + k·σ). The run's spike score is OLMo 2's: the percentage of a series' values that
are spikes.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from lightning.pytorch import Callback

from harness.train.records import record_event

SERIES = {"loss": "train_loss", "grad_norm": "grad_norm"}  # series → its per-step metric


class SpikeDetector:
    """The rolling k-σ rule over one series, with the counts behind its spike score."""

    def __init__(self, window: int, sigma: float) -> None:
        self.window = window
        self.sigma = sigma
        self.history: deque[float] = deque(maxlen=window)
        self.values_seen = 0
        self.spikes = 0

    def update(self, value: float) -> bool:
        """Judge `value` against the window of earlier values, then add it; True if it is a spike.

        Non-finite values are left to the divergence rule: they neither count nor enter the window.
        """
        if not math.isfinite(value):
            return False
        is_spike = False
        if len(self.history) == self.window:
            mean = sum(self.history) / self.window
            std = math.sqrt(sum((x - mean) ** 2 for x in self.history) / self.window)
            is_spike = std > 0 and value >= mean + self.sigma * std
        self.history.append(value)
        self.values_seen += 1
        self.spikes += is_spike
        return is_spike

    @property
    def score(self) -> float:
        """OLMo 2's spike score: percentage of the values seen that were spikes (0 before any value)."""
        return 100.0 * self.spikes / self.values_seen if self.values_seen else 0.0

    def state_dict(self) -> dict[str, Any]:
        return {"history": list(self.history), "values_seen": self.values_seen, "spikes": self.spikes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.history = deque(state["history"], maxlen=self.window)
        self.values_seen = state["values_seen"]
        self.spikes = state["spikes"]


class SpikeMonitor(Callback):
    """Runs one `SpikeDetector` per series on every optimizer step; records `<series>_spike` events."""

    def __init__(self, window: int, sigma: float) -> None:
        self.detectors = {series: SpikeDetector(window, sigma) for series in SERIES}

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        values = pl_module.finished_step_values()
        if values is None:
            return
        for series, detector in self.detectors.items():
            value = values[SERIES[series]]
            if detector.update(value):
                detail = f"{SERIES[series]}={value:.6g} ≥ mean + {detector.sigma:g}σ of the previous {detector.window}"
                record_event(trainer, trainer.global_step, f"{series}_spike", value, detail)

    def scores(self) -> dict[str, float]:
        """Spike score (percent) per series, named `<series>_spike_score`."""
        return {f"{series}_spike_score": detector.score for series, detector in self.detectors.items()}

    def spike_counts(self) -> dict[str, int]:
        """Number of spikes per series, named `<series>_spikes`."""
        return {f"{series}_spikes": detector.spikes for series, detector in self.detectors.items()}

    def state_dict(self) -> dict[str, Any]:
        return {series: detector.state_dict() for series, detector in self.detectors.items()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for series, detector in self.detectors.items():
            detector.load_state_dict(state_dict[series])
