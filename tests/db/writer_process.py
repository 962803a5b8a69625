"""A writer process for the concurrency and crash tests.

`python writer_process.py RESULTS RUN_ID ROWS FLUSH_ROWS` logs ROWS `loss` rows (one per step) and closes;
with `--forever` it logs without end (so a SIGKILL lands mid-write), never closing. Either way it prints
`flushed <rows>` after each flush, so a test knows the least the store must hold.
"""

import itertools
import sys

import db


def main() -> None:
    results, run_id, rows, flush_rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    forever = "--forever" in sys.argv
    writer = db.RunWriter.open(results, run_id, sweep="stress", arm="a", seed=0, flush_rows=flush_rows,
                               flush_seconds=3600)
    for step in itertools.count() if forever else range(rows):
        writer.log_metrics(step, {"loss": float(step)})
        if writer.pending_rows == 0:
            print(f"flushed {step + 1}", flush=True)
    writer.close()


if __name__ == "__main__":
    main()
