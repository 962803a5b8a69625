"""What an array element asks SLURM for, read back from the sbatch script submitit writes: GPUs of a type, CPUs
per worker process, setup lines before the tasks, any other sbatch option passed through, the interpreter the
tasks run; malformed values are refused naming the option; and whether compute nodes can see the interpreter,
judged from mount tables (synthetic ones: the table is the truth the verdict is checked against)."""

import shlex

import pytest
from submitit.slurm.slurm import _make_sbatch_string

from errors import ConfigError
from experiments import Layout, SlurmLauncher, SlurmResources
from experiments.backends.slurm.interpreter import check_interpreter, read_mounts
from experiments.backends.slurm.resources import parse_sbatch
from harness.train.placement import Placement


def script(launcher) -> list[str]:
    return _make_sbatch_string(command="RUN", folder="/f", map_count=launcher.elements,
                               **launcher.parameters()).splitlines()


def test_the_script_holds_the_request_the_setup_lines_and_the_passed_options(tmp_path):
    resources = SlurmResources(gpus_per_element=4, gpu_type="a100", cpus_per_worker=6, mem="200G", time="2:00:00",
                               python="/shared/env/bin/python",
                               setup=("module load cuda/12.4", "source /shared/env/bin/activate"),
                               sbatch=tuple(parse_sbatch(["constraint=a100&ib", "--exclude=node[07-09]",
                                                          "exclusive"]).items()))
    launcher = SlurmLauncher(tmp_path, "s", layout=Layout(workers=4, placement=Placement(2)), resources=resources)
    lines = script(launcher)
    for line in ("#SBATCH --gpus-per-node=a100:4", "#SBATCH --ntasks-per-node=2", "#SBATCH --cpus-per-task=12",
                 "#SBATCH --mem=200G", "#SBATCH --time=120", "#SBATCH --array=0-1%2", "#SBATCH --constraint='a100&ib'",
                 "#SBATCH --exclude='node[07-09]'", "#SBATCH --exclusive"):
        assert line in lines, line
    setup = lines.index("# setup")
    assert lines[setup + 1: setup + 3] == ["module load cuda/12.4", "source /shared/env/bin/activate"]
    assert setup < next(i for i, line in enumerate(lines) if "RUN" in line)  # the setup runs before the tasks
    assert launcher.executor().python == shlex.quote("/shared/env/bin/python")


@pytest.mark.parametrize("make, message", [
    (lambda: parse_sbatch(["time=5"]), "--sbatch 'time=5': use --time."),
    (lambda: parse_sbatch(["gres=gpu:a100:1"]), "--sbatch 'gres=gpu:a100:1': use --gpus-per-element and --gpu-type."),
    (lambda: parse_sbatch(["cpus-per-task=4"]), "--sbatch 'cpus-per-task=4': use --cpus-per-worker."),
    (lambda: parse_sbatch(["array=0-3"]), "--sbatch 'array=0-3': use --workers and --array-parallelism."),
    (lambda: parse_sbatch(["output=x.log"]), "--sbatch 'output=x.log': --output is set by the backend"),
    (lambda: parse_sbatch(["constraint="]), "--sbatch 'constraint=' is invalid: use KEY=VALUE"),
    (lambda: parse_sbatch(["=a100"]), "--sbatch '=a100' is invalid"),
    (lambda: parse_sbatch(["no such=1"]), "--sbatch 'no such=1' is invalid"),
    (lambda: parse_sbatch(["constraint=a", "constraint=b"]), "--sbatch constraint is given twice: give it once."),
    (lambda: SlurmResources(setup=("",)), "--setup '' is invalid: one non-empty shell line per --setup"),
    (lambda: SlurmResources(setup=("module load a\nmodule load b",)),
     "--setup 'module load a\\nmodule load b' is invalid"),
    (lambda: SlurmResources(python=" "), "--python ' ' is invalid"),
    (lambda: SlurmResources(gpu_type="a100"), "--gpu-type 'a100' is invalid: a GPU type the cluster names (a100, h100) "
                                              "with --gpus-per-element ≥ 1."),
    (lambda: SlurmResources(gpus_per_element=1, gpu_type="a 100"), "--gpu-type 'a 100' is invalid"),
    (lambda: SlurmResources(gpus_per_element=-1), "--gpus-per-element -1 is invalid: must be an integer ≥ 0."),
    (lambda: SlurmResources(cpus_per_worker=0), "--cpus-per-worker 0 is invalid: must be an integer ≥ 1."),
    (lambda: SlurmResources(time="1h"), "--time '1h' is invalid"),
])
def test_malformed_requests_are_refused_naming_the_option(make, message):
    with pytest.raises(ConfigError) as refused:
        make()
    assert str(refused.value).startswith(message), str(refused.value)


def mountinfo(*mounts):
    """/proc/self/mountinfo lines for (mount point, filesystem type) pairs."""
    return "\n".join(f"{i} 1 0:{i} / {point} rw,relatime shared:{i} - {fstype} src{i} rw"
                     for i, (point, fstype) in enumerate(mounts, start=20))


CLUSTER = read_mounts(mountinfo(("/", "ext4"), ("/home", "nfs4"), ("/scratch", "lustre"), ("/tmp", "tmpfs"),
                                ("/opt/my\\040envs", "ext4")))


@pytest.mark.parametrize("python, results, verdict", [
    ("/scratch/me/env/bin/python", "/scratch/me/results", None),          # the results' own filesystem
    ("/home/me/venv/bin/python", "/scratch/me/results", None),            # another network filesystem
    ("python3", "/scratch/me/results", None),                             # a command: found on the node
    ("/usr/bin/python3", "/scratch/me/results/new", "refused"),           # local disk, results shared
    ("/opt/my envs/x/bin/python", "/scratch/me/results", "refused"),      # (an escaped mount point)
    ("/usr/bin/python3", "/tmp/results", "warned"),                       # both local: a one-node cluster?
])
def test_an_interpreter_the_nodes_cannot_see_is_refused(python, results, verdict):
    if verdict == "refused":
        with pytest.raises(ConfigError,
                           match=r"which compute nodes do not mount; they see the results directory's lustre"):
            check_interpreter(python, results, CLUSTER)
    elif verdict == "warned":
        assert "are on local disks: fine on a one-node cluster" in check_interpreter(python, results, CLUSTER)
    else:
        assert check_interpreter(python, results, CLUSTER) is None
    assert "no mount table here" in check_interpreter("/usr/bin/python3", "/scratch/r", mounts=[])
