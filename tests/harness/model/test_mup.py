"""μP (Tensor Programs V) in the model: at its base width it is the standard model exactly; wider, every factor
is the closed form of the paper's Table 3 and the `mup` package's MuReadout, written out here: attention scale
√(base head_dim)/head_dim, logits and router logits × base/width on the readout's input, Gemma's embedding
factor held at √(base width). (Init and Adam LRs per tensor: test_registry.py's `check_mup_scaling`, and
tests/harness/train/test_optim_mup.py.)"""

import math

import pytest
import torch
import torch.nn.functional as F

from harness.config.model import ModelConfig
from harness.model import build_model

BASE_WIDTH = 32
SMALL = dict(vocab_size=61, d_model=BASE_WIDTH, n_layers=2, n_heads=4, max_seq_len=16)
MUP = dict(parametrization="mup", mup_base_width=BASE_WIDTH)
ARMS = {
    "llama-like": {},
    "untied, GQA, MoE, sinks, QK-norm": dict(tie_embeddings=False, n_kv_heads=2, n_experts=4, attn_sinks=True,
                                           qk_norm="rmsnorm"),
    "gemma-like": dict(norm_position="sandwich", norm_unit_offset=True, scale_embeddings=True, attn_scale=0.3,
                       attn_softcap=20.0, final_softcap=10.0, mlp="geglu", gelu_approximate="tanh"),
    "gpt2-like": dict(norm="layernorm", bias="all", positions="learned", mlp="gelu", norm_position="post"),
}


def _seeded(cfg: ModelConfig) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_model(cfg)


def _tokens(cfg: ModelConfig) -> torch.Tensor:
    return torch.randint(0, cfg.vocab_size, (2, 12), generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("arm", ARMS.values(), ids=ARMS)
def test_at_its_base_width_mup_is_the_standard_model(arm):
    standard = _seeded(ModelConfig(**SMALL, **arm))
    mup = _seeded(ModelConfig(**SMALL, **arm, **MUP))
    for (name, a), (_, b) in zip(standard.named_parameters(), mup.named_parameters(), strict=True):
        assert torch.equal(a, b), name
    tokens = _tokens(standard.cfg)
    assert torch.equal(standard(tokens), mup(tokens))


@pytest.mark.parametrize("arm", ARMS.values(), ids=ARMS)
def test_wider_the_attention_scale_goes_as_one_over_head_dim(arm):
    cfg = ModelConfig(**SMALL, **arm, **MUP).replace(d_model=4 * BASE_WIDTH)
    base_head_dim = cfg.head_dim * BASE_WIDTH / cfg.d_model
    at_base = arm.get("attn_scale", base_head_dim**-0.5)  # the standard model's scale at the base width
    expected = at_base * base_head_dim / cfg.head_dim  # ∝ 1/head_dim, equal to the standard scale at the base
    assert all(layer.attn.scale == pytest.approx(expected) for layer in build_model(cfg).layers)


@pytest.mark.parametrize("arm", ARMS.values(), ids=ARMS)
def test_wider_the_logits_are_the_readout_of_the_final_hidden_state_over_the_width_multiplier(arm):
    """MuReadout: logits = W (x · output_mult / width_mult), then the final soft-cap where one is set."""
    cfg = ModelConfig(**SMALL, **arm, **MUP).replace(d_model=4 * BASE_WIDTH)
    model = _seeded(cfg)
    final = {}
    model.final_norm.register_forward_hook(lambda module, args, out: final.update(x=out))
    logits = model(_tokens(cfg))
    readout = model.lm_head.weight if model.lm_head is not None else model.tok_emb.weight
    expected = F.linear(final["x"] * (BASE_WIDTH / cfg.d_model), readout)
    if cfg.final_softcap is not None:
        expected = cfg.final_softcap * torch.tanh(expected / cfg.final_softcap)
    torch.testing.assert_close(logits, expected)


def test_wider_the_router_reads_out_like_table_3s_output_weights():
    """A router whose logits are × 1/m equals, for the same input, a standard router whose weights are / m
    (Table 3's output weight, init std ∝ 1/fan_in): same routing, same mixture, same balance loss."""
    cfg = ModelConfig(**SMALL, **MUP, n_experts=4, moe_top_k=2).replace(d_model=4 * BASE_WIDTH)
    mup_moe = _seeded(cfg).layers[0].mlp
    standard_moe = _seeded(cfg.replace(parametrization="standard", mup_base_width=None)).layers[0].mlp
    state = dict(mup_moe.state_dict())
    state["router.weight"] = state["router.weight"] * (BASE_WIDTH / cfg.d_model)
    standard_moe.load_state_dict(state)
    x = torch.randn(2, 7, cfg.d_model, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(mup_moe(x), standard_moe(x))
    torch.testing.assert_close(mup_moe.aux_loss, standard_moe.aux_loss)


def test_wider_gemmas_embedding_factor_stays_the_base_widths():
    """scale_embeddings multiplies by √d_model; under μP by √mup_base_width, so the input keeps a width-free size."""
    cfg = ModelConfig(**SMALL, **MUP, scale_embeddings=True, positions="nope").replace(d_model=4 * BASE_WIDTH)
    model = _seeded(cfg)
    first_block_input = {}
    model.layers[0].register_forward_pre_hook(lambda module, args: first_block_input.update(x=args[0]))
    tokens = _tokens(cfg)
    model(tokens)
    torch.testing.assert_close(first_block_input["x"], model.tok_emb.weight[tokens] * math.sqrt(BASE_WIDTH))
