import torch

from harness.config.model import ModelConfig
from harness.model import build_model
from harness.model.transformer import build_mlp


def _moe(n_experts=4, top_k=2, gated=True, **overrides):
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=8, d_ff=12, n_heads=2, n_experts=n_experts, moe_top_k=top_k,
                      mlp="swiglu" if gated else "relu", **overrides)
    moe = build_mlp(cfg)
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
