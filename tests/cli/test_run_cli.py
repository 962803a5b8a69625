"""`harness run` / `harness sample` in-process: bad input fails with exit 2 before any training; a normal
and a diverged run both exit 0 with a summary; sampling reads the run back."""

import pytest

from cli.main import main
from harness.config import DataConfig, ModelConfig, TrainConfig


def test_the_three_configs_share_no_field_name():
    model, train, data = (set(cls.field_names()) for cls in (ModelConfig, TrainConfig, DataConfig))
    assert not model & train and not model & data and not train & data


@pytest.fixture
def tiny_args(tmp_path, train_data_cfg):
    """Arguments for a 4-step tiny run on the test corpus, into tmp_path/results."""
    return [
        "run", "--preset", "tiny", "--results", str(tmp_path / "results"), "--no-progress",
        "--data", train_data_cfg.source, "--set", f"cache_dir={train_data_cfg.cache_dir}",
        "--set", f"val_tokens={train_data_cfg.val_tokens}", "--set", "vocab_size=512", "--steps", "4",
        "--set", "seq_len=32", "--set", "batch_size=4", "--set", "probe_every=2", "--set", "val_every=2",
        "--set", "warmup_steps=1", "--set", "probe_seqs=2",
    ]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--data", "/nonexistent/corpus.txt"], "/nonexistent/corpus.txt"),
        (["--set", "lr=0"], "TrainConfig.lr=0.0 is invalid"),
        (["--set", "lr=-1e-3"], "TrainConfig.lr=-0.001 is invalid"),
        (["--set", "positions=learned", "--set", "seq_len=256"], "TrainConfig.seq_len=256 is invalid"),
        (["--set", "seq_len=256"],
         "TrainConfig.seq_len=256 is invalid: the model takes sequences of at most max_seq_len=128"),
        (["--set", "lrr=1e-3"], "--set names no field 'lrr'; did you mean 'lr'?"),
        (["--set", "n_heads=3"], "ModelConfig.n_heads=3 is invalid: it must be a multiple of n_kv_heads=2"),
        (["--set", "schedule=cosin"], "Did you mean 'cosine'?"),
        (["--run-id", "../escape"], "--run-id"),
        (["--set", "probe_seqs=1000"], "TrainConfig.probe_seqs=1000 is invalid"),
        (["--set", "steps=9"], "--steps and --set steps= both set TrainConfig.steps; give it once."),
        (["--set", "source=default"], "--data and --set source= both set DataConfig.source"),
    ],
)
def test_bad_input_fails_before_training_with_exit_2(tiny_args, tmp_path, capsys, extra, message):
    assert main([*tiny_args, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("harness run: error:")
    assert not (tmp_path / "results" / "checkpoints").exists()


def test_results_path_that_is_a_file_fails_before_training(tiny_args, tmp_path, capsys):
    a_file = tmp_path / "results.txt"
    a_file.write_text("not a store")
    assert main([*tiny_args, "--results", str(a_file)]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err


def test_cuda_without_a_gpu_fails_before_training(tiny_args, tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main([*tiny_args, "--set", "device=cuda"]) == 2
    assert "TrainConfig.device='cuda' is invalid" in capsys.readouterr().err
    assert not (tmp_path / "results" / "checkpoints").exists()


def test_empty_corpus_fails_before_training(tiny_args, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main([*tiny_args, "--data", str(empty)]) == 2
    assert "empty" in capsys.readouterr().err
    assert not (tmp_path / "results" / "checkpoints").exists()


def test_unknown_field_lists_the_valid_ones(tiny_args, capsys):
    assert main([*tiny_args, "--set", "nonsense=1"]) == 2
    err = capsys.readouterr().err
    assert "ModelConfig: vocab_size" in err and "TrainConfig: steps" in err and "DataConfig: source" in err


@pytest.mark.slow
def test_run_then_rerun_resume_and_sample(tiny_args, tmp_path, capsys):
    assert main(tiny_args) == 0
    out = capsys.readouterr().out
    run_id = out.split()[1].rstrip(":")
    assert f"run {run_id}: completed" in out and "max attention logit" in out and "tokens/s" in out
    assert main(tiny_args) == 2  # same configs, same key: refuses to overwrite
    assert "already exists" in capsys.readouterr().err
    assert main([*tiny_args, "--resume"]) == 2  # a completed run has nothing left to continue
    assert "already ended (completed)" in capsys.readouterr().err
    prompt = "The for statement"
    assert main(["sample", run_id, "--results", str(tmp_path / "results"), "--prompt", prompt,
                 "--max-new-tokens", "5", "--temperature", "0"]) == 0
    assert capsys.readouterr().out.startswith(prompt)
    sampled = ["sample", run_id, "--results", str(tmp_path / "results"), "--prompt", prompt, "--max-new-tokens", "8",
               "--temperature", "0.9", "--top-k", "20", "--top-p", "0.9", "--seed", "7"]
    assert main(sampled) == 0 and main(sampled) == 0
    first, second = capsys.readouterr().out.split(prompt)[1:]
    assert first == second  # same seed, same continuation


@pytest.mark.slow
def test_a_vocab_larger_than_the_corpus_supports_is_warned_and_the_real_size_stored(tiny_args, tmp_path,
                                                                                    train_data_cfg, capsys):
    import db
    from cli.run_config import warn_small_tokenizer
    from harness.data import prepare

    assert main([arg if arg != "vocab_size=512" else "vocab_size=4096" for arg in tiny_args]) == 0
    real = prepare(train_data_cfg, 4096).tokenizer_vocab_size  # the cache's tokenizer, which the run used
    assert real < 4096
    assert (f"warning: the tokenizer has only {real:,} tokens, fewer than ModelConfig.vocab_size=4,096"
            in capsys.readouterr().err)
    stored = db.connect(tmp_path / "results").sql("select summary->>'tokenizer_vocab_size' from runs").fetchall()
    assert stored == [(str(real),)]
    warn_small_tokenizer(512, 512)
    assert capsys.readouterr().err == ""  # a tokenizer of the full size says nothing


@pytest.mark.slow
def test_diverged_run_exits_0_with_its_step(tiny_args, capsys):
    code = main([*tiny_args, "--steps", "30", "--set", "lr=50", "--set", "grad_clip=none", "--set", "warmup_steps=0"])
    assert code == 0
    assert "diverged at step" in capsys.readouterr().out


def test_bad_data_fails_before_torch_is_imported(tmp_path):
    """Validation needs no torch: a fresh process rejects a missing corpus without importing it."""
    import subprocess
    import sys

    script = (
        "import sys; from cli.main import main; "
        "code = main(['run', '--preset', 'tiny', '--data', '/nonexistent/corpus.txt', '--results', "
        f"{str(tmp_path)!r}]); print(code, 'torch' in sys.modules, 'lightning' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["2", "False", "False"]
    assert "data path does not exist" in result.stderr


@pytest.mark.slow
def test_config_file_with_overrides(tmp_path, train_data_cfg, capsys):
    config = tmp_path / "arm.py"
    config.write_text(
        "from harness.config import DataConfig, TrainConfig\n"
        "from harness.presets import from_name\n"
        "model = from_name('tiny', vocab_size=512, qk_norm='rmsnorm')\n"
        "train = TrainConfig(steps=3, batch_size=4, seq_len=32, warmup_steps=1, probe_every=2, probe_seqs=2)\n"
        f"data = DataConfig(source={train_data_cfg.source!r}, cache_dir={train_data_cfg.cache_dir!r}, "
        f"val_tokens={train_data_cfg.val_tokens})\n"
    )
    results = tmp_path / "results"
    args = ["run", "--config", str(config), "--results", str(results), "--no-progress", "--run-id", "arm"]
    assert main([*args, "--set", "steps=2"]) == 0
    assert "run arm: completed" in capsys.readouterr().out
    import db

    assert db.connect(results).execute("SELECT qk_norm, steps, last_step FROM runs").fetchall() == [("rmsnorm", 2, 2)]


def test_config_file_must_define_a_model(tmp_path, capsys):
    config = tmp_path / "empty.py"
    config.write_text("train = None\n")
    assert main(["run", "--config", str(config), "--results", str(tmp_path)]) == 2
    assert "defines no `model`" in capsys.readouterr().err


@pytest.mark.parametrize(
    "source, message",
    [
        ("x = (\n", "line 1: SyntaxError: '(' was never closed"),
        ("import math\nmodel = math.sqrt(-1)\n", "line 2: ValueError: math domain error"),
        ("from harness.config import ModelConfig\nmodel = ModelConfig(d_model=-1)\n",
         "ModelConfig.d_model=-1 is invalid"),
    ],
)
def test_config_file_that_fails_is_one_line_and_exit_2(tmp_path, capsys, source, message):
    config = tmp_path / "broken.py"
    config.write_text(source)
    assert main(["run", "--config", str(config), "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness run: error:") and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "options, message",
    [
        (["--beams", "2", "--top-k", "5"], "--beams=2 runs beam search, which does not sample: drop --top-k"),
        (["--beams", "3", "--temperature", "0.5"], "drop --temperature"),
        (["--temperature", "0", "--top-p", "0.9"], "--temperature=0 decodes greedily, which ignores --top-p"),
    ],
)
def test_sample_refuses_options_its_decoding_would_ignore(tmp_path, capsys, options, message):
    assert main(["sample", "some-run", "--prompt", "x", "--results", str(tmp_path), *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness sample: error:") and message in err


def test_sample_refuses_a_run_id_that_is_a_path(tmp_path, capsys):
    assert main(["sample", "../elsewhere", "--prompt", "x", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("harness sample: error: RUN_ID:")


@pytest.mark.slow
def test_resume_refuses_other_configs_than_the_checkpoint(tiny_args, capsys, monkeypatch):
    from harness.train.divergence import DivergenceMonitor

    class Crash(Exception):
        pass

    def crash_at_step_3(self, trainer, *args):
        if trainer.global_step == 3:
            raise Crash  # after the step-2 checkpoint

    args = [*tiny_args, "--run-id", "arm", "--set", "checkpoint_every=2"]
    monkeypatch.setattr(DivergenceMonitor, "on_train_batch_end", crash_at_step_3)
    with pytest.raises(Crash):
        main(args)
    monkeypatch.undo()
    capsys.readouterr()
    assert main([*args, "--resume", "--set", "lr=0.5"]) == 2
    assert "was trained with other configs (lr=0.001→0.5)" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 0
    assert "run arm: completed" in capsys.readouterr().out


@pytest.mark.slow
def test_sample_refuses_a_run_whose_weights_are_nan(tiny_args, tmp_path, capsys):
    assert main([*tiny_args, "--run-id", "nan", "--set", "lr=1e6", "--set", "warmup_steps=0"]) == 0
    assert "nan: diverged at step" in capsys.readouterr().out
    assert main(["sample", "nan", "--prompt", "x", "--results", str(tmp_path / "results")]) == 2
    assert "non-finite weights" in capsys.readouterr().err
