import math

import pytest
import torch

from harness.config.model import ModelConfig
from harness.model import build_model
from harness.model.transformer import build_mlp


def _moe(n_experts=4, top_k=2, gated=True, **overrides):
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=8, d_ff=12, n_heads=2, n_experts=n_experts, moe_top_k=top_k,
                      mlp="swiglu" if gated else "relu", **overrides)
    moe = build_mlp(cfg, 0)
    with torch.no_grad():
        for param in moe.parameters():
            param.normal_(std=0.5)
    return moe


def _reference(moe, x):
    """Per token: run the k chosen experts one by one and mix with renormalized router weights."""
    tokens = x.reshape(-1, x.shape[-1])
    out = torch.zeros_like(tokens)
    probs = moe.router(tokens).softmax(-1)
    for n, token in enumerate(tokens):
        weights, chosen = probs[n].topk(moe.top_k)
        if moe.renormalize:
            weights = weights / weights.sum()
        for weight, e in zip(weights, chosen.tolist()):
            out[n] += weight * moe.experts._expert(e, token[None])[0]
    return out.view(x.shape)


def test_matches_per_token_reference_gated_and_dense():
    for gated, top_k in ((True, 2), (False, 2), (True, 1), (False, 3)):
        moe = _moe(gated=gated, top_k=top_k)
        x = torch.randn(3, 5, 8)
        torch.testing.assert_close(moe(x), _reference(moe, x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("norm", "top_k", "renormalized"), [
    ("auto", 1, False), ("auto", 2, True), ("renormalize", 1, True), ("none", 2, False),
])
def test_topk_norm_decides_whether_chosen_weights_sum_to_one(norm, top_k, renormalized):
    moe = _moe(top_k=top_k, moe_topk_norm=norm)
    assert moe.renormalize == renormalized
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(moe(x), _reference(moe, x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("n_experts", "top_k", "gated"), [(4, 2, True), (3, 1, False), (5, 3, True)])
def test_slotted_dispatch_without_capacity_equals_the_sorted_one(n_experts, top_k, gated):
    """The compile-friendly path (fixed slots per expert, C = N) computes the same mixture and counts."""
    moe = _moe(n_experts=n_experts, top_k=top_k, gated=gated)
    tokens = torch.randn(14, 8)
    weights, chosen = moe.router(tokens).float().softmax(-1).topk(top_k)
    sorted_out, sorted_counts = moe._sorted(tokens, weights, chosen)
    slotted_out, slotted_counts = moe._slotted(tokens, weights, chosen)
    torch.testing.assert_close(slotted_out, sorted_out, rtol=1e-5, atol=1e-6)
    assert slotted_counts.tolist() == sorted_counts.tolist()


def _capacity_reference(moe, x):
    """Switch/GShard dropping, one assignment at a time: every token's first choice queues before any second
    choice, in token order; an expert takes at most C; a dropped assignment contributes nothing."""
    tokens = x.reshape(-1, x.shape[-1])
    probs = moe.router(tokens).softmax(-1)
    weights, chosen = probs.topk(moe.top_k)
    if moe.renormalize:
        weights = weights / weights.sum(-1, keepdim=True)
    slots, taken = moe.capacity(tokens.shape[0]), [0] * moe.n_experts
    out = torch.zeros_like(tokens)
    for k in range(moe.top_k):
        for n, token in enumerate(tokens):
            e = chosen[n, k].item()
            if taken[e] < slots:
                taken[e] += 1
                out[n] += weights[n, k] * moe.experts._expert(e, token[None])[0]
    return out.view(x.shape)


@pytest.mark.parametrize(("factor", "top_k"), [(0.5, 1), (0.75, 2), (1.0, 2), (8.0, 2)])
def test_capacity_factor_drops_assignments_beyond_each_experts_slots(factor, top_k):
    moe = _moe(n_experts=4, top_k=top_k, moe_capacity_factor=factor)
    x = torch.randn(2, 6, 8)  # N = 12 tokens
    assert moe.capacity(12) == min(12, math.ceil(factor * 12 * top_k / 4))
    torch.testing.assert_close(moe(x), _capacity_reference(moe, x), rtol=1e-5, atol=1e-5)
    if factor == 8.0:  # capacity N: nothing can be dropped
        torch.testing.assert_close(moe(x), _reference(moe, x), rtol=1e-5, atol=1e-5)


def test_a_small_capacity_really_drops_tokens():
    moe = _moe(n_experts=4, top_k=1, moe_capacity_factor=0.25)  # one slot per expert for 12 tokens
    out = moe(torch.randn(2, 6, 8)).reshape(12, 8)
    assert (out.abs().sum(-1) == 0).sum() >= 12 - 4  # at most 4 tokens got an expert


def test_router_learns_from_the_task_loss_for_every_k():
    for top_k in (1, 2):
        moe = _moe(top_k=top_k)
        moe(torch.randn(2, 6, 8)).square().sum().backward()  # a task loss only, no aux loss
        assert moe.router.weight.grad.abs().max() > 1e-4, top_k


def test_top_k_routing_uses_exactly_k_experts_per_token():
    moe = _moe(n_experts=5, top_k=2)
    x = torch.randn(1, 1, 8)
    used = []
    for e in range(5):
        with torch.no_grad():
            saved = moe.experts.up_proj[e].clone()
            moe.experts.up_proj[e].zero_()  # silence expert e: the output changes iff e was routed to
            used.append(not torch.allclose(moe(x), _moe(n_experts=5, top_k=2)(x)))
            moe.experts.up_proj[e].copy_(saved)
    assert sum(used) == 2


def test_aux_loss_is_one_when_balanced_and_grows_when_collapsed():
    moe = _moe(n_experts=4, top_k=1)
    x = torch.randn(2, 16, 8)
    with torch.no_grad():
        moe.router.weight.zero_()  # uniform router probabilities: the balanced minimum
    moe(x)
    torch.testing.assert_close(moe.aux_loss, torch.tensor(1.0))
    with torch.no_grad():
        moe.router.weight.zero_()
        moe.router.weight[0, 0] = 10.0
    x[..., 0] = 5.0  # every token's logit for expert 0 is 50: full collapse, f_0 = P_0 ≈ 1
    moe(x)
    torch.testing.assert_close(moe.aux_loss, torch.tensor(4.0))


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_switch_aux_loss_is_k_times_ours_and_equals_transformers(top_k):
    """moe_aux_loss='switch' is Switch/Mixtral's f_e (fraction of tokens that chose e), k times our
    assignment share, and equals transformers' load_balancing_loss_func on one layer's router logits."""
    from transformers.models.mixtral.modeling_mixtral import load_balancing_loss_func

    ours, switch = _moe(top_k=top_k), _moe(top_k=top_k, moe_aux_loss="switch")
    x = torch.randn(3, 7, 8)
    ours(x), switch(x)
    torch.testing.assert_close(switch.aux_loss, top_k * ours.aux_loss)
    logits = switch.router(x.reshape(-1, 8))
    torch.testing.assert_close(switch.aux_loss, load_balancing_loss_func((logits,), 4, top_k), rtol=1e-6, atol=1e-6)


def test_model_aux_loss_finite_at_least_balanced_and_zero_when_dense():
    tokens = torch.randint(0, 50, (2, 16))
    moe_model = build_model(ModelConfig(vocab_size=50, d_model=32, n_layers=2, n_heads=4, n_experts=4, moe_top_k=2))
    moe_model(tokens)
    assert torch.isfinite(moe_model.aux_loss) and moe_model.aux_loss >= 1.0 - 1e-3
    moe_model.aux_loss.backward()
    assert moe_model.layers[0].mlp.router.weight.grad.abs().sum() > 0
    dense = build_model(ModelConfig(vocab_size=50, d_model=32, n_layers=2, n_heads=4))
    dense(tokens)
    assert dense.aux_loss.item() == 0.0
