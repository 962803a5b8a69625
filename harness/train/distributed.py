"""One run on several devices: the Lightning strategy of a `Placement`, and the decisions its processes must take
together.

The processes of such a run are started and joined by its caller before `train_run` (a sweep worker and its
helper processes, `experiments/workers/ranks.py`; a test), which initializes `torch.distributed` for them; so
Lightning launches nothing and creates no process group of its own (`_init_dist_connection` returns when one
exists). Process 0 is the run's only writer: the results logger writes on rank zero only, and only it writes
checkpoint files, re-points `last.ckpt` and checks the claim's fence. Whatever ends or checkpoints the run at a
step (a signal, a lost claim) is agreed by every process first (`agree_max`), since a checkpoint is a
collective: one process stopping alone would leave the others waiting in the next step's all-reduce.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from lightning.fabric.plugins.environments import ClusterEnvironment
from lightning.pytorch import Callback

from harness.train.placement import Placement


class RunProcesses(ClusterEnvironment):
    """The processes of one run as the caller started them: `world_size` on one node, this one `rank` (also its
    device index among the devices it sees)."""

    def __init__(self, rank: int, world_size: int) -> None:
        super().__init__()
        self._rank, self._world_size = rank, world_size

    @property
    def creates_processes_externally(self) -> bool:
        return True  # Lightning must not launch any

    @property
    def main_address(self) -> str:
        return "127.0.0.1"  # unused: the process group exists before the Trainer

    @property
    def main_port(self) -> int:
        return 0

    @staticmethod
    def detect() -> bool:
        return False

    def world_size(self) -> int:
        return self._world_size

    def set_world_size(self, size: int) -> None:
        self._world_size = size

    def global_rank(self) -> int:
        return self._rank

    def set_global_rank(self, rank: int) -> None:
        self._rank = rank

    def local_rank(self) -> int:
        return self._rank

    def node_rank(self) -> int:
        return 0


def run_strategy(placement: Placement, rank: int):
    """Lightning's strategy for `placement`'s processes, joined through the existing process group: DDP (a full
    copy of the model per process), or FSDP through Lightning's ModelParallelStrategy (FSDP2: `LitLM.configure_model`
    shards each block and then the rest) saving full checkpoints, one file rank 0 writes, as DDP's."""
    from lightning.pytorch.strategies import DDPStrategy, ModelParallelStrategy

    if not dist.is_initialized():
        raise RuntimeError(f"a run on {placement.devices} devices needs torch.distributed initialized by its caller "
                           "(experiments/workers/ranks.py does it for sweep workers)")
    environment, backend = RunProcesses(rank, placement.devices), dist.get_backend()
    if placement.strategy == "fsdp":
        strategy = ModelParallelStrategy(data_parallel_size=placement.devices, tensor_parallel_size=1,
                                         save_distributed_checkpoint=False, process_group_backend=backend)
        strategy.cluster_environment = environment  # its constructor takes none; Lightning's default would launch
        return strategy
    return DDPStrategy(cluster_environment=environment, process_group_backend=backend)


def agree_max(trainer, value: int) -> int:
    """The largest of every process's `value` (a stop signal's number, 1 for a lost claim; 0 for none): what one
    process of a run decides at a step, all of them do. A run on one device returns `value`."""
    if trainer.world_size == 1:
        return value
    tensor = torch.tensor([value], device=trainer.strategy.root_device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return int(tensor.item())


def from_rank_zero(value, placement: Placement):
    """Process 0's `value` on every process (which checkpoint to resume from: the processes must agree even if a
    writer re-points `last.ckpt` meanwhile)."""
    if not placement.distributed:
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


class AgreeToStop(Callback):
    """A stop one process decides alone (a search's pruner reads process 0's validation) ends every process of
    the run at the same finished step; last among the callbacks, after every decision of the step."""

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if pl_module.finished_step_values() is not None:
            trainer.should_stop = bool(agree_max(trainer, int(trainer.should_stop)))
