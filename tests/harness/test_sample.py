import itertools

import pytest
import torch

from errors import ConfigError
from harness.config.model import ModelConfig
from harness.model import build_model
from harness.sample import generate, top_k_filter, top_p_filter


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    model = build_model(ModelConfig(vocab_size=40, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2)).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.2)  # peaked enough that greedy and beam can differ
    return model


@pytest.fixture(scope="module")
def prompt():
    return torch.randint(0, 40, (3, 4), generator=torch.Generator().manual_seed(1))


def _greedy_without_cache(model, prompt, steps):
    tokens = prompt
    for _ in range(steps):
        tokens = torch.cat((tokens, model(tokens)[:, -1].argmax(-1, keepdim=True)), dim=1)
    return tokens


def test_greedy_matches_argmax_of_full_forwards(model, prompt):
    torch.testing.assert_close(generate(model, prompt, 6), _greedy_without_cache(model, prompt, 6))


@pytest.mark.parametrize("kwargs", [{}, {"strategy": "sample", "top_k": 5}, {"strategy": "beam", "num_beams": 3}])
def test_decoding_feeds_the_prompt_once_then_one_token_per_step(model, prompt, kwargs):
    fed = []
    hook = model.tok_emb.register_forward_hook(lambda module, args, out: fed.append(tuple(args[0].shape)))
    try:
        generate(model, prompt, 4, generator=torch.Generator().manual_seed(0), **kwargs)
    finally:
        hook.remove()
    rows = len(prompt) * kwargs.get("num_beams", 1)
    assert fed == [(rows, prompt.shape[1])] + [(rows, 1)] * 3  # the KV cache holds everything before


def test_one_dimensional_prompt_keeps_its_rank(model, prompt):
    torch.testing.assert_close(generate(model, prompt[0], 5), generate(model, prompt, 5)[0])


@pytest.mark.parametrize("kwargs", [
    {"strategy": "beam", "num_beams": 1},
    {"strategy": "sample", "temperature": 0.0},
    {"strategy": "sample", "temperature": 1e-5},  # the limit temperature → 0
    {"strategy": "sample", "temperature": 1e-40},  # logits / T alone would overflow to inf - inf = nan
    {"strategy": "sample", "top_k": 1},
])
def test_degenerate_settings_equal_greedy(model, prompt, kwargs):
    generator = torch.Generator().manual_seed(0)
    torch.testing.assert_close(generate(model, prompt, 6, generator=generator, **kwargs), generate(model, prompt, 6))


@pytest.mark.slow
def test_sampling_is_reproducible_with_a_seeded_generator(model, prompt):
    draw = lambda seed: generate(  # noqa: E731
        model, prompt, 8, strategy="sample", top_p=0.95, generator=torch.Generator().manual_seed(seed)
    )
    assert torch.equal(draw(3), draw(3))
    assert not torch.equal(draw(3), draw(4))


def _sequence_log_prob(model, tokens, prompt_len):
    log_probs = model(tokens[:, :-1]).log_softmax(-1)
    picked = log_probs.gather(-1, tokens[:, 1:, None])[..., 0]
    return picked[:, prompt_len - 1 :].sum(-1)


def test_beam_search_finds_sequences_at_least_as_likely_as_greedy(model, prompt):
    greedy = generate(model, prompt, 5)
    beam = generate(model, prompt, 5, strategy="beam", num_beams=4)
    with torch.no_grad():
        assert (_sequence_log_prob(model, beam, 4) >= _sequence_log_prob(model, greedy, 4) - 1e-5).all()


@pytest.fixture(scope="module")
def four_token_model():
    """V = 4 and weights drawn wide enough that greedy misses the most likely continuation on some rows."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(vocab_size=4, d_model=16, n_layers=1, n_heads=2, max_seq_len=16)).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.25)
    return model


def _continuation_log_probs(model, prompt, continuations):
    """Total log-probability (N,) of each continuation (N, L) after the 1-D `prompt`, by full forwards."""
    seqs = torch.cat((prompt.expand(len(continuations), -1), continuations), dim=1)
    with torch.no_grad():
        return _sequence_log_prob(model, seqs, len(prompt))


def _reference_beam_search(model, prompt, steps, num_beams):
    """Textbook beam search: expand every kept prefix by every token, rescore by full forwards, keep the best."""
    beams = torch.zeros(1, 0, dtype=torch.long)
    for _ in range(steps):
        vocab = torch.arange(model.cfg.vocab_size)
        candidates = torch.cat((beams.repeat_interleave(len(vocab), 0), vocab.repeat(len(beams))[:, None]), dim=1)
        scores = _continuation_log_probs(model, prompt, candidates)
        beams = candidates[scores.argsort(descending=True, stable=True)[:num_beams]]
    return beams[0]


@pytest.mark.slow
def test_beam_search_equals_exhaustive_search_and_a_reference_beam_search(four_token_model):
    model, vocab = four_token_model, 4
    prompt = torch.randint(0, vocab, (4, 2), generator=torch.Generator().manual_seed(0))
    all_pairs = torch.tensor(list(itertools.product(range(vocab), repeat=2)))  # (V², 2)
    greedy_missed = 0
    for row in range(len(prompt)):
        best = all_pairs[_continuation_log_probs(model, prompt[row], all_pairs).argmax()]
        greedy_missed += not torch.equal(generate(model, prompt[row], 2)[2:], best)
        # With V beams every one-token prefix survives, so two steps are an exhaustive search.
        assert torch.equal(generate(model, prompt[row], 2, strategy="beam", num_beams=vocab)[2:], best)
    assert greedy_missed > 0  # otherwise this model could not tell beam search from greedy
    for num_beams in (2, 3):
        batched = generate(model, prompt, 4, strategy="beam", num_beams=num_beams)
        for row in range(len(prompt)):
            assert torch.equal(batched[row, 2:], _reference_beam_search(model, prompt[row], 4, num_beams))


def test_eos_pads_finished_rows_and_stops_early(model, prompt):
    eos = int(generate(model, prompt, 1)[0, -1])
    out = generate(model, prompt, 6, eos_id=eos)
    assert (out[0, 4:] == eos).all()
    for row in generate(model, prompt, 6, strategy="beam", num_beams=3, eos_id=eos):
        new = row[4:].tolist()
        if eos in new:
            assert set(new[new.index(eos) :]) == {eos}  # nothing but eos after the first one
    single = generate(model, prompt[:1], 6, eos_id=eos)
    assert single.shape == (1, 5)  # stopped right after the only row finished


def test_top_p_keeps_the_smallest_nucleus_reaching_p():
    logits = torch.log(torch.tensor([[0.12, 0.5, 0.05, 0.25, 0.08]]))
    kept = lambda p: torch.isfinite(top_p_filter(logits, p))[0].tolist()  # noqa: E731
    assert kept(0.5) == [False, True, False, False, False]
    assert kept(0.6) == [False, True, False, True, False]
    assert kept(0.75) == [False, True, False, True, False]
    assert kept(0.8) == [True, True, False, True, False]
    assert kept(0.9) == [True, True, False, True, True]
    assert kept(0.01) == [False, True, False, False, False]  # the top token always stays
    assert kept(1.0) == [True] * 5


def test_top_k_keeps_the_k_largest():
    logits = torch.tensor([[0.3, 2.0, -1.0, 1.0]])
    assert torch.isfinite(top_k_filter(logits, 2))[0].tolist() == [False, True, False, True]


@pytest.mark.parametrize("kwargs, field", [
    ({"top_p": 0.0}, "top_p"), ({"top_p": 1.5}, "top_p"), ({"top_k": 0}, "top_k"),
    ({"temperature": -0.1}, "temperature"), ({"num_beams": 0}, "num_beams"),
    ({"strategy": "beams"}, "strategy"), ({"max_new_tokens": -1}, "max_new_tokens"),
])
def test_bad_arguments_raise_naming_the_argument(model, prompt, kwargs, field):
    args = {"max_new_tokens": 3, **kwargs}
    with pytest.raises(ConfigError, match=field):
        generate(model, prompt, args.pop("max_new_tokens"), **args)


def test_limits_of_the_model_are_checked_before_decoding(model, prompt):
    with pytest.raises(ConfigError, match="num_beams=41.*vocab_size=40"):
        generate(model, prompt, 2, strategy="beam", num_beams=41)
    for strategy in ("greedy", "beam"):  # greedy ignored an out-of-vocabulary eos, beam search crashed on it
        with pytest.raises(ConfigError, match=r"eos_id=40 .*0\.\.39"):
            generate(model, prompt, 2, strategy=strategy, eos_id=40)
    for bad_prompt in (torch.tensor([[1, 40]]), torch.tensor([[-1, 2]]), torch.tensor([[1.0, 2.0]])):
        with pytest.raises(ConfigError, match=r"prompt_ids .*0\.\.39"):
            generate(model, bad_prompt, 2)
    learned = build_model(ModelConfig(vocab_size=40, d_model=32, n_layers=1, n_heads=4, positions="learned",
                                      max_seq_len=8))
    assert generate(learned, prompt, 4).shape == (3, 8)
    with pytest.raises(ConfigError, match="max_new_tokens=5.*max_seq_len=8"):
        generate(learned, prompt, 5)
