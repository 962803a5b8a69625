"""Top-k routed mixture of experts (Shazeer et al. 2017; Switch, Fedus et al. 2021; Mixtral).

Experts are stacked parameters (E, ·, ·) in nn.Linear layout (out, in). Tokens are sorted by expert so each
expert runs one matmul over its contiguous slice: a loop over experts, never over tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from harness.model.mlp import Activation


class Experts(nn.Module):
    """E feed-forward networks of one kind (gated or dense), without biases."""

    def __init__(self, n_experts: int, d_model: int, d_ff: int, activation: Activation, gated: bool) -> None:
        super().__init__()
        self.activation = activation
        self.gate_proj = nn.Parameter(torch.empty(n_experts, d_ff, d_model)) if gated else None
        self.up_proj = nn.Parameter(torch.empty(n_experts, d_ff, d_model))
        self.down_proj = nn.Parameter(torch.empty(n_experts, d_model, d_ff))

    def _expert(self, e: int, x: torch.Tensor) -> torch.Tensor:
        hidden = F.linear(x, self.up_proj[e])  # (n, d_ff)
        if self.gate_proj is not None:
            hidden = self.activation(F.linear(x, self.gate_proj[e])) * hidden
        else:
            hidden = self.activation(hidden)
        return F.linear(hidden, self.down_proj[e])  # (n, d)

    def forward(self, x: torch.Tensor, counts: list[int]) -> torch.Tensor:
        """x (N, d) sorted by expert, `counts[e]` rows for expert e → (N, d)."""
        return torch.cat([self._expert(e, rows) for e, rows in enumerate(x.split(counts))])


class MixtureOfExperts(nn.Module):
    """Softmax router, top-k experts per token. With k ≥ 2 the chosen weights are renormalized to sum 1
    (Mixtral); with k = 1 the expert output is scaled by its router probability (Switch), since a
    renormalized single weight is the constant 1 and the router would get no gradient from the task loss.

    After each forward `aux_loss` holds the Switch load-balancing loss E·Σ_e f_e·P_e, where f_e is the share
    of routed (token, slot) assignments that went to expert e and P_e the mean router probability of e.
    It is 1 whenever the router's probabilities are uniform, and grows as routing collapses.
    """

    def __init__(self, d_model: int, n_experts: int, top_k: int, experts: Experts) -> None:
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = experts
        self.aux_loss = torch.zeros(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        tokens = x.reshape(-1, shape[-1])  # (N, d)
        probs = self.router(tokens).float().softmax(dim=-1)  # (N, E)
        weights, chosen = probs.topk(self.top_k, dim=-1)  # (N, k)
        if self.top_k > 1:
            weights = weights / weights.sum(dim=-1, keepdim=True)

        flat_choice = chosen.flatten()  # (N·k,) token-major
        order = flat_choice.argsort(stable=True)  # assignments grouped by expert
        token_of = order // self.top_k  # (N·k,) which token each sorted assignment came from
        counts = torch.bincount(flat_choice, minlength=self.n_experts)  # (E,)
        expert_out = self.experts(tokens[token_of], counts.tolist())  # (N·k, d)
        expert_out = expert_out * weights.flatten()[order, None].to(expert_out.dtype)
        out = expert_out.new_zeros(tokens.shape).index_add_(0, token_of, expert_out)  # (N, d)

        routed_share = counts.float() / flat_choice.numel()  # f_e
        self.aux_loss = self.n_experts * (routed_share * probs.mean(dim=0)).sum()
        return out.view(shape)
