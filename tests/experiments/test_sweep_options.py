"""Every bad value of `harness sweep`'s worker, device and cluster options is one line and exit 2, before anything
is written (no SLURM needed: these are refused before SLURM is asked), and the old spellings whose commands
would now be misread are refused naming the new ones."""

import pytest


@pytest.mark.parametrize("extra, message", [
    (["--devices-per-cell", "0"], "--devices-per-cell 0 is invalid: must be an integer ≥ 1."),
    (["--devices-per-cell", "3"], "--devices-per-cell 3 does not divide TrainConfig.batch_size=4 of arm base: each "
                                  "device trains an equal share of the batch; use one of 1, 2, 4"),
    (["--devices-per-cell", "2", "--strategy", "dpp"],
     "--strategy 'dpp' is invalid: use ddp or fsdp; did you mean 'ddp'?"),
    (["--devices-per-cell", "2", "--workers-per-device", "2"],
     "--workers-per-device 2 and --devices-per-cell 2: a cell "
                                                               "on several devices does not share them; give one."),
    (["--workers", "0"], "--workers 0 is invalid: must be an integer ≥ 1."),
    (["--tasks-per-gpu", "4"], "--tasks-per-gpu is now --workers-per-device, and --workers counts workers in all"),
    (["--gpus-per-task", "1"], "--gpus-per-task is now --gpus-per-element, and --workers counts workers in all"),
    (["--gpus-per-element", "1"], "--gpus-per-element needs --backend slurm."),
    (["--setup", "module load cuda"], "--setup needs --backend slurm."),
    (["--sbatch", "constraint=a100"], "--sbatch needs --backend slurm."),
    (["--python", "python3"], "--python needs --backend slurm."),
    (["--backend", "slurm", "--workers", "3", "--workers-per-device", "2"],
     "--workers 3 is not a multiple of the 2 workers an array element holds (--workers-per-device 2 on its CPUs): use "
     "2 or 4."),
    (["--backend", "slurm", "--gpus-per-element", "3", "--devices-per-cell", "2"],
     "--gpus-per-element 3 is not a multiple of --devices-per-cell 2"),
    (["--backend", "slurm", "--gpu-type", "h100"], "--gpu-type 'h100' is invalid"),
    (["--backend", "slurm", "--cpus-per-worker", "0"], "--cpus-per-worker 0 is invalid"),
    (["--backend", "slurm", "--sbatch", "time=10"], "--sbatch 'time=10': use --time."),
    (["--backend", "slurm", "--sbatch", "nodes=2"], "--sbatch 'nodes=2': --nodes is set by the backend"),
    (["--backend", "slurm", "--sbatch", "=x"], "--sbatch '=x' is invalid: use KEY=VALUE"),
    (["--backend", "slurm", "--setup", " "], "--setup ' ' is invalid: one non-empty shell line per --setup"),
    (["--backend", "slurm", "--python", ""], "--python '' is invalid"),
    (["--follow", "--status"], "--follow and --status: give one."),
    (["--follow"], "--follow: no sweep 't' in"),
])
def test_a_bad_option_is_one_line_and_exit_2_before_anything_is_written(tmp_path, ablation_file, capsys, extra,
                                                                        message):
    from cli.main import main

    results = tmp_path / "results"
    code = main(["sweep", str(ablation_file()), "--results", str(results), "--no-report", *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("harness sweep: error: ") and err.count("\n") == 1, err
    assert message in err, err
    assert not (results / "sweeps").exists() and not (results / "slurm").exists()
