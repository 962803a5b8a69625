"""A reader process for the concurrency test: `python query_process.py RESULTS STOP_FILE`.

Reconnects and queries every view in a loop until STOP_FILE exists; exits 1 at the first failure and
prints how many query rounds succeeded.
"""

import os
import sys
import warnings

import db


def main() -> None:
    results, stop_file = sys.argv[1], sys.argv[2]
    warnings.simplefilter("error")  # a skipped shard would mean a reader saw a half-written file
    rounds = 0
    while not os.path.exists(stop_file):
        try:
            con = db.connect(results)
        except db.NoResultsError:
            continue  # no writer has opened its run yet
        con.sql("SELECT count(*) FROM metrics").fetchall()
        con.sql("SELECT run_id, status, last_step FROM runs").fetchall()
        con.close()
        rounds += 1
    print(f"rounds {rounds}", flush=True)


if __name__ == "__main__":
    main()
