"""The analytic calculator against hand counts: the seed's figures, small configs worked out on paper,
the FLOPs and KV-cache formulas, and the iso-parameter solver. (Equality with the built model: the registry
checks, tests/harness/model/test_registry.py.)"""

import pytest

from errors import ConfigError
from harness import calc
from harness.config import ModelConfig
from harness.presets import gemma2, llama3, stack_100m

SEED_BLOCK = ModelConfig(d_model=512, n_layers=1, n_heads=8, n_kv_heads=2, d_ff=1365, mlp="swiglu", qk_norm="rmsnorm")
LLAMA_3_2_3B = ModelConfig(
    vocab_size=128256, d_model=3072, n_layers=28, n_heads=24, n_kv_heads=8, head_dim=128, d_ff=8192,
    mlp="swiglu", norm="rmsnorm", norm_position="pre", rope_theta=500000.0, max_seq_len=131072,
    bias="none", tie_embeddings=True,
)
# d=4, one layer, 2 heads of 2, vocabulary 10: small enough to count every tensor by hand.
SMALL = dict(vocab_size=10, d_model=4, n_layers=1, n_heads=2, max_seq_len=5)


def test_seed_block_has_the_seeds_parameter_count():
    assert calc.layer_params(SEED_BLOCK, 0) == 2_753_152


def test_llama_3_2_3b_has_the_seeds_parameter_count():
    assert calc.params(LLAMA_3_2_3B) == 3_212_749_824
    assert calc.per_layer_params(LLAMA_3_2_3B) == [100_669_440] * 28


def test_gpt2_style_block_counted_by_hand():
    cfg = ModelConfig(**SMALL, mlp="gelu", d_ff=16, norm="layernorm", positions="learned", bias="all")
    attention = 4 * (4 * 4 + 4)  # q, k, v, o with biases
    mlp = (4 * 16 + 16) + (16 * 4 + 4)
    norms = 2 * (4 + 4)  # two LayerNorms with β
    final_norm = 4 + 4
    assert calc.per_layer_params(cfg) == [attention + mlp + norms]
    assert calc.non_embedding_params(cfg) == attention + mlp + norms + final_norm
    assert calc.params(cfg) == 10 * 4 + 5 * 4 + attention + mlp + norms + final_norm


@pytest.mark.parametrize(
    "switches, expected_layer, expected_rest",
    [
        # q/k/v biases only; o_proj and MLP stay bias-free; RMSNorm has no β whatever the bias switch.
        (dict(bias="qkv"), 4 * 16 + 3 * 4 + 3 * 4 * 8 + 2 * 4, 40 + 4),
        # post-norm: the block's two norms sit after the residual adds, and there is no final norm.
        (dict(norm_position="post"), 4 * 16 + 3 * 4 * 8 + 2 * 4, 40),
        (dict(norm_position="sandwich"), 4 * 16 + 3 * 4 * 8 + 4 * 4, 40 + 4),
        (dict(norm_position="parallel"), 4 * 16 + 3 * 4 * 8 + 1 * 4, 40 + 4),
        (dict(norm_position="parallel_two_norms"), 4 * 16 + 3 * 4 * 8 + 2 * 4, 40 + 4),
        # per-head QK-norm: one γ of head_dim for q and one for k; full scope: over all heads.
        (dict(qk_norm="rmsnorm"), 4 * 16 + 3 * 4 * 8 + 2 * 4 + 2 * 2, 40 + 4),
        (dict(qk_norm="layernorm", qk_norm_scope="full", n_kv_heads=1),
         4 * 4 + 2 * 4 * 2 + 4 * 4 + 3 * 4 * 8 + 2 * 4 + 4 + 2, 40 + 4),
        (dict(attn_sinks=True), 4 * 16 + 2 + 3 * 4 * 8 + 2 * 4, 40 + 4),
        # MoE: a bias-free router (E·d) and E bias-free experts.
        (dict(n_experts=3, moe_top_k=2), 4 * 16 + 3 * 4 + 3 * (3 * 4 * 8) + 2 * 4, 40 + 4),
        (dict(tie_embeddings=False), 4 * 16 + 3 * 4 * 8 + 2 * 4, 2 * 40 + 4),
    ],
)
def test_switches_counted_by_hand(switches, expected_layer, expected_rest):
    cfg = ModelConfig(**{**SMALL, "mlp": "swiglu", "d_ff": 8, **switches})
    assert calc.per_layer_params(cfg) == [expected_layer]
    assert calc.params(cfg) == expected_layer + expected_rest


def test_non_embedding_excludes_token_position_and_untied_head_tables():
    tied = ModelConfig(**SMALL, positions="learned")
    untied = tied.replace(tie_embeddings=False)
    assert calc.params(tied) - calc.non_embedding_params(tied) == 10 * 4 + 5 * 4
    assert calc.params(untied) - calc.non_embedding_params(untied) == 2 * 10 * 4 + 5 * 4
    assert calc.non_embedding_params(tied) == calc.non_embedding_params(untied)


def test_flops_per_token_counted_by_hand():
    cfg = ModelConfig(**{**SMALL, "mlp": "swiglu", "d_ff": 8})
    matmul = (2 * 4 * 4 + 2 * 4 * 4) + 3 * 4 * 8 + 10 * 4  # attention projections, SwiGLU, logits
    assert calc.matmul_params_per_token(cfg) == matmul
    assert calc.flops_per_token(cfg, seq_len=16) == 6 * matmul + 12 * 2 * 2 * 16


def test_flops_default_context_is_max_seq_len():
    cfg = ModelConfig(**SMALL)
    assert calc.flops_per_token(cfg) == calc.flops_per_token(cfg, seq_len=cfg.max_seq_len)


def test_sliding_window_caps_the_attention_context_of_local_layers_only():
    cfg = ModelConfig(**{**SMALL, "n_layers": 2}, sliding_window=4, global_every=2)
    assert calc.attention_flops_per_token(cfg, 16) == 12 * 2 * 2 * (4 + 16)
    assert calc.attention_flops_per_token(cfg, 3) == 12 * 2 * 2 * (3 + 3)


def test_kernel_flops_charge_windowed_layers_the_full_context():
    cfg = ModelConfig(**{**SMALL, "n_layers": 2}, sliding_window=4, global_every=2)
    assert calc.attention_flops_per_token(cfg, 16, windowed=False) == 12 * 2 * 2 * (16 + 16)
    matmul = 6 * calc.matmul_params_per_token(cfg)
    assert calc.flops_per_token(cfg, 16) == matmul + 12 * 2 * 2 * (4 + 16)  # the ideal count, stored with runs
    assert calc.kernel_flops_per_token(cfg, 16) == matmul + 12 * 2 * 2 * (16 + 16)  # what SDPA/eager compute
    unwindowed = cfg.replace(sliding_window=None, global_every=0)
    assert calc.kernel_flops_per_token(unwindowed, 16) == calc.flops_per_token(unwindowed, 16)


def test_kv_cache_bytes_keep_only_the_window_on_local_layers():
    cfg = ModelConfig(**{**SMALL, "n_layers": 2}, sliding_window=4, global_every=2)
    per_position = 2 * 2 * 2 * 2  # K and V, 2 KV heads of 2, bf16
    assert calc.kv_cache_bytes(cfg, 16) == per_position * (3 + 16)  # local keeps window - 1, global all
    assert calc.kv_cache_bytes(cfg, 2) == per_position * (2 + 2)
    assert (calc.kv_cache_bytes(cfg.replace(sliding_window=None, global_every=0), 16)
            == 16 * calc.kv_cache_bytes_per_token(cfg))


def test_irope_layers_without_rope_have_no_qk_norm():
    cfg = ModelConfig(**{**SMALL, "n_layers": 2, "mlp": "swiglu", "d_ff": 8}, qk_norm="rmsnorm", nope_every=2,
                      qk_norm_placement="irope")
    rope_layer, nope_layer = calc.per_layer_params(cfg)
    assert rope_layer - nope_layer == 2 * 2  # per-head γ of q and k on the RoPE layer only
    assert calc.per_layer_params(cfg.replace(qk_norm_placement="pre_rope")) == [rope_layer, rope_layer]


def test_moe_flops_charge_the_router_and_top_k_experts_only():
    dense = ModelConfig(**SMALL, mlp="relu", d_ff=8)
    moe = dense.replace(n_experts=4, moe_top_k=2)
    assert calc.matmul_params_per_token(moe) - calc.matmul_params_per_token(dense) == 4 * 4 + (2 - 1) * 2 * 4 * 8


def test_kv_cache_bytes_per_token():
    assert calc.kv_cache_bytes_per_token(stack_100m()) == 2 * 30 * 2 * 64 * 2
    assert calc.kv_cache_bytes_per_token(stack_100m(), dtype="fp32") == 2 * 30 * 2 * 64 * 4
    with pytest.raises(ConfigError, match="kv_dtype='bf61'.*'bf16'"):
        calc.kv_cache_bytes_per_token(stack_100m(), dtype="bf61")


def test_summary_has_the_documented_keys():
    summary = calc.summary(stack_100m(), seq_len=1024)
    assert {"params", "non_embedding_params", "per_layer_params", "flops_per_token", "kernel_flops_per_token",
            "kv_cache_bytes_per_token", "kv_cache_bytes"} <= set(summary)
    assert summary["params"] == 99_372_288 and summary["per_layer_params"] == [2_753_152] * 30


def test_iso_param_d_ff_lands_on_the_closest_hidden_size():
    base = llama3()
    solved, residual = calc.iso_param(base, 10_000_000, solve="d_ff")
    assert residual == calc.params(solved) - 10_000_000
    assert solved == base.replace(d_ff=solved.d_ff)
    for neighbour in (solved.d_ff - 1, solved.d_ff + 1):
        assert abs(residual) <= abs(calc.params(base.replace(d_ff=neighbour)) - 10_000_000)


def test_iso_param_d_ff_respects_multiple_of():
    solved, _ = calc.iso_param(llama3(), 10_000_000, solve="d_ff", multiple_of=64)
    assert solved.d_ff % 64 == 0


def test_iso_param_d_model_keeps_heads_whole_and_mlp_ratio():
    base = llama3()  # head_dim = d_model / n_heads = 32, d_ff / d_model = 2.75
    solved, residual = calc.iso_param(base, 20_000_000, solve="d_model")
    assert residual == calc.params(solved) - 20_000_000
    assert solved.head_dim * solved.n_heads == solved.d_model and solved.head_dim % 2 == 0
    assert solved.d_ff == round(704 * solved.d_model / 256)
    step = 2 * base.n_heads  # keeps head_dim an even integer
    for width in (solved.d_model - step, solved.d_model + step):
        neighbour = base.replace(d_model=width, head_dim=width // 8, d_ff=round(704 * width / 256))
        assert abs(residual) <= abs(calc.params(neighbour) - 20_000_000)


def test_iso_param_d_model_keeps_an_explicit_head_dim():
    base = gemma2()  # head_dim 64 set explicitly, n_heads·head_dim ≠ d_model
    solved, _ = calc.iso_param(base, 20_000_000, solve="d_model")
    assert solved.head_dim == 64 and solved.d_model != base.d_model


def test_iso_param_below_the_smallest_model_returns_the_smallest_with_positive_residual():
    solved, residual = calc.iso_param(llama3(), 1, solve="d_ff")
    assert solved.d_ff == 1 and residual > 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(solve="n_layers"), "solve='n_layers'.*'d_ff', 'd_model'"),
    (dict(target_params=0), "target_params=0"),
    (dict(multiple_of=0), "multiple_of=0"),
])
def test_iso_param_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        calc.iso_param(llama3(), **{"target_params": 10_000_000, **kwargs})


def test_flops_reject_a_non_positive_seq_len():
    with pytest.raises(ConfigError, match="seq_len=0"):
        calc.flops_per_token(llama3(), seq_len=0)
