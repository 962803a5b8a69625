"""The one place that maps every named switch value of `ModelConfig` to what implements it, and that says how
every tensor of the model starts. Torch-free.

Each entry names its torch module lazily ("package.module:Name", imported only when a model is built) next
to its torch-free parameter declaration (`harness.model.spec`) and its documented init (`Part.init`,
docs/model.md's rules as data), so `harness.calc` and config validation read the same tables without
importing torch. A value is valid for `ModelConfig` iff it is registered here; the registry tests iterate
these tables and compare every declaration with its entry's documented init, so a new entry is tested
without editing a test. The parts every model has whichever switch values it uses (attention, embeddings,
the MoE router and experts) are declared and documented here too. The recipe for adding a value is in
docs/internals.md ("Adding a switch value").
"""

from __future__ import annotations

import dataclasses
import importlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from harness.model.spec import attention, embeddings, mlp, norms, positions
from harness.model.spec.attention import QK_NORM_WIDTH
from harness.model.spec.inits import INPUT_WEIGHT, NORM_SCALE, OUTPUT_WEIGHT, RESIDUAL, WEIGHT, ZEROS, InitRule
from harness.model.spec.parametrization import PARAMETRIZATIONS
from harness.model.spec.params import BIAS, Params, linear_init


@dataclass(frozen=True)
class Part:
    """A component's torch-free declaration `params(cfg, layer, ...) -> Params` and its documented init: tensor
    name → how it starts and in which role (a rule of `harness.model.spec.inits`, or a fixed `Init` such as
    `Constant(0.5)`, whose role is input). `layer` is the 0-based block the part belongs to (None outside the
    blocks: embeddings, positions, the final norm), so a tensor or a shape that differs per layer is a line of
    the declaration. A name the declaration leaves out for some configs (a bias) is fine; a declared tensor the
    init does not name is an error.

    `reads`: the config fields that only this part reads, which mean nothing to a model without it
    (`norm_eps` to a norm that has no ε): a run key hashes such a field only when a part of the config declares
    it (`ModelConfig.effective`). A field no part declares is one every model reads (`d_model`).

    `init` and `reads` take no part in equality or hashing (calc caches declarations by entry, and the
    declaration alone decides them)."""

    params: Callable[..., Params]
    init: Mapping[str, InitRule] = field(kw_only=True, compare=False)
    reads: tuple[str, ...] = field(default=(), kw_only=True, compare=False)

    def declared(self, cfg: Any, layer: int | None, *args: Any) -> Params:
        """The declaration for `cfg` at `layer` and the part's further arguments (a norm's width, ...)."""
        return self.params(cfg, layer, *args)

    def documented(self, cfg: Any, layer: int | None, *args: Any) -> Params:
        """The declared tensors, each with the init and role this entry documents for `cfg`: equal to
        `declared(cfg, layer, *args)` iff the declaration starts every tensor as documented, in the documented
        role."""
        params = self.params(cfg, layer, *args)
        undocumented = ", ".join(name for name in params if name not in self.init)
        if undocumented:
            raise TypeError(f"{self.params.__qualname__} declares {undocumented} without a documented init")
        return {name: dataclasses.replace(param, init=self.init[name].for_config(cfg), role=self.init[name].role)
                for name, param in params.items()}


@dataclass(frozen=True)
class Component(Part):
    """A switch value's part and its module ("pkg.mod:Class")."""

    module: str | type  # a class itself for components defined outside the package (a test, a user's file)

    def build(self, cfg: Any, layer: int | None, *args: Any) -> Any:
        """An instance of the module (imports torch), built as `Module(cfg, layer, *args, params)` from this
        entry's declaration `params(cfg, layer, *args)`, so the module and calc read one description."""
        return resolve(self.module)(cfg, layer, *args, self.params(cfg, layer, *args))


@dataclass(frozen=True)
class Mlp(Component):
    """An MLP kind: with n_experts > 1 the same kind (gated or not, same activation) becomes each expert."""

    activation: str = "relu"  # a key of harness.model.mlp.ACTIVATIONS
    gated: bool = False


@dataclass(frozen=True)
class Placement:
    """A norm_position: the block module, the norm slots that hold a norm (the rest are Identity), and
    whether the decoder ends in a final norm (post-norm blocks already end in one)."""

    module: str
    slots: tuple[str, ...]
    final_norm: bool = True


def resolve(path: str | Any) -> Any:
    """The object at "package.module:name" (anything else is already the object)."""
    if not isinstance(path, str):
        return path
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


# The parts every model has; no switch picks them, so the model builds their modules directly.
ATTENTION = Part(attention.projections, init={
    "sinks": INPUT_WEIGHT,
    **linear_init("q_proj", WEIGHT), **linear_init("k_proj", WEIGHT), **linear_init("v_proj", WEIGHT),
    **linear_init("o_proj", RESIDUAL),
})
TOKEN_EMBEDDING = Part(embeddings.token_embedding, init={"weight": INPUT_WEIGHT})
LM_HEAD = Part(embeddings.lm_head, init={"weight": OUTPUT_WEIGHT})
MOE_FIELDS = ("moe_top_k", "moe_topk_norm", "moe_aux_loss", "moe_capacity_factor")
MOE_ROUTER = Part(mlp.router, init=linear_init("router", OUTPUT_WEIGHT), reads=MOE_FIELDS)
EXPERTS = Part(mlp.experts, init={"gate_proj": WEIGHT, "up_proj": WEIGHT, "down_proj": RESIDUAL}, reads=MOE_FIELDS)

SCALED_NORM_FIELDS = ("norm_eps", "norm_unit_offset")
NORMS: dict[str, Component] = {
    "layernorm": Component(norms.layernorm, "harness.model.norms:LayerNorm", init={"weight": NORM_SCALE, "bias": ZEROS},
                           reads=SCALED_NORM_FIELDS),
    "rmsnorm": Component(norms.rmsnorm, "harness.model.norms:RMSNorm", init={"weight": NORM_SCALE},
                         reads=SCALED_NORM_FIELDS),
    "rmsnorm_noweight": Component(norms.rmsnorm_noweight, "harness.model.norms:RMSNormNoWeight", init={},
                                  reads=("norm_eps",)),
}

NORM_POSITIONS: dict[str, Placement] = {
    "pre": Placement("harness.model.block:Block", ("norm_attn_in", "norm_mlp_in")),
    "post": Placement("harness.model.block:Block", ("norm_attn_post", "norm_mlp_post"), final_norm=False),
    "sandwich": Placement(
        "harness.model.block:Block", ("norm_attn_in", "norm_attn_out", "norm_mlp_in", "norm_mlp_out")
    ),
    "reordered": Placement("harness.model.block:Block", ("norm_attn_out", "norm_mlp_out")),
    "parallel": Placement("harness.model.block:ParallelBlock", ("norm_attn_in",)),  # one shared norm (GPT-J, PaLM)
    "parallel_two_norms": Placement("harness.model.block:ParallelBlock", ("norm_attn_in", "norm_mlp_in")),  # GPT-NeoX
}

DENSE_INIT = linear_init("up_proj", WEIGHT) | linear_init("down_proj", RESIDUAL)
GATED_INIT = linear_init("gate_proj", WEIGHT) | DENSE_INIT
# A GLU's derived hidden size is rounded to ffn_multiple_of (ModelConfig's derived_d_ff); a dense one is 4·d.
MLPS: dict[str, Mlp] = {
    "relu": Mlp(mlp.dense, "harness.model.mlp:DenseMLP", init=DENSE_INIT, activation="relu"),
    "gelu": Mlp(mlp.dense, "harness.model.mlp:DenseMLP", init=DENSE_INIT, activation="gelu",
                reads=("gelu_approximate",)),
    "swiglu": Mlp(mlp.gated, "harness.model.mlp:GatedMLP", init=GATED_INIT, activation="silu", gated=True,
                  reads=("ffn_multiple_of",)),
    "geglu": Mlp(mlp.gated, "harness.model.mlp:GatedMLP", init=GATED_INIT, activation="gelu", gated=True,
                 reads=("ffn_multiple_of", "gelu_approximate")),
}
GELU_APPROXIMATE: dict[str, str] = {"none": "none", "tanh": "tanh"}  # ModelConfig value → F.gelu argument

ROPE_FIELDS = ("rope_theta", "rope_type", "rope_scaling_factor", "rope_low_freq_factor", "rope_high_freq_factor",
               "rope_original_max_seq_len", "rope_local_theta", "nope_every")
POSITIONS: dict[str, Component] = {
    "rope": Component(positions.none, "harness.model.positions:RotaryPositions", init={}, reads=ROPE_FIELDS),
    "nope": Component(positions.none, "harness.model.positions:NoPositions", init={}),
    "learned": Component(positions.learned, "harness.model.positions:LearnedPositions",
                         init={"weight": INPUT_WEIGHT}),
}
# rope_type → inverse-frequency function (head_dim, cfg) -> (D/2,) tensor.
ROPE_TYPES: dict[str, str] = {
    "default": "harness.model.positions:default_inv_freq",
    "llama3": "harness.model.positions:llama3_inv_freq",
}

# qk_norm_placement → (normalize before RoPE?, which layers normalize: all, or only those that rotate).
QK_NORM_PLACEMENTS: dict[str, tuple[bool, str]] = {
    "pre_rope": (True, "all"),  # Qwen3, OLMo 2, Gemma 3: project → norm → rotate on every layer
    "irope": (False, "rope"),  # Llama 4: rotate → norm, on RoPE layers only; NoPE layers stay unnormalized
}

# moe_aux_loss → function (routed_counts (E,), mean_probs (E,), n_tokens, top_k) -> loss.
MOE_AUX_LOSSES: dict[str, str] = {
    "assignment_share": "harness.model.moe:assignment_share_loss",
    "switch": "harness.model.moe:switch_loss",
}
# moe_topk_norm → whether the chosen top-k router weights are renormalized to sum 1, given top_k.
MOE_TOPK_NORMS: dict[str, Callable[[int], bool]] = {
    "auto": lambda top_k: top_k > 1,  # Mixtral for k ≥ 2; Switch's k = 1 keeps the router probability
    "renormalize": lambda top_k: True,  # Mixtral at any k; Qwen3-MoE / OLMoE with norm_topk_prob
    "none": lambda top_k: False,  # Qwen3-MoE / OLMoE default: the softmax probabilities as they are
}


def parts() -> list[Part]:
    """Every registered part: the ones every model has and each switch value's component (read at call time,
    so a value registered later counts)."""
    fixed = [ATTENTION, TOKEN_EMBEDDING, LM_HEAD, MOE_ROUTER, EXPERTS]
    return fixed + [entry for table in tables().values() for entry in table.values() if isinstance(entry, Part)]


def qk_norms() -> dict[str, Component | None]:
    """qk_norm → norm component (None: no QK-norm); every registered norm can normalize q and k."""
    return {"none": None, **NORMS}


def tables() -> dict[str, dict[str, Any]]:
    """Every Literal field of ModelConfig → the table whose keys are its valid values (read at call time,
    so a value registered later, e.g. in a test, is valid at once)."""
    return {
        "mlp": MLPS,
        "norm": NORMS,
        "norm_position": NORM_POSITIONS,
        "qk_norm": qk_norms(),
        "qk_norm_scope": QK_NORM_WIDTH,
        "qk_norm_placement": QK_NORM_PLACEMENTS,
        "positions": POSITIONS,
        "rope_type": ROPE_TYPES,
        "bias": BIAS,
        "gelu_approximate": GELU_APPROXIMATE,
        "moe_aux_loss": MOE_AUX_LOSSES,
        "moe_topk_norm": MOE_TOPK_NORMS,
        "parametrization": PARAMETRIZATIONS,
    }


def options(field: str) -> tuple[str, ...]:
    """The valid values of a registered switch, in table order."""
    return tuple(tables()[field])


@contextmanager
def registered(table: dict[str, Any], name: str, entry: Any) -> Iterator[None]:
    """Add `entry` under `name` to `table` for the duration of the block (for trying a component out, e.g.
    in a test, without editing this file)."""
    if name in table:
        raise ValueError(f"{name!r} is already registered")
    table[name] = entry
    try:
        yield
    finally:
        del table[name]
