"""One process of the multi-device runs of test_distributed.py: `python run_process.py JOBS.json RANK`.

Trains each run of JOBS.json in turn as process RANK of `devices`, in a process group made for that run (a gloo
group through a file rendezvous) and destroyed after it, as a sweep worker does per cell. A run may name a step
at which one rank alone asks to stop (what a signal to one process of the run does, or a search's pruner)."""

import json
import signal
import sys
from datetime import timedelta
from pathlib import Path

import torch.distributed as dist
from lightning.pytorch import Callback

from harness.config import DataConfig, ModelConfig, TrainConfig
from harness.data import prepare
from harness.train.interrupt import request_stop
from harness.train.placement import Placement
from harness.train.run import RunSpec, train_run


class StopAt(Callback):
    """At `step`, this process alone asks to stop: as a signal does ("signal"), or as a pruner does ("decide")."""

    def __init__(self, step: int, how: str) -> None:
        self.step, self.how = step, how

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step == self.step and self.how == "signal":
            request_stop(signal.SIGTERM)
        elif trainer.global_step == self.step:
            trainer.should_stop = True


def main(jobs_path: str, rank: int) -> None:
    jobs = json.loads(Path(jobs_path).read_text())
    model, train, data = (ModelConfig.from_dict(jobs["model"]), TrainConfig.from_dict(jobs["train"]),
                          DataConfig.from_dict(jobs["data"]))
    prepared = prepare(data, model.vocab_size)
    for i, job in enumerate(jobs["runs"]):
        dist.init_process_group("gloo", init_method=f"file://{jobs['rendezvous']}-{i}", rank=rank,
                                world_size=job["devices"], timeout=timedelta(seconds=120))
        stop = [StopAt(job["stop_at"], job["stop_how"])] if job.get("stop_rank") == rank else []
        spec = RunSpec(model, train, data, Path(job["results"]), job["run_id"], resume=job.get("resume", False))
        outcome = train_run(spec, prepared, progress=False, extra_callbacks=stop,
                            placement=Placement(job["devices"], job["strategy"]), rank=rank)
        print(f"rank {rank} {job['run_id']}: {outcome.status}", flush=True)
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
