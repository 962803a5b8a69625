import math
import re

import pytest
import torch

from harness.config.model import ModelConfig
from harness.model import build_model
from harness.model.transformer import Transformer

BASE = dict(vocab_size=50, d_model=32, n_layers=2, n_heads=4, max_seq_len=16)
# The parameter-name table of docs/internals.md, as patterns (the HF import and calculator rely on it).
NAME_TABLE = [
    r"tok_emb\.weight", r"pos_emb\.weight", r"lm_head\.weight", r"final_norm\.(weight|bias)",
    r"layers\.\d+\.attn\.[qkvo]_proj\.(weight|bias)", r"layers\.\d+\.attn\.[qk]_norm\.(weight|bias)",
    r"layers\.\d+\.attn\.sinks", r"layers\.\d+\.mlp\.(gate|up|down)_proj\.(weight|bias)",
    r"layers\.\d+\.mlp\.router\.weight", r"layers\.\d+\.mlp\.experts\.(gate|up|down)_proj",
    r"layers\.\d+\.norm_(attn|mlp)_(in|out|post)\.(weight|bias)",
]


def _params(**overrides):
    return dict(build_model(ModelConfig(**BASE, **overrides)).named_parameters())


@pytest.mark.parametrize("overrides", [
    {}, {"positions": "learned", "bias": "all", "norm": "layernorm", "tie_embeddings": False},
    {"qk_norm": "layernorm", "bias": "all", "attn_sinks": True}, {"n_experts": 3, "norm_position": "sandwich"},
    {"norm_position": "post", "bias": "qkv"}, {"norm_position": "parallel", "mlp": "relu"},
])
def test_parameter_names_follow_the_internals_table(overrides):
    for name in _params(**overrides):
        assert any(re.fullmatch(pattern, name) for pattern in NAME_TABLE), name


def test_parameter_count_matches_the_table_by_hand():
    cfg = ModelConfig(**BASE, n_kv_heads=2, bias="all", norm="layernorm", qk_norm="rmsnorm", tie_embeddings=False)
    d, hd, ff = cfg.d_model, cfg.head_dim, cfg.d_ff
    attn = d * 4 * hd + 4 * hd + 2 * (d * 2 * hd + 2 * hd) + (4 * hd * d + d) + 2 * hd
    mlp = 3 * d * ff + 2 * ff + d
    per_layer = attn + mlp + 2 * 2 * d  # two LayerNorms with β
    expected = cfg.vocab_size * d * 2 + cfg.n_layers * per_layer + 2 * d
    assert sum(p.numel() for p in build_model(cfg).parameters()) == expected


def test_tied_head_shares_the_embedding():
    tied = build_model(ModelConfig(**BASE))
    untied = build_model(ModelConfig(**BASE, tie_embeddings=False))
    assert tied.lm_head is None
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(untied) - count(tied) == 50 * 32


@pytest.mark.parametrize("position, slots", [
    ("pre", {"norm_attn_in", "norm_mlp_in"}), ("post", {"norm_attn_post", "norm_mlp_post"}),
    ("sandwich", {"norm_attn_in", "norm_attn_out", "norm_mlp_in", "norm_mlp_out"}),
    ("reordered", {"norm_attn_out", "norm_mlp_out"}), ("parallel", {"norm_attn_in"}),
])
def test_norm_slots_and_final_norm_by_position(position, slots):
    names = _params(norm_position=position)
    layer_norms = {n.split(".")[2] for n in names if n.startswith("layers.0.norm_")}
    assert layer_norms == slots
    assert ("final_norm.weight" in names) == (position != "post")


def test_init_scales_output_projections_and_sets_norms_to_identity():
    torch.manual_seed(0)
    cfg = ModelConfig(**{**BASE, "d_model": 128, "n_layers": 8}, init_std=0.02)
    params = dict(build_model(cfg).named_parameters())
    assert abs(params["layers.0.attn.q_proj.weight"].std().item() - 0.02) < 2e-3
    assert abs(params["layers.0.attn.o_proj.weight"].std().item() - 0.02 / math.sqrt(16)) < 5e-4
    assert abs(params["layers.0.mlp.down_proj.weight"].std().item() - 0.02 / math.sqrt(16)) < 5e-4
    assert torch.equal(params["final_norm.weight"], torch.ones(128))
    offset = dict(build_model(cfg.replace(norm_unit_offset=True)).named_parameters())
    assert torch.equal(offset["layers.3.norm_mlp_in.weight"], torch.zeros(128))
    unscaled = dict(build_model(cfg.replace(scaled_init=False)).named_parameters())
    assert abs(unscaled["layers.0.attn.o_proj.weight"].std().item() - 0.02) < 2e-3


def test_attention_paths_report_the_kernel_per_layer():
    assert build_model(ModelConfig(**BASE, sliding_window=4)).attention_paths == ["sdpa", "sdpa"]
    assert build_model(ModelConfig(**BASE, attn_softcap=50.0)).attention_paths == ["eager", "eager"]
    assert build_model(ModelConfig(**BASE, attn_sinks=True)).attention_paths == ["eager", "eager"]


def test_scale_embeddings_multiplies_by_sqrt_d_in_hidden_dtype():
    torch.manual_seed(0)
    cfg = ModelConfig(**BASE, positions="nope", tie_embeddings=False)
    scaled, plain = build_model(cfg.replace(scale_embeddings=True)), build_model(cfg)
    plain.load_state_dict(scaled.state_dict())
    with torch.no_grad():
        scaled.tok_emb.weight.div_(math.sqrt(32))
    tokens = torch.randint(0, 50, (2, 6))
    torch.testing.assert_close(scaled(tokens), plain(tokens), rtol=1e-5, atol=1e-5)


def test_final_softcap_bounds_logits():
    model = build_model(ModelConfig(**BASE, final_softcap=0.5))
    with torch.no_grad():
        model.tok_emb.weight.mul_(100)
    assert model(torch.randint(0, 50, (2, 6))).abs().max() <= 0.5


def test_runs_under_bfloat16_autocast_and_in_bfloat16():
    tokens = torch.randint(0, 50, (2, 6))
    model = build_model(ModelConfig(**BASE, attn_softcap=20.0, n_experts=2, moe_top_k=1))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.isfinite(model(tokens).float()).all()
    assert model.to(torch.bfloat16)(tokens).dtype == torch.bfloat16


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [  # docs/model.md promises it with windows, soft-caps and sinks too
    {"sliding_window": 3, "global_every": 2},  # sdpa: is_causal and a window mask
    {"sliding_window": 3, "attn_softcap": 5.0, "attn_sinks": True, "final_softcap": 10.0},  # eager
    {"n_experts": 4, "moe_top_k": 2},  # MoE: the slotted dispatch, no host sync
    {"n_experts": 3, "moe_top_k": 1, "moe_capacity_factor": 1.0, "mlp": "gelu"},  # MoE with token dropping
    {"qk_norm_placement": "irope", "nope_every": 2, "rope_type": "llama3", "norm_position": "parallel_two_norms"},
], ids=["sdpa", "eager", "moe", "moe-capacity", "irope-llama3-neox"])
def test_compiles_without_graph_breaks(overrides):
    model = build_model(ModelConfig(**BASE, n_kv_heads=2, qk_norm="rmsnorm", **overrides))
    tokens = torch.randint(0, 50, (2, 6))
    explanation = torch._dynamo.explain(model)(tokens)
    assert explanation.graph_break_count == 0
    # The traced graph computes what eager does (for MoE: the slotted dispatch against the sorted one).
    compiled = torch.compile(model, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(tokens), model(tokens), rtol=1e-5, atol=1e-5)


def _pre_declaration_init(model, cfg):
    """The init walk as it was before components declared their tensors (the oracle of the seeded stream):
    module order, norms to identity, biases 0, everything else normal(init_std), then the scaled-init rule."""
    with torch.no_grad():
        for module in model.modules():
            if "Norm" in type(module).__name__:
                module.reset_parameters()
                continue
            for name, param in module.named_parameters(recurse=False):
                param.zero_() if name == "bias" else param.normal_(0.0, cfg.init_std)
        if cfg.scaled_init:
            for name, param in model.named_parameters():
                if name.endswith(("attn.o_proj.weight", "mlp.down_proj.weight", "mlp.experts.down_proj")):
                    param.mul_(1 / math.sqrt(2 * cfg.n_layers))


@pytest.mark.parametrize("overrides", [
    {}, {"tie_embeddings": False, "positions": "learned", "norm": "layernorm", "bias": "all", "mlp": "gelu"},
    {"n_experts": 3, "moe_top_k": 2, "attn_sinks": True, "qk_norm": "rmsnorm", "norm_position": "sandwich"},
    {"norm_unit_offset": True, "norm_position": "parallel_two_norms", "n_kv_heads": 2, "scaled_init": False},
], ids=["default", "gpt2-like", "moe-sinks-qknorm", "offset-neox"])
def test_a_seed_gives_the_weights_it_gave_before_declarations(overrides, monkeypatch):
    """Runs started before the refactor and after it draw the same initial weights for the same seed."""
    cfg = ModelConfig(**BASE, **overrides)
    torch.manual_seed(3)
    ours = build_model(cfg)
    monkeypatch.setattr(Transformer, "reset_parameters", lambda self: None)
    torch.manual_seed(3)
    legacy = build_model(cfg)  # the same construction draws, then the old walk
    _pre_declaration_init(legacy, cfg)
    for (name, mine), (_, theirs) in zip(ours.state_dict().items(), legacy.state_dict().items(), strict=True):
        assert torch.equal(mine, theirs), name


def test_sliding_window_layers_rotate_by_rope_local_theta():
    """Which layer takes which base, checked against models with a single base (same weights): with every layer
    local, rope_local_theta is the only base in use; with one global layer, changing rope_theta changes only
    what that layer computes, so the logits move."""
    local = dict(BASE, n_layers=3, sliding_window=3)
    tokens = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    two_bases = build_model(ModelConfig(**local, rope_theta=1e6, rope_local_theta=7.0)).eval()
    one_base = build_model(ModelConfig(**local, rope_theta=7.0)).eval()
    with torch.no_grad():
        for param in two_bases.parameters():
            param.normal_(0.0, 0.3)  # sharp attention, so a rotation's base shows in the logits
        one_base.load_state_dict(two_bases.state_dict())
        torch.testing.assert_close(two_bases(tokens), one_base(tokens))
        mixed = build_model(two_bases.cfg.replace(global_every=3)).eval()
        mixed.load_state_dict(two_bases.state_dict())
        other_global = build_model(mixed.cfg.replace(rope_theta=50.0)).eval()
        other_global.load_state_dict(two_bases.state_dict())
        assert [mixed.cfg.layer_uses_local_rope(i) for i in range(3)] == [True, True, False]
        assert (mixed(tokens) - other_global(tokens)).abs().max() > 1e-3
        assert (mixed(tokens) - two_bases(tokens)).abs().max() > 1e-3
