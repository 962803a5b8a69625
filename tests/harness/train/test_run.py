"""End-to-end training of a tiny model through the real Trainer, callbacks and results store."""

import math

import pytest
import torch

import db
from harness.data import TokenDataModule
from harness.train.load import load_trained


def query(results, sql, *params):
    return db.connect(results).execute(sql, list(params)).fetchall()


@pytest.mark.slow
def test_run_records_loss_curve_probes_and_validation(run_tiny, tiny_train_cfg):
    outcome, results = run_tiny()
    assert outcome.status == "completed"
    (status, last_step, final_val), = query(results, "SELECT status, last_step, final_val_loss FROM runs")
    assert (status, last_step) == ("completed", tiny_train_cfg.steps)
    assert final_val == pytest.approx(outcome.summary["val_loss"])
    curve = query(results, "SELECT step, value FROM metrics WHERE name = 'train_loss' ORDER BY step")
    assert [s for s, _ in curve] == list(range(1, 9))
    assert all(math.isfinite(v) for _, v in curve)
    per_step = {n for (n,) in query(results, "SELECT DISTINCT name FROM metrics WHERE step = 3")}
    assert per_step == {"train_loss", "grad_norm", "lr", "tokens", "step_time"}  # z-loss off: no z_loss row
    probe_steps = query(results, "SELECT DISTINCT step FROM metrics WHERE name = 'output_logit_std' ORDER BY step")
    assert probe_steps == [(4,), (8,)]
    val_steps = query(results, "SELECT step FROM metrics WHERE name = 'val_loss' ORDER BY step")
    assert val_steps == [(4,), (8,)]  # every val_every steps; the end coincides, so no second pass
    grids = dict(query(results, "SELECT name, count(*) FROM layer_metrics WHERE step = 8 GROUP BY name"))
    assert grids == {"attn_logit_max": 4, "q_rms": 4, "k_rms": 2, "param_rms": 2, "grad_rms": 2, "update_rms": 2}
    tokens = query(results, "SELECT value FROM metrics WHERE name = 'tokens' AND step = 8")
    assert tokens == [(8 * tiny_train_cfg.tokens_per_step,)]


def brute_force_probe(model, input_ids):
    """Max causal q·kᵀ·scale per layer and head, q/k RMS per head, and output logits, from first principles."""
    model.capture_qk(True)
    logits = model(input_ids)
    maxima, q_rms, k_rms = [], [], []
    for layer in model.layers:
        attn = layer.attn
        q, k = attn.captured_q, attn.captured_k  # (B, H, T, D), (B, Hkv, T, D)
        k_full = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)  # (B, H, T, D)
        scores = q @ k_full.transpose(-1, -2) * attn.scale  # (B, H, T, T)
        causal = torch.ones(scores.shape[-2:], dtype=torch.bool).tril()
        maxima.append(scores.masked_fill(~causal, -math.inf).amax(dim=(0, 2, 3)))
        q_rms.append(q.pow(2).mean(dim=(0, 2, 3)).sqrt())
        k_rms.append(k.pow(2).mean(dim=(0, 2, 3)).sqrt())
    model.capture_qk(False)
    return torch.stack(maxima), torch.stack(q_rms), torch.stack(k_rms), logits


def layer_grid(results, name, step):
    rows = query(results,
                 "SELECT layer, head, value FROM layer_metrics WHERE name = ? AND step = ? ORDER BY layer, head", name,
                 step)
    n_layers, n_heads = max(r[0] for r in rows) + 1, max(r[1] for r in rows) + 1
    return torch.tensor([r[2] for r in rows]).view(n_layers, n_heads)


@pytest.mark.slow
def test_probe_values_equal_brute_force_on_the_final_weights(run_tiny, train_data, tiny_train_cfg):
    outcome, results = run_tiny(lr=2e-2)  # a high LR so the logits have grown away from init
    model, _ = load_trained(results, "r")  # the checkpoint of step 8, the last probe step
    probe_ids = TokenDataModule(train_data, tiny_train_cfg.seq_len, tiny_train_cfg.batch_size, 0).probe_batch(2)[0]
    with torch.no_grad():
        maxima, q_rms, k_rms, logits = brute_force_probe(model, probe_ids)
    torch.testing.assert_close(layer_grid(results, "attn_logit_max", 8), maxima, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(layer_grid(results, "q_rms", 8), q_rms, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(layer_grid(results, "k_rms", 8), k_rms, rtol=1e-5, atol=1e-6)
    stats = dict(query(results, "SELECT name, value FROM metrics WHERE step = 8 AND name LIKE 'output_%'"))
    assert stats["output_logit_max_abs"] == pytest.approx(logits.abs().max().item(), rel=1e-5)
    assert stats["output_logit_std"] == pytest.approx(logits.std().item(), rel=1e-5)
    assert stats["output_log_z_mean"] == pytest.approx(torch.logsumexp(logits, -1).mean().item(), rel=1e-5)
    assert outcome.summary["max_attention_logit"] == pytest.approx(max(
        query(results, "SELECT max(value) FROM layer_metrics WHERE name = 'attn_logit_max'")[0][0], 0))


def train_losses(results, run_id):
    return [v for (v,) in query(results,
                                "SELECT value FROM metrics WHERE name = 'train_loss' AND run_id = ? ORDER BY step",
                                run_id)]


@pytest.mark.slow
def test_same_seed_same_loss_curve(run_tiny):
    run_tiny("a")
    _, results = run_tiny("b")
    run_tiny("c", seed=1)
    assert train_losses(results, "a") == train_losses(results, "b")
    assert train_losses(results, "a") != train_losses(results, "c")


class Crash(Exception):
    pass


@pytest.mark.slow
def test_moe_softcap_and_accumulation_are_recorded(run_tiny, tiny_model_cfg, tiny_train_cfg):
    model = tiny_model_cfg.replace(n_experts=4, moe_top_k=2, attn_softcap=5.0)
    outcome, results = run_tiny(model=model, grad_accum=2, z_loss=1e-4)
    assert outcome.status == "completed" and outcome.summary["attention_paths"] == "eager"
    per_step = {n for (n,) in query(results, "SELECT DISTINCT name FROM metrics WHERE step = 3")}
    assert {"aux_loss", "z_loss"} <= per_step
    assert query(results, "SELECT count(*) FROM metrics WHERE name = 'train_loss'") == [(tiny_train_cfg.steps,)]
    tokens = query(results, "SELECT value FROM metrics WHERE name = 'tokens' AND step = 8")
    assert tokens == [(8 * tiny_train_cfg.tokens_per_step * 2,)]
    raw = layer_grid(results, "attn_logit_max", 8)
    capped = layer_grid(results, "attn_logit_max_capped", 8)
    torch.testing.assert_close(capped, 5.0 * torch.tanh(raw / 5.0))


@pytest.mark.slow
def test_resume_after_a_crash_reaches_the_uninterrupted_final_loss(run_tiny, monkeypatch):
    whole, results = run_tiny("whole", grad_accum=2)  # accumulation: the data position is micro-batches
    from harness.train.divergence import DivergenceMonitor

    original = DivergenceMonitor.on_train_batch_end

    visible_at_crash = []

    def crash_at_step_6(self, trainer, *args):
        original(self, trainer, *args)
        if trainer.global_step == 6:
            visible_at_crash.extend(train_losses(results, "crashed"))  # what a SIGKILL here would leave
            raise Crash  # after the step-4 checkpoint, before the end

    monkeypatch.setattr(DivergenceMonitor, "on_train_batch_end", crash_at_step_6)
    with pytest.raises(Crash):
        run_tiny("crashed", grad_accum=2)
    monkeypatch.undo()
    assert len(visible_at_crash) == 4  # the store was flushed with the step-4 checkpoint
    checkpoint = torch.load(results / "checkpoints" / "crashed" / "last.ckpt", weights_only=False)
    probe_state = next(v for k, v in checkpoint["callbacks"].items() if k.startswith("ProbeTelemetry"))
    (probed_max,) = query(results,
                          "SELECT max(value) FROM metrics WHERE name = 'attn_logit_max' AND run_id = 'crashed'")[0]
    assert probe_state["max_attention_logit"] == pytest.approx(probed_max)  # the summary's maxima survive a resume
    resumed, _ = run_tiny("crashed", resume=True, grad_accum=2)
    assert resumed.summary["final_train_loss"] == pytest.approx(whole.summary["final_train_loss"], rel=1e-6)
    assert resumed.summary["val_loss"] == pytest.approx(whole.summary["val_loss"], rel=1e-6)
    for key in ("max_attention_logit", "max_output_logit"):
        assert resumed.summary[key] == pytest.approx(whole.summary[key], rel=1e-5)
    assert train_losses(results, "crashed") == pytest.approx(train_losses(results, "whole"), rel=1e-6)
    assert query(results, "SELECT status, n_segments FROM runs WHERE run_id = 'crashed'") == [("completed", 2)]


@pytest.mark.slow
def test_absurd_lr_diverges_as_a_result(run_tiny):
    outcome, results = run_tiny(lr=50.0, warmup_steps=0, grad_clip=None, steps=30)
    step = outcome.summary["diverged_at_step"]
    assert outcome.status == "diverged" and step is not None and step < 30
    assert query(results, "SELECT status, diverged_at_step FROM runs") == [("diverged", step)]
    assert query(results, "SELECT step FROM events WHERE kind = 'diverged'") == [(step,)]
    assert query(results, "SELECT max(step) FROM metrics WHERE name = 'train_loss'") == [(step,)]


@pytest.mark.slow
def test_bf16_autocast_and_compile_paths_train_on_cpu(run_tiny, monkeypatch):
    import harness.train.lit as lit

    logits_dtypes = set()
    losses = lit.next_token_losses

    def recording_losses(logits, *args, **kwargs):
        logits_dtypes.add(logits.dtype)
        return losses(logits, *args, **kwargs)

    monkeypatch.setattr(lit, "next_token_losses", recording_losses)
    bf16, _ = run_tiny("bf16", precision="bf16", steps=4, probe_every=2)
    assert bf16.status == "completed" and math.isfinite(bf16.summary["final_train_loss"])
    assert logits_dtypes == {torch.bfloat16}  # the forward really ran under CPU autocast
    monkeypatch.undo()
    # val_seqs a multiple of batch_size: a last validation batch of another size would be one more compile (with
    # dynamic shapes), the test's dearest step with a cold Inductor cache, as in CI
    from torch._dynamo.utils import counters

    counters.clear()
    compiled, results = run_tiny("compiled", compile=True, steps=3, probe_every=2, val_seqs=4)
    assert compiled.status == "completed" and math.isfinite(compiled.summary["final_train_loss"])
    # two graphs, training and the no-grad validation: the probe ran eagerly, and still measured the model
    assert counters["stats"]["unique_graphs"] == 2
    assert query(results, "SELECT DISTINCT step FROM metrics WHERE run_id = 'compiled' AND name = 'attn_logit_max' "
                 "ORDER BY step") == [(2,), (3,)]


@pytest.mark.slow
def test_a_non_finite_grad_norm_ends_the_run_at_its_step(run_tiny):
    """At LR 1e6 the first update kills the network: the gradient turns NaN a step before the loss does."""
    outcome, results = run_tiny(lr=1e6, warmup_steps=0, steps=30)
    step = outcome.summary["diverged_at_step"]
    grad_norms = dict(query(results, "SELECT step, value FROM metrics WHERE name = 'grad_norm'"))
    losses = dict(query(results, "SELECT step, value FROM metrics WHERE name = 'train_loss'"))
    assert math.isnan(grad_norms[step]) and math.isfinite(losses[step])
    assert all(math.isfinite(grad_norms[s]) and math.isfinite(losses[s]) for s in range(1, step))
    assert query(results, "SELECT status, diverged_at_step FROM runs") == [("diverged", step)]
    assert query(results, "SELECT detail FROM events WHERE kind = 'diverged'") == [("grad norm is nan",)]


@pytest.mark.slow
def test_validation_scores_the_same_windows_whatever_the_batch_size(run_tiny):
    """An LR too small to move fp32 weights keeps both models at their (seeded) init: equal val loss means the
    same windows were scored, with batch sizes 4 and 5 (6 windows: 4 + 2 and 5 + 1)."""
    four, _ = run_tiny("b4", steps=1, lr=1e-15, min_lr=0.0, weight_decay=0.0)
    five, _ = run_tiny("b5", steps=1, lr=1e-15, min_lr=0.0, weight_decay=0.0, batch_size=5)
    more, _ = run_tiny("more", steps=1, lr=1e-15, min_lr=0.0, weight_decay=0.0, val_seqs=8)
    assert five.summary["val_loss"] == pytest.approx(four.summary["val_loss"], rel=1e-6)
    assert abs(more.summary["val_loss"] - four.summary["val_loss"]) > 1e-5 * four.summary["val_loss"]  # other windows


@pytest.mark.slow
def test_sparse_step_rows_still_include_the_step_a_run_stops_at(run_tiny):
    run_tiny("sparse", log_every=3)
    diverged, results = run_tiny("diverged", lr=1e6, warmup_steps=0, steps=30, log_every=100)

    def rows(run_id):
        return [s for (s,) in query(results,
                                    "SELECT step FROM metrics WHERE name = 'train_loss' AND run_id = ? ORDER BY step",
                                    run_id)]

    assert rows("sparse") == [3, 6, 8]  # the runs view's final_train_loss is the last step's
    assert rows("diverged") == [diverged.summary["diverged_at_step"]]


@pytest.mark.slow
def test_each_segment_records_the_code_versions_device_and_precision(run_tiny):
    import lightning

    from harness.provenance import current_code

    run_tiny("fp32", steps=2, probe_every=2, val_every=2, checkpoint_every=2)
    _, results = run_tiny("bf16", precision="bf16", steps=2, probe_every=2, val_every=2, checkpoint_every=2)
    code = current_code()
    rows = query(results, "SELECT run_id, harness_version, git_commit, git_dirty, code_versions, torch_version, "
                 "lightning_version, device_name, trainer_precision FROM runs ORDER BY run_id")
    assert rows == [(run_id, code.harness_version, code.git_commit, code.git_dirty, 1, torch.__version__,
                     lightning.__version__, "cpu", precision) for run_id, precision in (("bf16", "bf16-mixed"),
                                                                                         ("fp32", "32-true"))]
