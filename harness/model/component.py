"""`Component`: a module whose parameters are declared torch-free (`harness.model.spec`) and which
initializes itself from that declaration (each declared `Init` fills its own tensor), so no list of module
types or init kinds is needed anywhere else."""

from __future__ import annotations

import torch
from torch import nn

from harness.model.spec.params import Params


class Component(nn.Module):
    """Call `declare(params)` in `__init__` after creating the sub-layers (nn.Linear, …) that the dotted
    names reach into; undotted names become this module's own parameters."""

    declared: Params

    def declare(self, params: Params) -> None:
        """Adopt the declaration and create the own parameters it names that do not exist yet."""
        self.declared = params
        for name, param in params.items():
            if "." not in name and self._parameters.get(name) is None:
                self.register_parameter(name, nn.Parameter(torch.empty(param.shape)))

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Initialize every declared tensor (own and of plain sub-layers), in declaration order, each by its
        declared `Init`."""
        for name, param in self.declared.items():
            param.init.fill(self.get_parameter(name))


class TorchLayerComponent(Component):
    """A Component that is also a torch layer (nn.Embedding, nn.Linear; listed first among the bases). The
    layer's constructor initializes it before the declaration exists: that first fill is torch's own, so the
    random draws, and with them every seeded model's weights, stay what they were before components
    declared their tensors; from then on `reset_parameters` follows the declaration."""

    def reset_parameters(self) -> None:
        if hasattr(self, "declared"):
            Component.reset_parameters(self)
        else:
            # The torch layer's, next after Component in the MRO; mypy looks for it on nn.Module, which has none.
            super(Component, self).reset_parameters()  # type: ignore[misc]


def declared_linear(params: Params, name: str) -> nn.Linear:
    """The nn.Linear that `params` declares as `name` (its shape, and a bias iff one is declared)."""
    fan_out, fan_in = params[f"{name}.weight"].shape
    return nn.Linear(fan_in, fan_out, bias=f"{name}.bias" in params)
