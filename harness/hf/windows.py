"""Reading sliding-window attention from a config: which layers are local, as our (sliding_window, global_every)."""

from __future__ import annotations

from harness.hf.source import HFConfig

Windows = tuple[int | None, int]  # (sliding_window, global_every)


def no_windows(hf: HFConfig) -> Windows:
    """Full causal attention on every layer."""
    return None, 0


def every_layer(hf: HFConfig) -> Windows:
    """`sliding_window` (None: off) on every layer (Mistral, Phi-3, StarCoder2, Mixtral)."""
    return hf.get("sliding_window"), 0


def every_layer_if_enabled(hf: HFConfig) -> Windows:
    """`sliding_window` on every layer, only with `use_sliding_window` (Qwen3-MoE, as its config class reads it)."""
    return (hf.get("sliding_window") if hf.get("use_sliding_window") else None), 0


def window_pattern(hf: HFConfig, layer_types: list[str], window: int | None) -> Windows:
    """Express `layer_types` as all-global, all-local, or global on every k-th layer (k, 2k, ...)."""
    unknown = sorted(set(layer_types) - {"full_attention", "sliding_attention"})
    if unknown:
        hf.refuse(f"layer_types {unknown}", "only 'full_attention' and 'sliding_attention' layers are expressible")
    local = [kind == "sliding_attention" for kind in layer_types]
    if window is None or not any(local):
        return None, 0
    if all(local):
        return window, 0
    for every in range(2, len(local) + 1):
        if all(is_local == ((i + 1) % every != 0) for i, is_local in enumerate(local)):
            return window, every
    hf.refuse(f"layer_types pattern {layer_types}", "global layers must be every k-th layer (global_every=k)", False)
    return None, 0


def layer_types_or(hf: HFConfig, local: list[bool], window: int | None) -> Windows:
    """The config's `layer_types`, or the family's default per-layer pattern `local`, as a window pattern."""
    default_types = ["sliding_attention" if is_local else "full_attention" for is_local in local]
    return window_pattern(hf, hf.get("layer_types") or default_types, window)


def alternating(every: int, hf: HFConfig) -> Windows:
    """Gemma's pattern when `layer_types` is absent: layer i is global when (i + 1) is a multiple of `every`."""
    local = [bool((i + 1) % every) for i in range(hf.get("num_hidden_layers"))]
    return layer_types_or(hf, local, hf.get("sliding_window"))


def after_max_window_layers(hf: HFConfig) -> Windows:
    """Qwen2/Qwen3: with `use_sliding_window`, layers from `max_window_layers` on are local."""
    window = hf.get("sliding_window") if hf.get("use_sliding_window") else None
    first_local = hf.get("max_window_layers")
    local = [window is not None and i >= first_local for i in range(hf.get("num_hidden_layers"))]
    return layer_types_or(hf, local, window)
