"""GPT-2: learned positions, LayerNorm with β, a dense GELU MLP, Conv1D weights and a fused c_attn."""

from __future__ import annotations

from typing import Any

from harness.hf.decoder import activation
from harness.hf.family import Family
from harness.hf.names import table_renamer
from harness.hf.source import HFConfig

DEFAULTS = {
    "vocab_size": 50257,
    "n_positions": 1024,
    "n_embd": 768,
    "n_layer": 12,
    "n_head": 12,
    "n_inner": None,
    "activation_function": "gelu_new",
    "layer_norm_epsilon": 1e-5,
    "initializer_range": 0.02,
    "scale_attn_weights": True,
    "scale_attn_by_inverse_layer_idx": False,
    "reorder_and_upcast_attn": False,
    "add_cross_attention": False,
    "tie_word_embeddings": True,
}


def gpt2_fields(hf: HFConfig) -> dict[str, Any]:
    """GPT-2 shares no config key names with the rotary decoders: its own reader, with its fixed switches."""
    if hf.get("add_cross_attention"):
        hf.refuse("add_cross_attention=True", "our decoder has no cross-attention")
    if hf.get("scale_attn_by_inverse_layer_idx"):
        hf.refuse("scale_attn_by_inverse_layer_idx=True", "a per-layer attention scale has no switch", False)
    if hf.get("reorder_and_upcast_attn"):
        hf.refuse("reorder_and_upcast_attn=True", "its float32 upcast of attention scores has no switch", False)
    d_model = hf.get("n_embd")
    dense_mlp, approximate = activation(hf)
    return {
        "vocab_size": hf.get("vocab_size"),
        "d_model": d_model,
        "n_layers": hf.get("n_layer"),
        "n_heads": hf.get("n_head"),
        "d_ff": hf.get("n_inner") or 4 * d_model,
        "mlp": dense_mlp,
        "gelu_approximate": approximate,
        "norm": "layernorm",
        "norm_eps": hf.get("layer_norm_epsilon"),
        "norm_position": "pre",
        "positions": "learned",
        "max_seq_len": hf.get("n_positions"),
        "bias": "all",
        "tie_embeddings": hf.get("tie_word_embeddings"),
        # scale_attn_weights=False drops the 1/sqrt(head_dim) factor entirely.
        "attn_scale": None if hf.get("scale_attn_weights") else 1.0,
        "init_std": hf.get("initializer_range"),
        "scaled_init": True,
    }


def transpose_conv1d(name: str, tensor: Any, cfg: Any) -> Any:
    """GPT-2's projection weights are Conv1D, stored (in, out): the transpose of nn.Linear. Its embeddings,
    norms and LM head are not."""
    is_conv1d = name.startswith("layers.") and name.endswith(".weight") and ".norm_" not in name
    return tensor.t() if is_conv1d else tensor


FAMILY = Family(
    model_type="gpt2",
    architectures=("GPT2LMHeadModel",),
    defaults=DEFAULTS,
    fields=gpt2_fields,
    activation_key="activation_function",
    dense_mlp=True,
    rename=table_renamer(
        top={"transformer.wte.weight": "tok_emb.weight", "transformer.wpe.weight": "pos_emb.weight",
             "transformer.ln_f.weight": "final_norm.weight", "transformer.ln_f.bias": "final_norm.bias",
             "lm_head.weight": "lm_head.weight"},
        layer_pattern=r"transformer\.h\.(\d+)\.(.+)",
        renames={"ln_1": "norm_attn_in", "attn.c_attn": "attn.qkv_proj", "ln_2": "norm_mlp_in",
                 "attn.c_proj": "attn.o_proj", "mlp.c_fc": "mlp.up_proj", "mlp.c_proj": "mlp.down_proj"},
    ),
    adapt_weight=transpose_conv1d,
)
