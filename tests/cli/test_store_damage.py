"""The damage matrix (issue 24, item 3): every kind of store file, truncated and garbled, under every command that
reads it. The store holds two planned sweeps, 'hurt' (whose file is damaged) and 'whole'. Each case checks the
command's outcome on 'hurt' (refused in one line naming the file, or a warning line naming it, or the file named in
its output, or the very answer of the undamaged store when the command does not need the file), that no command
raises (a traceback), that 'whole' answers exactly as before, and that `harness db check` names the file.
"""

from __future__ import annotations

import re
import shutil
import sys
import threading
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

import db
from cli.main import main
from db.compact import compact
from harness.config.model import ModelConfig
from harness.model import build_model
from harness.train.checkpoints import CONFIGS_KEY, LAST, TOKENIZER, checkpoint_dir

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("error::db.CorruptShardWarning")]  # none may leak raw

HURT, WHOLE = "hurt", "whole"
ARMS = {"base": 0.0, "rms": -0.1}


def run_of(sweep: str) -> str:
    """The run whose files are damaged (in 'hurt'), and its counterpart in 'whole': arm rms, seed 1."""
    return f"{sweep}-rms-1"


FILES = {  # file kind → its path in the store, for sweep 'hurt'
    "plan": "sweeps/hurt/cells.parquet",
    "sweep meta": "sweeps/hurt/sweep.json",
    "manifest": f"runs/{run_of(HURT)}/manifest/s0000.parquet",
    "status": f"runs/{run_of(HURT)}/status/s0000.parquet",
    "metrics": f"runs/{run_of(HURT)}/metrics/s0000-000000.parquet",
    "layer metrics": f"runs/{run_of(HURT)}/layer_metrics/s0000-000001.parquet",
    "index": "index/manifest.parquet",
    "checkpoint": f"checkpoints/{run_of(HURT)}/{LAST}",
}


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def garble(path: Path) -> None:
    """Flip bits (XOR 0x5A) in place, length and magic bytes kept: in a Parquet file, over the bytes of its largest
    column chunk (page header and data); in any other file, over its second quarter."""
    data = bytearray(path.read_bytes())
    if path.suffix == ".parquet":
        meta = pq.read_metadata(path)
        chunks = [meta.row_group(g).column(c) for g in range(meta.num_row_groups) for c in range(meta.num_columns)]
        chunk = max(chunks, key=lambda c: c.total_compressed_size)
        start = chunk.dictionary_page_offset or chunk.data_page_offset
        span = range(start, start + chunk.total_compressed_size)
    else:
        span = range(len(data) // 4, len(data) // 2)
    for i in span:
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


DAMAGE = {"truncated": truncate, "garbled": garble}

# What a command does with the damaged file of sweep 'hurt':
REFUSES = "refuses"  # exit 2, one line on stderr naming the file, nothing on stdout
WARNS = "warns"  # exit 0, a warning line on stderr naming the file
NAMES = "names"  # exit 0, the file named in the output itself
SAME = "same"  # exit 0, exactly the undamaged store's answer (the command does not need the file)
CHECK = "check"  # exit 1, a line of `harness db check` starting with the file's path

COMMANDS = ["db check", "db runs", "db query", "sweeps", "compare", "summary", "report", "sweep --status", "dashboard",
            "sample"]
RUN_DAMAGE = (CHECK, WARNS, WARNS, WARNS, REFUSES, REFUSES, REFUSES, NAMES, NAMES, SAME)
EXPECTED = {  # (file kind, damage) → the outcome of each command, in the order of COMMANDS
    **{(kind, damage): (CHECK, WARNS, WARNS, WARNS, REFUSES, REFUSES, REFUSES, REFUSES, NAMES, SAME)
       for kind in ("plan", "sweep meta") for damage in DAMAGE},
    **{(kind, damage): RUN_DAMAGE for kind in ("manifest", "status") for damage in DAMAGE},
    ("metrics", "truncated"): RUN_DAMAGE,
    # Damage inside a data shard's pages is found when a query decodes them (db runs and db query read the losses;
    # compare, summary and report too; the dashboard's index for its verdict column, which names the file), or by
    # db check; listing statuses reads none of them.
    ("metrics", "garbled"): (CHECK, WARNS, WARNS, SAME, REFUSES, REFUSES, REFUSES, SAME, NAMES, SAME),
    # Only summary and report read layer metrics: the damage is found there, mid-analysis.
    ("layer metrics", "truncated"): RUN_DAMAGE,
    ("layer metrics", "garbled"): (CHECK, SAME, SAME, SAME, SAME, REFUSES, REFUSES, SAME, SAME, SAME),
    # A damaged index is ignored (the shards are the truth); the db commands say so.
    **{("index", damage): (CHECK, WARNS, WARNS, SAME, SAME, SAME, SAME, SAME, SAME, SAME) for damage in DAMAGE},
    **{("checkpoint", damage): (CHECK, *[SAME] * 8, REFUSES) for damage in DAMAGE},
}
CASES = [(kind, damage, command, outcome) for (kind, damage), outcomes in EXPECTED.items()
         for command, outcome in zip(COMMANDS, outcomes)]


def _checkpoint(results: Path, run_id: str, vocab_size: int, tokenizer) -> None:
    """A checkpoint as Lightning writes one (model under `model.`, configs beside it), and the run's tokenizer."""
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=vocab_size, d_model=32, n_layers=1, n_heads=2)
    folder = checkpoint_dir(results, run_id)
    folder.mkdir(parents=True)
    state = {f"model.{name}": value for name, value in build_model(cfg).state_dict().items()}
    torch.save({"global_step": 1, "state_dict": state, CONFIGS_KEY: {"model": cfg.to_dict()}}, folder / LAST)
    tokenizer.save(str(folder / TOKENIZER))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, train_data) -> Path:
    """Sweeps 'hurt' and 'whole' (2 arms × 3 seeds, planned, finished), each with one checkpointed run; compacted,
    so the store has its catalog index."""
    results = tmp_path_factory.mktemp("pristine") / "results"
    for sweep in (HURT, WHOLE):
        cells = []
        for arm, effect in ARMS.items():
            for seed in range(3):
                run_id = f"{sweep}-{arm}-{seed}"
                synthetic.write_run(results, run_id, sweep=sweep, arm=arm, seed=seed, lr=1e-3,
                                    final=3.0 + effect + 0.01 * seed, steps=20)
                cells.append({"arm": arm, "lr": 1e-3, "seed": seed, "run_id": run_id, "steps": 20})
        db.write_sweep(results, sweep, {"question": f"does rms help in {sweep}?", "baseline": "base"}, cells)
        _checkpoint(results, run_of(sweep), train_data.vocab_size, train_data.tokenizer)
    compact(results)
    return results


@pytest.fixture
def store(pristine, tmp_path):
    """`store(kind, damage)`: a fresh copy of the pristine store with that file damaged. A copy per command: like a
    process of its own, it knows nothing another command found (readers remember damage per file path)."""
    copies = iter(range(100))

    def make(kind: str, damage: str) -> Path:
        copy = tmp_path / f"copy{next(copies)}" / "results"
        shutil.copytree(pristine, copy, symlinks=True)
        DAMAGE[damage](copy / FILES[kind])
        return copy

    return make


def _dashboard_index(results: Path) -> tuple[int, str, str]:
    """The dashboard's index page, over HTTP from its real server in this process."""
    from analysis.report.dashboard import make_dashboard

    server = make_dashboard(results, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/") as reply:
            return (0 if reply.status == 200 else reply.status), reply.read().decode(), ""
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _argv(command: str, results: Path, sweep: str, out: Path) -> list[str]:
    where = ["--results", str(results)]
    return {
        "db check": ["db", "check", *where],
        "db runs": ["db", "runs", "--format", "csv", *where],
        "db query": ["db", "query", "select c.arm, c.seed, c.status, r.final_val_loss from sweep_cells c left join "
                     f"runs r using (run_id) where c.sweep = '{sweep}' order by all", "--format", "csv", *where],
        "sweeps": ["sweeps", *where],
        "compare": ["compare", sweep, "--format", "csv", *where],
        "summary": ["summary", sweep, "--format", "csv", *where],
        "report": ["report", sweep, "--out", str(out), *where],
        "sweep --status": ["sweep", sweep, "--status", *where],
        "sample": ["sample", run_of(sweep), "--prompt", "The", "--max-new-tokens", "4", "--temperature", "0", *where],
    }[command]


def store_wide(command: str) -> bool:
    """Whether the command answers for the whole store (`about` picks out each sweep's part of its answer)."""
    where, out = Path("results"), Path("out.html")
    return command == "dashboard" or _argv(command, where, HURT, out) == _argv(command, where, WHOLE, out)


def run(command: str, results: Path, sweep: str, capsys, tmp_path) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one command on `sweep`; an exception escaping it fails the test (a traceback)."""
    capsys.readouterr()
    if command == "dashboard":
        code, stdout, stderr = _dashboard_index(results)
    else:
        out = tmp_path / f"{sweep}.html"
        code = main(_argv(command, results, sweep, out))
        stdout, stderr = capsys.readouterr()
        if command == "report" and code == 0:  # the page, but for the time it was generated
            stdout = re.sub(r"Generated [0-9-]+ [0-9:]+ UTC", "Generated", out.read_text())
    return code, stdout.replace(str(results), "RESULTS"), stderr


_answers: dict[tuple[str, str], tuple[int, str, str]] = {}


def undamaged(command: str, pristine: Path, sweep: str, capsys, tmp_path) -> tuple[int, str, str]:
    if (command, sweep) not in _answers:
        _answers[command, sweep] = run(command, pristine, sweep, capsys, tmp_path)
    return _answers[command, sweep]


def about(output: str, sweep: str, command: str) -> str:
    """The part of a store-wide answer that is about `sweep` (its lines, or its row of the dashboard's index)."""
    if command == "dashboard":
        return "".join(re.findall(rf'<tr data-sweep="{sweep}">.*?</tr>', output))
    if command == "db check":  # its findings about the sweep's files
        return "\n".join(line for line in output.splitlines() if f"/{sweep}" in line)
    if command in ("db runs", "sweeps"):
        return "\n".join(line for line in output.splitlines() if line.startswith(sweep) or f",{sweep}," in line)
    return output


@pytest.mark.parametrize("kind, damage, command, outcome", CASES, ids=[f"{k}-{d}-{c}" for k, d, c, _ in CASES])
def test_damage_is_named_contained_and_never_changes_an_answer(kind, damage, command, outcome, store, pristine,
                                                               capsys, tmp_path):
    named = FILES[kind]
    code, out, err = run(command, store(kind, damage), HURT, capsys, tmp_path)
    assert "Traceback" not in out + err
    if outcome == REFUSES:
        assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1 and named in err, err
    elif outcome == WARNS:
        assert code == 0 and any(line.split(": warning: ")[1:] and named in line for line in err.splitlines()), err
    elif outcome == NAMES:
        assert code == 0 and named in out, out
    elif outcome == SAME:
        assert (code, out) == undamaged(command, pristine, HURT, capsys, tmp_path)[:2]
    else:
        assert code == 1 and any(line.startswith(f"{named}: ") for line in out.splitlines()), out
    # a store-wide command is given no sweep: on a fresh copy it would print the same answer again
    other = (code, out, err) if store_wide(command) else run(command, store(kind, damage), WHOLE, capsys, tmp_path)
    before = undamaged(command, pristine, WHOLE, capsys, tmp_path)
    assert "Traceback" not in other[1] + other[2]
    assert about(other[1], WHOLE, command) == about(before[1], WHOLE, command)
    assert other[0] == (1 if command == "db check" else before[0])  # db check: the store has damage, not 'whole
