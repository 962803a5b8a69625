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
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
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
    # result() after the block, as documented: called inside it, an answer that lands before the call abandons the
    # block, and result() is never reached (7 runs in 3,000 on two loaded cores; CI saw one).
    assert _run("""
        def refuse():
            raise ConfigError(f"no sweep named 'kq' (child {os.getpid() != parent})")
        with Forked(refuse, expected=(ConfigError,)) as job:
            pass
        try:
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
    # `harness compare` on an unknown sweep: the message must not wait for the seconds of scipy's import. The child
    # answers once the block has begun (an answer that comes sooner lets the block run: the test below); work that
    # is not cut short ends after its 600 s and says so.
    assert _run("""
        import time
        begun, begin = os.pipe()
        def refuse():
            os.read(begun, 1)
            raise ConfigError("no sweep named 'kq'")
        finished = False
        with Forked(refuse, expected=(ConfigError,)) as job:
            os.write(begin, b"!")
            time.sleep(600)  # the slow work, abandoned when the child's answer is an error
            finished = True
        try:
            job.result()
        except ConfigError as error:
            print(error, finished)
    """) == "no sweep named 'kq' False"


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


def test_an_answer_before_the_block_begins_is_raised_by_result_not_by_the_with():
    # The window between fork() and the block, held open: the parent waits in it until the child has answered
    # (signalled, then exited; WNOWAIT leaves it to be reaped). The block cannot be skipped, so it runs.
    assert _run("""
        fork = os.fork
        def fork_then_wait_for_the_answer():
            pid = fork()
            if pid:
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            return pid
        os.fork = fork_then_wait_for_the_answer
        def refuse():
            raise ConfigError("no sweep named 'kq'")
        ran = False
        with Forked(refuse, expected=(ConfigError,)) as job:
            ran = True
        try:
            job.result()
        except ConfigError as error:
            print(error, ran)
    """) == "no sweep named 'kq' True"


def test_an_answer_handled_as_exit_begins_is_left_to_result():
    # A signal that arrives after the block's last call is handled as __exit__ begins, with __exit__'s frame: a
    # profiler stops the process there and runs the handler as Python would.
    assert _run("""
        import signal, sys
        def at_exit(frame, event, arg):
            if event == "call" and frame.f_code is Forked.__exit__.__code__:
                sys.setprofile(None)
                job._on_answer(signal.SIGUSR1, frame)
        with Forked(os.getpid) as job:
            sys.setprofile(at_exit)
        print(job.result() != parent)
    """) == "True"
