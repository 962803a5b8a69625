"""The SLURM backend: a stored sweep plan runs as a submitit job array whose tasks run the claim loop
(`experiments.backends.slurm.task`). Submitting returns the job ids; progress is read from the results store, never
from SLURM's accounting (which may be off). See docs/cluster.md.

    from experiments import SlurmLauncher
    launcher = SlurmLauncher("results", "qk-stability", workers=8, partition="gpu", gpus_per_task=1,
                             tasks_per_gpu=4, time="4:00:00")
    launcher.check()              # sbatch present, partition known: a ConfigError otherwise
    jobs = launcher.submit()      # the plan must be stored (`harness sweep --backend slurm` does both)
    launcher.follow(jobs)         # the live display until every cell is finished
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from harness.config.base import ConfigError
from experiments.workers.progress import DEFAULT_STALE_AFTER
from experiments.backends.slurm.logs import failed_cell_log, slurm_dir

# Time-limit requeues allowed per element (preemptions do not count): a sweep longer than --time is meant to
# run as a chain of short allocations; the chain ends by itself when no cell is left.
MAX_TIMEOUT_REQUEUES = 1000
FOLLOW_EVERY = 1.0
QUEUE_EVERY = 10.0  # squeue is asked this rarely: a cluster's controller serves everyone
_TIME = re.compile(r"^(?:(?P<days>\d+)-)?(?P<rest>\d+(?::\d+){0,2})$")


def parse_time(value: str | int) -> int:
    """A SLURM time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) → whole minutes (≥ 1), the
    unit submitit needs to tell a time-out from a preemption."""
    text = str(value).strip()
    match = _TIME.match(text)
    if match is None:
        raise ConfigError(f"--time {value!r} is invalid: use minutes, HH:MM:SS or D-HH:MM:SS (SLURM's formats).")
    parts = [int(p) for p in match.group("rest").split(":")]
    if match.group("days") is not None:  # D-HH, D-HH:MM, D-HH:MM:SS
        hours, minutes, seconds = (parts + [0, 0])[:3]
    else:  # MM, MM:SS, HH:MM:SS
        hours, minutes, seconds = (0, parts[0], 0) if len(parts) == 1 else (0, *parts) if len(parts) == 2 else parts
    total = int(match.group("days") or 0) * 1440 + hours * 60 + minutes + seconds / 60
    if total < 1:
        raise ConfigError(f"--time {value!r} is invalid: at least one minute.")
    return int(-(-total // 1))


def _positive(name: str, value: int | None, minimum: int = 1) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise ConfigError(f"--{name.replace('_', '-')} {value!r} is invalid: must be an integer ≥ {minimum}.")


class SlurmLauncher:
    """Submit a stored sweep plan as a job array of `workers` elements. Each element holds `gpus_per_task`
    GPUs and runs `tasks_per_gpu` workers on each (that many on its CPUs when gpus_per_task is 0), each with
    `cpus_per_task` CPUs; `mem`, `time`, `account`, `qos`, `partition` are SLURM's; `array_parallelism`
    caps the elements running at once."""

    def __init__(self, results_dir: Path, sweep: str, *, workers: int = 1, partition: str | None = None,
                 gpus_per_task: int = 0, cpus_per_task: int | None = None, mem: str | None = None,
                 time: str | int = "1:00:00", account: str | None = None, qos: str | None = None,
                 array_parallelism: int | None = None, tasks_per_gpu: int = 1, retries: int = 1,
                 stale_after: float = DEFAULT_STALE_AFTER, worker_args: Sequence[str] = ()) -> None:
        for name, value, minimum in (("workers", workers, 1), ("gpus_per_task", gpus_per_task, 0),
                                     ("cpus_per_task", cpus_per_task, 1), ("array_parallelism", array_parallelism, 1),
                                     ("tasks_per_gpu", tasks_per_gpu, 1)):
            _positive(name, value, minimum)
        if mem is not None and not re.match(r"^\d+[KMGT]?$", str(mem)):
            raise ConfigError(f"--mem {mem!r} is invalid: SLURM's form, e.g. 16G or 16000 (MB).")
        self.results_dir, self.sweep = Path(results_dir), sweep
        self.workers, self.partition, self.gpus, self.tasks_per_gpu = workers, partition, gpus_per_task, tasks_per_gpu
        self.cpus, self.mem, self.account, self.qos = cpus_per_task, mem, account, qos
        self.array_parallelism, self.time_min = array_parallelism, parse_time(time)
        self.retries, self.stale_after, self.worker_args = retries, stale_after, tuple(worker_args)

    @property
    def tasks_per_element(self) -> int:
        """Workers (SLURM tasks) in one array element: K per GPU (K on an element without GPUs)."""
        return max(1, self.gpus) * self.tasks_per_gpu

    def check(self) -> None:
        """What SLURM can refuse, asked before anything is written or submitted: sbatch is on PATH, the
        partition exists (in SLURM's words when it does not) and sbatch would take the array."""
        for tool in ("sbatch", "srun", "scontrol"):
            if shutil.which(tool) is None:
                raise ConfigError(f"--backend slurm needs SLURM's {tool} on PATH; it is not there (is this a SLURM "
                                  "login node? `module load slurm`?).")
        if self.partition is not None:
            answer = subprocess.run(["scontrol", "show", "partition", "-o", self.partition], capture_output=True,
                                    text=True, timeout=60)
            if answer.returncode != 0 or not answer.stdout.strip():
                said = (answer.stdout + answer.stderr).strip().splitlines()
                raise ConfigError(_unreachable(said) or f"--partition {self.partition}: SLURM says "
                                  f"{said[0] if said else 'no such partition'!r}; partitions here: "
                                  f"{', '.join(_partitions()) or 'none listed'}.")
        self.test_submission()

    def parameters(self) -> dict:
        """The array's resources in submitit's words (no sbatch text of ours)."""
        parameters = dict(job_name=f"harness-{self.sweep}", time=self.time_min, nodes=1,
                          ntasks_per_node=self.tasks_per_element, cpus_per_task=self.cpus,
                          gpus_per_node=self.gpus or None, mem=self.mem, partition=self.partition,
                          account=self.account, qos=self.qos, array_parallelism=self.array_parallelism)
        return {k: v for k, v in parameters.items() if v is not None}

    def executor(self):
        """The submitit executor with this launcher's resources."""
        import submitit

        executor = submitit.SlurmExecutor(folder=slurm_dir(self.results_dir), max_num_timeout=MAX_TIMEOUT_REQUEUES)
        executor.update_parameters(**self.parameters())
        return executor

    def test_submission(self) -> None:
        """Ask sbatch whether it would take this array (`sbatch --test-only` on the script submitit would write,
        in a temporary folder), so a request SLURM refuses fails before anything is written or left in slurm/."""
        import tempfile

        from submitit.slurm.slurm import _make_sbatch_string

        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder) / "test.sh"
            script.write_text(_make_sbatch_string(command="true", folder=folder, map_count=self.workers, **self.parameters()))
            answer = subprocess.run(["sbatch", "--test-only", str(script)], capture_output=True, text=True, timeout=60)
        if answer.returncode != 0:
            said = [line.strip() for line in (answer.stderr + answer.stdout).splitlines() if line.strip()]
            raise ConfigError(_unreachable(said) or f"sbatch refused the job: {said[-1] if said else 'no reason given'}")

    def submit(self) -> list[str]:
        """Submit the array; its job ids (`ID_I` per element, or `ID` for one)."""
        from submitit.core.utils import FailedJobError, FailedSubmissionError

        from experiments.backends.slurm.task import SweepTask

        task = SweepTask(self.results_dir, self.sweep, tasks_per_gpu=self.tasks_per_gpu, retries=self.retries,
                         stale_after=self.stale_after, worker_args=self.worker_args)
        executor = self.executor()
        folder = slurm_dir(self.results_dir)
        before = set(os.listdir(folder)) if folder.is_dir() else set()
        try:
            with executor.batch():  # one array of identical elements: SLURM's environment tells them apart
                jobs = [executor.submit(task) for _ in range(self.workers)]
        except (FailedJobError, FailedSubmissionError) as error:
            for name in set(os.listdir(folder)) - before:  # the refused submission's script and pickles
                (folder / name).unlink(missing_ok=True)
            lines = [line.strip() for line in str(error).splitlines() if "error" in line.lower()]
            raise ConfigError(f"sbatch refused the job: {lines[-1] if lines else str(error).strip()}") from None
        return [job.job_id for job in jobs]

    def follow(self, job_ids: Sequence[str], progress: bool = True, report=None) -> int:
        """Show the live display until every cell is finished (0; 1 when some failed), or until the jobs left
        the queue with cells unfinished (3, naming them). Ctrl-C stops following only; the jobs keep running."""
        from db import sweep_dir
        from db.compact import compact
        from experiments.workers.live_report import LiveReport
        from experiments.backends.local import LiveDisplay
        from experiments.workers.progress import ProgressReader, exit_code, left_lines, render

        reader = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after)
        display, started, asked = LiveDisplay(progress), time.monotonic(), 0.0
        live = LiveReport(report, sweep_dir(self.results_dir, self.sweep) / "logs" / "report.log")
        live.start()
        last_done = None
        try:
            while True:
                state = reader.read()
                display.show(render(self.sweep, state, time.monotonic() - started))
                if last_done is not None and state.done != last_done:
                    live.cell_finished()
                last_done = state.done
                if state.done == state.total:
                    break
                if time.monotonic() - asked > QUEUE_EVERY:
                    asked = time.monotonic()
                    if not queued(job_ids):
                        state = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after).read()
                        if state.done == state.total:
                            break  # the last cell finished between the read above and the queue's answer
                        print(f"sweep {self.sweep}: the jobs left the queue with {state.total - state.done} cells "
                              f"unfinished; logs under {slurm_dir(self.results_dir)}/", file=sys.stderr)
                        print("\n".join(left_lines(state)), file=sys.stderr)
                        live.close()
                        return exit_code(state)
                time.sleep(FOLLOW_EVERY)
        except KeyboardInterrupt:
            live.abandon()
            print(f"\nstopped following; the jobs keep running (cancel: scancel {_array_ids(job_ids)})", file=sys.stderr)
            return 130
        state = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after).read()  # the truth now
        live.settle()  # no rewrite reads the store while it is compacted
        compact(self.results_dir)
        live.close()
        if live.error:
            print(f"sweep {self.sweep}: the report could not be written: {live.error}", file=sys.stderr)
        for cell in state.failed_cells:
            print(f"  failed: cell {cell.index} {cell.label} ({cell.run_id}); log {failed_cell_log(self.results_dir, cell.run_id)}",
                  file=sys.stderr)
        return exit_code(state)


def _array_ids(job_ids: Sequence[str]) -> str:
    return " ".join(sorted({job_id.split("_")[0] for job_id in job_ids}))


def queued(job_ids: Sequence[str]) -> bool:
    """Whether any of the jobs is still pending or running (squeue; a job SLURM forgot is not)."""
    answer = subprocess.run(["squeue", "-h", "-o", "%i", "-j", ",".join(sorted({j.split("_")[0] for j in job_ids}))],
                            capture_output=True, text=True, timeout=60)
    return answer.returncode == 0 and bool(answer.stdout.strip())


def _unreachable(said: Sequence[str]) -> str | None:
    """The error for a controller SLURM's tools cannot reach (not the request's fault), or None."""
    cause = next((line for line in said if "contact slurm controller" in line.lower() or "connection refused" in line.lower()), None)
    if cause is None:
        return None
    return (f"SLURM's controller cannot be reached ({cause}); is slurmctld running, and does SLURM_CONF point at "
            "this cluster's slurm.conf?")


def _partitions() -> list[str]:
    answer = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, timeout=60)
    return sorted(set(answer.stdout.split())) if answer.returncode == 0 else []
