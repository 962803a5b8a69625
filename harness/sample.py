"""Decoding with the KV cache: greedy, sampling (temperature, top-k, top-p) and beam search.

The prompt runs once; each further step feeds only the new token. Sampling draws from a caller-supplied
`torch.Generator`, so the same seed gives the same tokens.
"""

from __future__ import annotations

import torch

from errors import ConfigError
from harness.config.base import check_choice
from harness.model.cache import KVCache
from harness.model.transformer import Transformer

STRATEGIES = ("greedy", "sample", "beam")


def _validate(strategy: str, max_new_tokens: int, temperature: float, top_k: int | None, top_p: float,
              num_beams: int) -> None:
    check_choice("generate", "strategy", strategy, STRATEGIES)
    if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 0:
        raise ConfigError(f"generate.max_new_tokens={max_new_tokens!r} is invalid: must be an integer ≥ 0.")
    if not temperature >= 0:
        raise ConfigError(f"generate.temperature={temperature!r} is invalid: must be ≥ 0 (0 means greedy).")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1):
        raise ConfigError(f"generate.top_k={top_k!r} is invalid: must be an integer ≥ 1, or None for no limit.")
    if not 0 < top_p <= 1:
        raise ConfigError(f"generate.top_p={top_p!r} is invalid: must be in (0, 1] (1 keeps every token).")
    if not isinstance(num_beams, int) or isinstance(num_beams, bool) or num_beams < 1:
        raise ConfigError(f"generate.num_beams={num_beams!r} is invalid: must be an integer ≥ 1.")


def top_k_filter(logits: torch.Tensor, top_k: int) -> torch.Tensor:
    """Set all but the `top_k` largest logits of each row (·, V) to -inf."""
    if top_k >= logits.shape[-1]:
        return logits
    threshold = logits.topk(top_k, dim=-1).values[..., -1:]  # (·, 1)
    return logits.masked_fill(logits < threshold, float("-inf"))


def top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the nucleus: the most likely tokens whose probabilities first reach `top_p` in total (Holtzman et al.)."""
    if top_p >= 1:
        return logits
    sorted_logits, order = logits.sort(dim=-1, descending=True)  # (·, V)
    sorted_probs = sorted_logits.float().softmax(dim=-1)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs  # probability of the strictly more likely tokens
    drop_sorted = mass_before >= top_p  # the most likely token always stays (mass_before = 0)
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def _next_token(
    logits: torch.Tensor, temperature: float, top_k: int | None, top_p: float, generator: torch.Generator | None
) -> torch.Tensor:
    """(B, V) last-position logits → (B,) chosen tokens; temperature 0 is the argmax."""
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits.float()
    # Shift the max to 0 before dividing: a tiny temperature then sends the rest to -inf, never to inf - inf.
    logits = (logits - logits.amax(dim=-1, keepdim=True)) / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    logits = top_p_filter(logits, top_p)
    return torch.multinomial(logits.softmax(dim=-1), 1, generator=generator).squeeze(-1)


def _decode(model, prompt, max_new_tokens, temperature, top_k, top_p, generator, eos_id) -> torch.Tensor:
    cache = KVCache()
    logits = model(prompt, cache)[:, -1]  # (B, V)
    tokens = [prompt]
    finished = torch.zeros(prompt.shape[0], dtype=torch.bool, device=prompt.device)
    for step in range(max_new_tokens):
        token = _next_token(logits, temperature, top_k, top_p, generator)  # (B,)
        if eos_id is not None:
            token = token.masked_fill(finished, eos_id)  # finished rows are padded with eos
            finished = finished | (token == eos_id)
        tokens.append(token[:, None])
        if step + 1 == max_new_tokens or (eos_id is not None and bool(finished.all())):
            break
        logits = model(token[:, None], cache)[:, -1]
    return torch.cat(tokens, dim=1)


def _beam_search(model, prompt, max_new_tokens, num_beams, eos_id) -> torch.Tensor:
    """Highest total log-probability continuation per row; a beam that emits eos is frozen (eos padding, score kept)."""
    batch, _ = prompt.shape
    cache = KVCache()
    rows = prompt.repeat_interleave(num_beams, dim=0)  # (B·K, T)
    logits = model(rows, cache)[:, -1].float()  # (B·K, V)
    vocab = logits.shape[-1]
    scores = torch.full((batch, num_beams), float("-inf"), device=prompt.device)
    scores[:, 0] = 0  # all beams start identical: expand only the first
    finished = torch.zeros(batch * num_beams, dtype=torch.bool, device=prompt.device)
    for step in range(max_new_tokens):
        log_probs = logits.log_softmax(dim=-1)  # (B·K, V)
        if eos_id is not None:
            frozen = torch.full_like(log_probs, float("-inf"))
            frozen[:, eos_id] = 0  # a finished beam can only repeat eos, at no cost
            log_probs = torch.where(finished[:, None], frozen, log_probs)
        candidates = (scores.view(-1, 1) + log_probs).view(batch, num_beams * vocab)
        scores, flat = candidates.topk(num_beams, dim=-1)  # (B, K)
        parents = (flat // vocab + torch.arange(batch, device=prompt.device)[:, None] * num_beams).view(-1)
        token = (flat % vocab).view(-1)  # (B·K,)
        rows = torch.cat((rows.index_select(0, parents), token[:, None]), dim=1)
        cache.reorder(parents)
        if eos_id is not None:
            finished = finished.index_select(0, parents) | (token == eos_id)
        if step + 1 == max_new_tokens or (eos_id is not None and bool(finished.all())):
            break
        logits = model(token[:, None], cache)[:, -1].float()
    best = scores.argmax(dim=-1) + torch.arange(batch, device=prompt.device) * num_beams  # (B,)
    return rows.index_select(0, best)


@torch.no_grad()
def generate(
    model: Transformer,
    prompt_ids: torch.Tensor,
    max_new_tokens: int,
    *,
    strategy: str = "greedy",
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float = 1.0,
    num_beams: int = 1,
    generator: torch.Generator | None = None,
    eos_id: int | None = None,
) -> torch.Tensor:
    """Prompt (T,) or (B, T) → prompt plus up to `max_new_tokens` new tokens, same rank.

    greedy: argmax. sample: temperature-scaled, optionally top-k then top-p filtered draws (temperature 0 is
    greedy). beam: `num_beams` beams by total log-probability. With `eos_id`, a finished row is padded with
    eos and decoding stops once every row has finished.
    """
    _validate(strategy, max_new_tokens, temperature, top_k, top_p, num_beams)
    if prompt_ids.dim() not in (1, 2) or prompt_ids.shape[-1] == 0:
        raise ConfigError(f"generate.prompt_ids has shape {tuple(prompt_ids.shape)}: expected (T,) or (B, T) with T ≥ "
                          "1.")
    cfg = model.cfg
    if cfg.positions == "learned" and prompt_ids.shape[-1] + max_new_tokens > cfg.max_seq_len:
        raise ConfigError(
            f"generate.max_new_tokens={max_new_tokens!r} is invalid: prompt ({prompt_ids.shape[-1]}) plus new tokens "
            f"exceed the learned position table (max_seq_len={cfg.max_seq_len})."
        )
    if strategy == "beam" and num_beams > cfg.vocab_size:
        raise ConfigError(f"generate.num_beams={num_beams!r} is invalid: must be ≤ vocab_size={cfg.vocab_size}.")
    token_ids = f"a token id in 0..{cfg.vocab_size - 1}"
    eos_ok = isinstance(eos_id, int) and not isinstance(eos_id, bool) and 0 <= eos_id < cfg.vocab_size
    if eos_id is not None and not eos_ok:
        raise ConfigError(f"generate.eos_id={eos_id!r} is invalid: must be {token_ids}, or None.")
    in_vocab = (prompt_ids.dtype in (torch.int64, torch.int32)
                and bool(((prompt_ids >= 0) & (prompt_ids < cfg.vocab_size)).all()))
    if not in_vocab:
        raise ConfigError(
            f"generate.prompt_ids ({prompt_ids.dtype}) is invalid: every entry must be {token_ids} (int64 or int32)."
        )
    prompt = prompt_ids if prompt_ids.dim() == 2 else prompt_ids[None]
    if max_new_tokens == 0:
        out = prompt
    elif strategy == "beam":
        out = _beam_search(model, prompt, max_new_tokens, num_beams, eos_id)
    else:
        temperature = 0.0 if strategy == "greedy" else temperature
        out = _decode(model, prompt, max_new_tokens, temperature, top_k, top_p, generator, eos_id)
    return out if prompt_ids.dim() == 2 else out[0]
