"""`from_hf`: our model with a transformers model's weights gives the same logits (float32, ≤ 1e-4), per family.

Real transformers models built offline from tiny configs, with every parameter (norm scales included)
re-drawn so that a misplaced norm, a missing (1 + w) or a wrong scale cannot hide behind an identity init.
"""

import math

import pytest
import torch
import transformers  # a test dependency (the [test] extra): parity must run, never skip

from errors import ConfigError
from harness.config.model import LLAMA3_ROPE_DEFAULTS
from harness.hf import from_hf
from harness.model import build_model

VOCAB, SEQ, TOLERANCE = 96, 12, 1e-4
TOKEN_IDS = {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}  # inside the tiny vocab
HEADS = {"mha": (4, 4), "gqa": (4, 2), "mqa": (4, 1)}  # (query heads, KV heads)
LLAMA3_ROPE = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 64}


def llama_like(heads: str, **extra):
    """Tiny Llama-style config kwargs with `heads` one of HEADS."""
    n_heads, n_kv_heads = HEADS[heads]
    return {"vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 40, "num_hidden_layers": 3,
            "num_attention_heads": n_heads, "num_key_value_heads": n_kv_heads, **extra}


def llama4(nope_interval, **extra):
    """Tiny dense Llama 4 text config kwargs (no MoE layers, no chunked attention, no temperature tuning)."""
    return llama_like("gqa", num_hidden_layers=4, head_dim=8, intermediate_size_mlp=48, moe_layers=[],
                      attention_chunk_size=None, attn_temperature_tuning=False,
                      no_rope_layer_interval=nope_interval, **extra)


def neox(rope_theta=10000.0, **extra):
    """Tiny GPT-NeoX config kwargs with every channel rotated."""
    rope = {"rope_type": "default", "rope_theta": rope_theta, "partial_rotary_factor": 1.0}
    return {"vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 40, "num_hidden_layers": 3,
            "num_attention_heads": 4, "rope_parameters": rope, **extra}


# family → [(case id, config kwargs)]: every family in MHA, GQA and MQA, tied and untied where it has the flag.
CASES = {
    "gpt2": [
        ("tied", {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 32}),
        ("untied-relu-unscaled", {"n_embd": 24, "n_layer": 3, "n_head": 2, "n_inner": 40, "n_positions": 16,
                                  "tie_word_embeddings": False, "activation_function": "relu",
                                  "scale_attn_weights": False}),
        ("exact-gelu", {"n_embd": 16, "n_layer": 1, "n_head": 4, "n_positions": 16, "activation_function": "gelu"}),
    ],
    "llama": [
        ("mha-tied", llama_like("mha", tie_word_embeddings=True, rope_theta=500000.0)),
        ("gqa-biases", llama_like("gqa", attention_bias=True, mlp_bias=True)),
        ("mqa-head_dim", llama_like("mqa", head_dim=12, hidden_act="gelu_pytorch_tanh")),
        # Llama 3.1's RoPE rescaling, with a short original context so all three frequency bands occur.
        ("gqa-llama3-rope", llama_like("gqa", head_dim=16, rope_parameters=LLAMA3_ROPE)),
        ("mha-llama3-rope-tied", llama_like("mha", tie_word_embeddings=True, rope_parameters={
            **LLAMA3_ROPE, "factor": 32.0, "low_freq_factor": 2.0, "high_freq_factor": 8.0})),
    ],
    "mistral": [
        ("gqa-window", llama_like("gqa", sliding_window=5)),
        ("mqa-tied-no-window", llama_like("mqa", sliding_window=None, tie_word_embeddings=True)),
    ],
    "qwen2": [
        ("mha", llama_like("mha")),
        ("gqa-tied", llama_like("gqa", tie_word_embeddings=True)),
        ("mqa-all-sliding", llama_like("mqa", use_sliding_window=True, sliding_window=4, max_window_layers=0)),
    ],
    "qwen3": [
        ("mha-head_dim", llama_like("mha", head_dim=16)),
        ("gqa-tied", llama_like("gqa", head_dim=8, tie_word_embeddings=True)),
        ("mqa", llama_like("mqa", head_dim=8)),
    ],
    "gemma": [
        ("mha-tied", llama_like("mha", head_dim=8)),
        ("mqa-untied", llama_like("mqa", head_dim=16, tie_word_embeddings=False)),
        ("gqa-legacy-gelu", llama_like("gqa", head_dim=12, hidden_act="gelu")),  # rewritten to tanh GELU
    ],
    "gemma2": [
        ("gqa-caps-window", llama_like("gqa", head_dim=8, sliding_window=5, query_pre_attn_scalar=12,
                                       attn_logit_softcapping=2.0, final_logit_softcapping=4.0)),
        ("mqa-untied", llama_like("mqa", head_dim=16, num_hidden_layers=4, sliding_window=3,
                                  query_pre_attn_scalar=16, tie_word_embeddings=False,
                                  attn_logit_softcapping=3.0, final_logit_softcapping=5.0)),
        ("mha-no-caps", llama_like("mha", head_dim=8, sliding_window=6, query_pre_attn_scalar=8,
                                   attn_logit_softcapping=None, final_logit_softcapping=None)),
    ],
    # Gemma 3: 5 local : 1 global layers by default, each kind with its own RoPE base, at SEQ = 12 > the windows.
    "gemma3_text": [
        ("gqa-5-local-1-global", llama_like("gqa", head_dim=8, num_hidden_layers=6, sliding_window=4,
                                            query_pre_attn_scalar=12)),
        ("mqa-untied-legacy-keys-final-cap", llama_like(
            "mqa", head_dim=16, num_hidden_layers=4, sliding_window=3, sliding_window_pattern=2, rope_theta=50.0,
            rope_local_base_freq=5.0, final_logit_softcapping=5.0, tie_word_embeddings=False)),
        ("mha-layer-types-rope-parameters", llama_like(
            "mha", head_dim=8, sliding_window=5, layer_types=["sliding_attention", "sliding_attention",
                                                              "full_attention"],
            rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 20.0},
                             "full_attention": {"rope_type": "default", "rope_theta": 400.0}})),
    ],
    "olmo2": [
        ("mha", llama_like("mha")),
        ("gqa-tied", llama_like("gqa", tie_word_embeddings=True)),
        ("mqa", llama_like("mqa", rms_norm_eps=1e-6)),
    ],
    "phi3": [
        ("gqa-window", llama_like("gqa", sliding_window=5)),
        ("mqa-tied", llama_like("mqa", tie_word_embeddings=True)),
    ],
    "starcoder2": [
        ("gqa-tied-window", llama_like("gqa", sliding_window=4)),
        ("mha-untied-exact-gelu", llama_like("mha", tie_word_embeddings=False, hidden_act="gelu")),
        ("mqa-tied", llama_like("mqa", num_hidden_layers=2)),
    ],
    "smollm3": [
        ("gqa-nope-every-2", llama_like("gqa", num_hidden_layers=4, no_rope_layer_interval=2)),
        ("mqa-untied-biases-nope-every-3", llama_like("mqa", tie_word_embeddings=False, attention_bias=True,
                                                      mlp_bias=True, no_rope_layer_interval=3)),
    ],
    # GPT-NeoX with full rotary (its default rotates a quarter of each head, which we refuse): the parallel
    # block with two norms (use_parallel_residual), and the sequential one.
    "gpt_neox": [
        ("mha-parallel", neox()),
        ("mha-parallel-tied-2-heads", neox(num_attention_heads=2, tie_word_embeddings=True, rope_theta=500.0)),
        ("mha-sequential-gelu-tanh", neox(use_parallel_residual=False, hidden_act="gelu_new", hidden_size=24)),
    ],
    # Llama 4's text decoder with dense layers: iRoPE (NoPE every k-th layer, weightless QK-norm after RoPE on
    # the RoPE layers), its interleaved RoPE pairs, Llama 3 RoPE scaling.
    "llama4_text": [
        ("gqa-nope-every-2", llama4(2)),
        ("mqa-nope-every-3-llama3-rope", llama4(3, num_key_value_heads=1, rope_parameters=LLAMA3_ROPE)),
        ("mha-nope-every-4-no-qk-norm-tied", llama4(4, num_key_value_heads=4, use_qk_norm=False,
                                                    tie_word_embeddings=True)),
    ],
    # Mixtures of experts: several expert counts and k (k = 1 included: Mixtral renormalizes even then, the
    # others only with norm_topk_prob), windows, tied and untied.
    "mixtral": [
        ("gqa-4x2", llama_like("gqa", num_local_experts=4, num_experts_per_tok=2)),
        ("mqa-3x1-window", llama_like("mqa", num_local_experts=3, num_experts_per_tok=1, sliding_window=5)),
        ("mha-5x3-tied", llama_like("mha", num_local_experts=5, num_experts_per_tok=3, tie_word_embeddings=True,
                                    intermediate_size=24)),
    ],
    "qwen3_moe": [
        ("gqa-4x2", llama_like("gqa", head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24)),
        ("mha-6x2-normalized", llama_like("mha", num_experts=6, num_experts_per_tok=2, moe_intermediate_size=16,
                                          norm_topk_prob=True)),
        ("mqa-3x1-window", llama_like("mqa", head_dim=16, num_experts=3, num_experts_per_tok=1,
                                      moe_intermediate_size=20, use_sliding_window=True, sliding_window=4)),
    ],
    "olmoe": [
        ("mha-4x2", llama_like("mha", num_experts=4, num_experts_per_tok=2)),
        ("gqa-6x3-normalized", llama_like("gqa", num_experts=6, num_experts_per_tok=3, norm_topk_prob=True,
                                          intermediate_size=24)),
        ("mqa-3x1-tied", llama_like("mqa", num_experts=3, num_experts_per_tok=1, tie_word_embeddings=True)),
    ],
}
CONFIG_CLASSES = {
    "gpt2": "GPT2Config", "llama": "LlamaConfig", "mistral": "MistralConfig", "qwen2": "Qwen2Config",
    "qwen3": "Qwen3Config", "gemma": "GemmaConfig", "gemma2": "Gemma2Config", "olmo2": "Olmo2Config",
    "phi3": "Phi3Config", "starcoder2": "Starcoder2Config", "smollm3": "SmolLM3Config",
    "mixtral": "MixtralConfig", "qwen3_moe": "Qwen3MoeConfig", "olmoe": "OlmoeConfig", "gpt_neox": "GPTNeoXConfig",
    "llama4_text": "Llama4TextConfig", "gemma3_text": "Gemma3TextConfig",
}


def hf_model(family: str, kwargs: dict, seed: int):
    """A transformers causal LM with eager attention and every parameter drawn at a scale that keeps
    activations O(1), so soft-caps and windows matter."""
    config = getattr(transformers, CONFIG_CLASSES[family])(**kwargs, **TOKEN_IDS)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.dim() == 1 and ("norm" in name or ".ln_" in name):
                param.uniform_(0.5, 1.5)
            elif param.dim() == 1:
                param.normal_(0.0, 0.2)
            elif param.dim() == 3:  # stacked experts (E, out, in): scale by the fan-in
                param.normal_(0.0, 1.5 / math.sqrt(param.shape[-1]))
            else:
                param.normal_(0.0, 1.5 / math.sqrt(min(param.shape)))
    return model


# Families added with round two also run every case under two more seeds (weights and inputs re-drawn): the
# MoE ones route differently each time.
MORE_SEEDS = {"mixtral": (101, 202), "qwen3_moe": (101, 202), "olmoe": (101, 202), "gpt_neox": (101,),
              "llama4_text": (101,), "gemma3_text": (101,)}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("family", "kwargs", "seed"),
    [
        pytest.param(family, kwargs, seed, id=f"{family}-{case}" + (f"-seed{seed}" if seed > index else ""))
        for family, cases in CASES.items()
        for index, (case, kwargs) in enumerate(cases)
        for seed in (index, *MORE_SEEDS.get(family, ()))
    ],
)
def test_logits_match_transformers(family, kwargs, seed):
    reference = hf_model(family, kwargs, seed)
    ours = from_hf(reference).eval()
    input_ids = torch.randint(0, VOCAB, (2, SEQ), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        expected = reference(input_ids).logits  # (B, T, V)
        actual = ours(input_ids)
    assert actual.shape == expected.shape and actual.dtype == torch.float32
    assert (actual - expected).abs().max().item() <= TOLERANCE
    final_cap = reference.config.to_dict().get("final_logit_softcapping")
    if final_cap:  # the cap must be active (logits near it) without saturating into a trivial match
        assert 0.3 * final_cap < expected.abs().max().item() < 0.999 * final_cap
    assert expected.std().item() > 0.1  # a degenerate network would match trivially


def test_the_gemma2_parity_case_depends_on_its_window():
    """The Gemma 2 parity case only proves windowing if dropping the window changes the logits."""
    ours = from_hf(hf_model("gemma2", CASES["gemma2"][0][1], 0)).eval()
    unwindowed = build_model(ours.cfg.replace(sliding_window=None, global_every=0)).eval()
    unwindowed.load_state_dict(ours.state_dict())
    input_ids = torch.randint(0, VOCAB, (1, SEQ), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert (unwindowed(input_ids) - ours(input_ids)).abs().max().item() > 1e-3


def test_keeps_the_hugging_face_dtype():
    reference = hf_model("llama", CASES["llama"][0][1], 0).to(torch.bfloat16)
    assert {p.dtype for p in from_hf(reference).parameters()} == {torch.bfloat16}


def test_refuses_models_it_cannot_reproduce():
    scaled = transformers.LlamaConfig(**llama_like("gqa"), rope_parameters={"rope_type": "yarn", "factor": 2.0,
                                                                                  "rope_theta": 10000.0}, **TOKEN_IDS)
    with pytest.raises(ConfigError, match="rope_scaling type 'yarn'"):
        from_hf(transformers.LlamaForCausalLM(scaled))
    layer_scaled = transformers.GPT2Config(n_embd=16, n_layer=1, n_head=2, vocab_size=VOCAB,
                                           scale_attn_by_inverse_layer_idx=True, **TOKEN_IDS)
    with pytest.raises(ConfigError, match="scale_attn_by_inverse_layer_idx"):
        from_hf(transformers.GPT2LMHeadModel(layer_scaled))
    jitter = transformers.MixtralConfig(**llama_like("gqa"), num_local_experts=4, router_jitter_noise=0.1,
                                        **TOKEN_IDS)
    with pytest.raises(ConfigError, match="router_jitter_noise"):
        from_hf(transformers.MixtralForCausalLM(jitter))
    dense_layers = transformers.Qwen3MoeConfig(**llama_like("gqa"), num_experts=4, mlp_only_layers=[1], **TOKEN_IDS)
    with pytest.raises(ConfigError, match="mlp_only_layers"):
        from_hf(transformers.Qwen3MoeForCausalLM(dense_layers))
    with pytest.raises(ConfigError, match="LM head"):
        from_hf(transformers.LlamaModel(transformers.LlamaConfig(**llama_like("mha"), **TOKEN_IDS)))


def test_the_llama3_rope_case_depends_on_its_scaling():
    """The Llama 3 RoPE parity case only proves the rescaling if plain RoPE gives other logits."""
    ours = from_hf(hf_model("llama", CASES["llama"][3][1], 3)).eval()
    assert ours.cfg.rope_type == "llama3"
    unscaled = build_model(ours.cfg.replace(rope_type="default", **LLAMA3_ROPE_DEFAULTS)).eval()
    unscaled.load_state_dict(ours.state_dict())
    input_ids = torch.randint(0, VOCAB, (1, SEQ), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert (unscaled(input_ids) - ours(input_ids)).abs().max().item() > 1e-3


def test_gpt_neox_maps_its_residual_to_our_blocks_and_refuses_partial_rotary():
    parallel = from_hf(hf_model("gpt_neox", CASES["gpt_neox"][0][1], 0)).eval()
    assert parallel.cfg.norm_position == "parallel_two_norms" and parallel.cfg.bias == "all"
    assert from_hf(hf_model("gpt_neox", CASES["gpt_neox"][2][1], 2)).cfg.norm_position == "pre"
    # The case proves the second norm: sharing the attention's input norm (today's one-norm parallel) differs.
    shared = build_model(parallel.cfg.replace(norm_position="parallel")).eval()
    shared.load_state_dict({k: v for k, v in parallel.state_dict().items() if ".norm_mlp_in." not in k})
    input_ids = torch.randint(0, VOCAB, (1, SEQ), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert (shared(input_ids) - parallel(input_ids)).abs().max().item() > 1e-3
    quarter = transformers.GPTNeoXConfig(**{**neox(), "rope_parameters": None}, **TOKEN_IDS)  # default rotary_pct
    with pytest.raises(ConfigError, match="partial_rotary_factor=0.25"):
        from_hf(transformers.GPTNeoXForCausalLM(quarter))
    unbiased = transformers.GPTNeoXConfig(**neox(), attention_bias=False, **TOKEN_IDS)
    with pytest.raises(ConfigError, match="attention_bias=False"):
        from_hf(transformers.GPTNeoXForCausalLM(unbiased))


def test_llama4_maps_to_irope_and_the_case_depends_on_it():
    ours = from_hf(hf_model("llama4_text", CASES["llama4_text"][0][1], 0)).eval()
    cfg = ours.cfg
    assert (cfg.qk_norm, cfg.qk_norm_placement, cfg.nope_every) == ("rmsnorm_noweight", "irope", 2)
    # Normalizing every layer (NoPE layers too), as a pre-RoPE QK-norm does, gives other logits.
    everywhere = build_model(cfg.replace(qk_norm_placement="pre_rope")).eval()
    everywhere.load_state_dict(ours.state_dict())
    input_ids = torch.randint(0, VOCAB, (1, SEQ), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert (everywhere(input_ids) - ours(input_ids)).abs().max().item() > 1e-3
    for refused, match in [({"moe_layers": None}, "moe_layers"), ({"attention_chunk_size": 8}, "attention_chunk_size"),
                           ({"attn_temperature_tuning": True}, "attn_temperature_tuning")]:
        config = transformers.Llama4TextConfig(**{**llama4(2), **refused}, **TOKEN_IDS)
        with pytest.raises(ConfigError, match=match):
            from_hf(transformers.Llama4ForCausalLM(config))


@pytest.mark.slow
def test_the_gemma3_cases_depend_on_the_local_rope_base_and_the_window():
    """Gemma 3's parity proves its layer kinds only if each one's RoPE base and the window change the logits."""
    ours = from_hf(hf_model("gemma3_text", CASES["gemma3_text"][0][1], 0)).eval()
    cfg = ours.cfg
    assert [cfg.layer_window(i) for i in range(6)] == [4] * 5 + [None] and (cfg.rope_local_theta, cfg.rope_theta) == (
        1e4, 1e6)
    input_ids = torch.randint(0, VOCAB, (1, SEQ), generator=torch.Generator().manual_seed(0))
    for changed in ({"rope_local_theta": None}, {"rope_theta": 1e4}, {"sliding_window": SEQ}):
        other = build_model(cfg.replace(**changed)).eval()
        other.load_state_dict(ours.state_dict())
        with torch.no_grad():
            assert (other(input_ids) - ours(input_ids)).abs().max().item() > 1e-3, changed


@pytest.mark.parametrize(
    ("refused", "match"),
    [
        # Gemma 3 4B-27B scale their global layers' RoPE linearly (a legacy rope_scaling joins full_attention's).
        ({"rope_scaling": {"rope_type": "linear", "factor": 8.0}},
         "rope_parameters\\['full_attention'\\] of rope_type 'linear'"),
        ({"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
                              "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
         "rope_parameters\\['full_attention'\\] of rope_type 'linear'"),
        ({"attn_logit_softcapping": 50.0}, "attn_logit_softcapping=50.0 .*ignores it"),
        ({"use_bidirectional_attention": True}, "use_bidirectional_attention"),
    ],
)
def test_gemma3_refuses_what_it_cannot_reproduce(refused, match):
    config = transformers.Gemma3TextConfig(**{**CASES["gemma3_text"][0][1], **refused}, **TOKEN_IDS)
    with pytest.raises(ConfigError, match=match):
        from_hf(transformers.Gemma3ForCausalLM(config))
