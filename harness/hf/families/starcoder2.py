"""StarCoder2: LayerNorm with β, a dense tanh-GELU MLP named like GPT-2's (c_fc, c_proj), biases everywhere."""

from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.source import HFConfig
from harness.hf.windows import every_layer


def use_bias(hf: HFConfig) -> str:
    """Every linear layer and LayerNorm has a bias; use_bias=False would leave the LayerNorms' β alone."""
    if not hf.get("use_bias"):
        hf.refuse("use_bias=False", "StarCoder2's LayerNorms keep their β, which ours only have with bias='all'")
    return "all"


FAMILY = Family(
    model_type="starcoder2",
    architectures=("Starcoder2ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 49152, "hidden_size": 3072, "intermediate_size": 12288,
              "num_hidden_layers": 30, "num_attention_heads": 24, "num_key_value_heads": 2,
              "hidden_act": "gelu_pytorch_tanh", "max_position_embeddings": 4096, "initializer_range": 0.018042,
              "norm_epsilon": 1e-5, "sliding_window": None, "use_bias": True, "tie_word_embeddings": True},
    switches={"norm": "layernorm"},
    dense_mlp=True,
    norm_eps_key="norm_epsilon",
    bias=use_bias,
    windows=every_layer,
    # Its dense MLP is named like GPT-2's, in nn.Linear layout.
    module_renames={"mlp.c_fc": "mlp.up_proj", "mlp.c_proj": "mlp.down_proj"},
)
