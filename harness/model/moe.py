"""Top-k routed mixture of experts (Shazeer et al. 2017; Switch, Fedus et al. 2021; Mixtral).

Experts are stacked parameters (E, ·, ·) in nn.Linear layout (out, in), declared in `harness.model.spec.mlp`.
Two dispatches compute the same mixture:
- sorted (eager, no capacity): assignments sorted by expert, one matmul per expert over its contiguous slice.
  Exact work, but splitting needs the per-expert counts on the host, which breaks a `torch.compile` graph.
- slotted (under `torch.compile`, or with `moe_capacity_factor`): every expert gets a fixed number of slots
  C, filled in routing priority; one batched matmul over (E, C, d). Shapes never depend on the routing, so
  the layer compiles into one graph. Without a capacity factor C = N (no token can be dropped, E/k times
  the expert work); with one, C = ceil(factor · N·k / E) and assignments beyond C are dropped.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.component import Component, declared_linear
from harness.model.mlp import activation
from harness.model.spec.parametrization import readout_multiplier
from harness.model.spec.params import Params


def assignment_share_loss(counts: torch.Tensor, mean_probs: torch.Tensor, n_tokens: int, top_k: int) -> torch.Tensor:
    """E·Σₑ fₑ·Pₑ with fₑ the share of the N·k (token, slot) assignments routed to e: 1 for a uniform router
    at any k (our default)."""
    return counts.numel() * (counts.float() / (n_tokens * top_k) * mean_probs).sum()


def switch_loss(counts: torch.Tensor, mean_probs: torch.Tensor, n_tokens: int, top_k: int) -> torch.Tensor:
    """E·Σₑ fₑ·Pₑ with fₑ the fraction of the N tokens that chose e in any slot: Switch (k = 1) and Mixtral /
    transformers' load_balancing_loss_func per layer; k for a uniform router, i.e. k × `assignment_share_loss`."""
    return counts.numel() * (counts.float() / n_tokens * mean_probs).sum()


class Experts(Component):
    """E feed-forward networks of one kind (gated or dense), without biases."""

    gate_proj: torch.nn.Parameter  # (E, d_ff, d), declared only when gated
    up_proj: torch.nn.Parameter  # (E, d_ff, d)
    down_proj: torch.nn.Parameter  # (E, d, d_ff)

    def __init__(self, cfg: ModelConfig, layer: int, params: Params) -> None:
        super().__init__()
        self.activation = activation(cfg)
        self.gated = "gate_proj" in params
        self.declare(params)

    def _hidden(self, up: torch.Tensor, gate: torch.Tensor | None) -> torch.Tensor:
        return self.activation(gate) * up if gate is not None else self.activation(up)

    def _expert(self, e: int, x: torch.Tensor) -> torch.Tensor:
        gate = F.linear(x, self.gate_proj[e]) if self.gated else None
        hidden = self._hidden(F.linear(x, self.up_proj[e]), gate)  # (n, d_ff)
        return F.linear(hidden, self.down_proj[e])  # (n, d)

    def forward(self, x: torch.Tensor, counts: list[int]) -> torch.Tensor:
        """x (N, d) sorted by expert, `counts[e]` rows for expert e → (N, d)."""
        return torch.cat([self._expert(e, rows) for e, rows in enumerate(x.split(counts))])

    def batched(self, x: torch.Tensor) -> torch.Tensor:
        """x (E, C, d), slot rows of each expert → (E, C, d)."""
        gate = x @ self.gate_proj.transpose(1, 2) if self.gated else None
        hidden = self._hidden(x @ self.up_proj.transpose(1, 2), gate)  # (E, C, d_ff)
        return hidden @ self.down_proj.transpose(1, 2)


class MixtureOfExperts(Component):
    """Softmax router, top-k experts per token. `moe_topk_norm` decides whether the chosen weights are
    renormalized to sum 1 (by default for k ≥ 2, Mixtral; with k = 1 the expert output is scaled by its router
    probability, Switch, since a renormalized single weight is the constant 1 and the router would get no
    gradient from the task loss).

    After each forward `aux_loss` holds the load-balancing loss of `moe_aux_loss` (see the two functions
    above); both grow as routing collapses.
    """

    def __init__(self, cfg: ModelConfig, layer: int, params: Params, experts: Experts) -> None:
        super().__init__()
        self.n_experts, self.top_k = cfg.n_experts, cfg.moe_top_k
        self.renormalize = registry.MOE_TOPK_NORMS[cfg.moe_topk_norm](cfg.moe_top_k)
        self.capacity_factor = cfg.moe_capacity_factor
        self.aux = registry.resolve(registry.MOE_AUX_LOSSES[cfg.moe_aux_loss])
        self.router = declared_linear(params, "router")
        self.router_multiplier = readout_multiplier(cfg)  # 1/m under μP: the router is a readout
        self.experts = experts
        self.declare(params)
        self.aux_loss = torch.zeros(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        tokens = x.reshape(-1, shape[-1])  # (N, d)
        logits = self.router(tokens)  # (N, E)
        if self.router_multiplier != 1.0:
            logits = logits * self.router_multiplier
        probs = logits.float().softmax(dim=-1)  # (N, E)
        weights, chosen = probs.topk(self.top_k, dim=-1)  # (N, k)
        if self.renormalize:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        if self.capacity_factor is None and not torch.compiler.is_compiling():
            out, counts = self._sorted(tokens, weights, chosen)
        else:
            out, counts = self._slotted(tokens, weights, chosen)
        self.aux_loss = self.aux(counts, probs.mean(dim=0), tokens.shape[0], self.top_k)
        return out.view(shape)

    def _sorted(self, tokens: torch.Tensor, weights: torch.Tensor, chosen: torch.Tensor):
        flat_choice = chosen.flatten()  # (N·k,) token-major
        order = flat_choice.argsort(stable=True)  # assignments grouped by expert
        token_of = order // self.top_k  # (N·k,) which token each sorted assignment came from
        counts = torch.bincount(flat_choice, minlength=self.n_experts)  # (E,)
        expert_out = self.experts(tokens[token_of], counts.tolist())  # (N·k, d)
        expert_out = expert_out * weights.flatten()[order, None].to(expert_out.dtype)
        return expert_out.new_zeros(tokens.shape).index_add_(0, token_of, expert_out), counts  # (N, d)

    def capacity(self, n_tokens: int) -> int:
        """Slots per expert: N (nothing dropped) without a capacity factor, else ceil(factor·N·k / E) ≤ N."""
        if self.capacity_factor is None:
            return n_tokens
        return max(1, min(n_tokens, math.ceil(self.capacity_factor * n_tokens * self.top_k / self.n_experts)))

    def _slotted(self, tokens: torch.Tensor, weights: torch.Tensor, chosen: torch.Tensor):
        n_tokens, d_model = tokens.shape
        slots = self.capacity(n_tokens)
        # Slot-major priority (Switch, GShard): every token's first choice queues before any second choice.
        flat_choice = chosen.t().reshape(-1)  # (k·N,)
        is_expert = flat_choice[:, None] == torch.arange(self.n_experts, device=tokens.device)  # (k·N, E)
        rank = (is_expert.cumsum(dim=0) * is_expert).sum(dim=-1) - 1  # (k·N,) place in its expert's queue
        scratch = self.n_experts * slots  # one extra row receives every dropped assignment
        row = torch.where(rank < slots, flat_choice * slots + rank, scratch)  # (k·N,)
        token_rows = tokens.repeat(self.top_k, 1)  # (k·N, d): assignment j is token j mod N
        buffer = tokens.new_zeros(scratch + 1, d_model).index_add_(0, row, token_rows)  # (E·C + 1, d)
        expert_out = self.experts.batched(buffer[:scratch].view(self.n_experts, slots, d_model))  # (E, C, d)
        expert_out = torch.cat((expert_out.reshape(scratch, d_model), expert_out.new_zeros(1, d_model)))
        picked = expert_out[row].view(self.top_k, n_tokens, d_model)  # dropped assignments read zeros
        out = (picked * weights.t()[..., None].to(picked.dtype)).sum(dim=0)  # (N, d)
        return out, is_expert.sum(dim=0)
