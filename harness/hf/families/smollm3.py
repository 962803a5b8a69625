"""SmolLM3: Llama with NoPE on every k-th layer (no_rope_layers / no_rope_layer_interval)."""

from __future__ import annotations

from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.rope import nope_layers, rope_layer_flags
from harness.hf.source import HFConfig
from harness.hf.windows import Windows, layer_types_or


def windowed_nope_layers(hf: HFConfig) -> Windows:
    """With use_sliding_window, SmolLM3 windows its NoPE layers: the complement of our global_every pattern,
    so only configs whose layer_types say otherwise import."""
    window = hf.get("sliding_window") if hf.get("use_sliding_window") else None
    local = [window is not None and not rope for rope in rope_layer_flags(hf)]
    return layer_types_or(hf, local, window)


FAMILY = Family(
    model_type="smollm3",
    architectures=("SmolLM3ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 11008,
              "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
              "max_position_embeddings": 32768, "tie_word_embeddings": True, "rope_theta": 2000000.0,
              "use_sliding_window": False, "sliding_window": None, "no_rope_layers": None,
              "no_rope_layer_interval": 4, "layer_types": None},
    quirks=(nope_layers,),
    reads_mlp_bias=True,
    windows=windowed_nope_layers,
)
