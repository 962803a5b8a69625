"""`Forked`: the function runs in a child and its value or user error comes back; anything else runs here.

Each case runs in a fresh interpreter, because `Forked` refuses to fork a process with other threads (and a
test session may have some)."""

import subprocess
import sys
import textwrap

PRELUDE = """
import os, threading
from cli.forked import Forked
from errors import ConfigError
parent = os.getpid()
"""


def _run(body: str) -> str:
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_value_comes_from_a_child_process_which_is_reaped():
    assert _run("""
        with Forked(os.getpid) as job:
            child = job.result()
        try:
            os.waitpid(child, 0)
            print("not reaped")
        except ChildProcessError:
            print(child != parent, "reaped")
    """) == "True reaped"


def test_an_expected_error_is_raised_here_with_its_message():
    assert _run("""
        def refuse():
            raise ConfigError(f"no sweep named 'kq' (child {os.getpid() != parent})")
        try:
            with Forked(refuse, expected=(ConfigError,)) as job:
                job.result()
        except ConfigError as error:
            print(error)
    """) == "no sweep named 'kq' (child True)"


def test_an_unexpected_failure_reruns_the_function_here():
    # In the child it raises a bug; here it answers: the caller sees this process's own outcome.
    assert _run("""
        def only_here():
            if os.getpid() != parent:
                raise KeyError("bug")
            return "here"
        with Forked(only_here, expected=(ConfigError,)) as job:
            print(job.result())
    """) == "here"


def test_a_child_that_dies_is_replaced_by_a_call_here():
    assert _run("""
        def die_there():
            if os.getpid() != parent:
                os._exit(9)
            return "here"
        with Forked(die_there) as job:
            print(job.result())
    """) == "here"


def test_with_other_threads_running_it_does_not_fork():
    assert _run("""
        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()
        with Forked(os.getpid) as job:
            print(job.pid is None, job.result() == parent)
        stop.set()
    """) == "True True"


def test_leaving_early_does_not_block_on_a_large_answer():
    # 1 MB does not fit in a pipe: the child would block on its write if nobody read or closed the pipe.
    assert _run("""
        try:
            with Forked(lambda: "x" * 1_000_000) as job:
                pid = job.pid
                raise RuntimeError("stop")
        except RuntimeError:
            pass
        try:
            os.waitpid(pid, 0)
            print("not reaped")
        except ChildProcessError:
            print("reaped")
    """) == "reaped"


def test_a_user_error_in_the_child_cuts_the_slow_work_short():
    # `harness compare` on an unknown sweep: the message must not wait for the seconds of scipy's import.
    assert _run("""
        import time
        def refuse():
            raise ConfigError("no sweep named 'kq'")
        started = time.monotonic()
        with Forked(refuse, expected=(ConfigError,)) as job:
            time.sleep(60)  # the slow work, abandoned when the child's answer is an error
        try:
            job.result()
        except ConfigError as error:
            print(error, time.monotonic() - started < 30)
    """) == "no sweep named 'kq' True"


def test_a_value_lets_the_slow_work_finish_and_is_read_after_the_block():
    assert _run("""
        import time
        with Forked(os.getpid) as job:
            time.sleep(0.5)
            finished = True
        child = job.result()
        try:
            os.waitpid(child, 0)
            print("not reaped")
        except ChildProcessError:
            print(finished, child != parent, "reaped")
    """) == "True True reaped"
