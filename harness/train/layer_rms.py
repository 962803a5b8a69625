"""Per-layer RMS of parameters, gradients and updates (Wortsman et al. 2023 track these per layer).

Parameters are grouped by block (`layers.{i}.…`); the RMS of a group is over all its elements together.
Parameters outside the blocks (embeddings, final norm, untied head) are reported one by one by name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torch import nn

LAYER_NAME = re.compile(r"^layers\.(\d+)\.")


def local(tensor: torch.Tensor) -> torch.Tensor:
    """This process's shard of a tensor FSDP shards (a DTensor), else the tensor itself."""
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


class LayerGroups:
    """The model's parameters split into blocks (in layer order) and the named ones outside blocks."""

    def __init__(self, model: nn.Module) -> None:
        layers: dict[int, list[nn.Parameter]] = {}
        self.outside: dict[str, nn.Parameter] = {}
        for name, param in model.named_parameters():
            match = LAYER_NAME.match(name)
            if match:
                layers.setdefault(int(match.group(1)), []).append(param)
            else:
                self.outside[name] = param
        self.layers = [layers[i] for i in sorted(layers)]
        self.all = [p for group in self.layers for p in group] + list(self.outside.values())
        self._sizes = ([sum(p.numel() for p in group) for group in self.layers]
                       + [p.numel() for p in self.outside.values()])
        self.sharded = any(hasattr(p, "to_local") for p in self.all)  # FSDP: DTensors, each process a shard

    def rms(self, tensors: Sequence[torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """RMS of `tensors` (one per parameter, in `self.all` order, or each process's shard of it under FSDP, as
        `local` gives): (n_layers,) per block and one per outside name."""
        norms = torch._foreach_norm([local(t).float() for t in tensors])  # one L2 norm per tensor (or shard)
        squares = torch.stack(norms).square()
        if self.sharded:  # the shards are disjoint: their squares sum to the whole tensor's (every process calls this)
            torch.distributed.all_reduce(squares)
        sizes, group_sums, start = self._sizes, [], 0
        for group in self.layers:
            group_sums.append(squares[start : start + len(group)].sum())
            start += len(group)
        group_sums.extend(squares[start:])
        rms = (torch.stack(group_sums) / torch.tensor(sizes, device=squares.device)).sqrt()
        n_layers = len(self.layers)
        return rms[:n_layers], dict(zip(self.outside, rms[n_layers:]))
