"""Each norm placement computes the formula of docs/model.md's placement table, written out by hand here."""

import pytest
import torch

from harness.config.base import literal_options
from harness.config.model import ModelConfig
from harness.model.transformer import build_block

# norm_position → the layer written with its own sublayers; n(slot) is the block's norm in that slot.
FORMULAS = {
    "pre": lambda x, attn, mlp, n: (h := x + attn(n("attn_in")(x))) + mlp(n("mlp_in")(h)),
    "post": lambda x, attn, mlp, n: n("mlp_post")((h := n("attn_post")(x + attn(x))) + mlp(h)),
    "sandwich": lambda x, attn, mlp, n: (
        (h := x + n("attn_out")(attn(n("attn_in")(x)))) + n("mlp_out")(mlp(n("mlp_in")(h)))
    ),
    "reordered": lambda x, attn, mlp, n: (h := x + n("attn_out")(attn(x))) + n("mlp_out")(mlp(h)),
    "parallel": lambda x, attn, mlp, n: x + attn(n("attn_in")(x)) + mlp(n("attn_in")(x)),
    "parallel_two_norms": lambda x, attn, mlp, n: x + attn(n("attn_in")(x)) + mlp(n("mlp_in")(x)),
}


def test_every_placement_has_a_formula():
    assert set(FORMULAS) == set(literal_options(ModelConfig, "norm_position"))


@pytest.mark.parametrize("position", sorted(FORMULAS))
def test_block_computes_its_placement_formula(position):
    cfg = ModelConfig(vocab_size=16, d_model=16, n_layers=1, n_heads=2, norm="layernorm", bias="all",
                      norm_position=position)
    torch.manual_seed(0)
    block = build_block(cfg, 0)
    with torch.no_grad():
        for param in block.parameters():
            param.normal_(0.0, 0.5)  # norm weights and biases away from identity, so a swapped slot shows
    x = torch.randn(2, 5, 16)
    rotation = None  # positions play no part in where the norms sit
    block.attn.uses_rope = False

    def attn(h):
        return block.attn(h, rotation)

    expected = FORMULAS[position](x, attn, block.mlp, lambda slot: getattr(block, f"norm_{slot}"))
    torch.testing.assert_close(block(x, rotation), expected)
