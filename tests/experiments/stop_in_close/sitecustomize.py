"""Put on PYTHONPATH by tests/experiments/test_sweep_stalls.py: with $HARNESS_TEST_STOP_IN_CLOSE set to a file
path, the first sweep worker to close a segment with a result stops itself (SIGSTOP) inside `RunWriter.close`:
after its fence check, before its status is published, the moment of the late-status race. It writes
"<pid> <run_id>" to that file first (created exclusively: exactly one worker stops)."""

import os
import signal

MARKER = os.environ.get("HARNESS_TEST_STOP_IN_CLOSE")

if MARKER:
    import db.writer

    _close = db.writer.RunWriter.close

    def close(self, status="completed", **kwargs):
        if status == "completed":
            try:
                fd = os.open(MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, f"{os.getpid()} {self.run_id}".encode())
                os.close(fd)
                os.kill(os.getpid(), signal.SIGSTOP)
        return _close(self, status, **kwargs)

    db.writer.RunWriter.close = close
