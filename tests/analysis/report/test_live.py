"""The report process's reading of its runner's lines: a burst is one rewrite, the end of input ends it."""

import os
import threading

from analysis.report.live import requests


def test_lines_waiting_together_are_one_request_and_end_of_input_ends():
    read, write = os.pipe()
    os.write(write, b"cell\ncell\ncell\n")
    answers = requests(read)
    assert next(answers) == 3
    threading.Timer(0.2, lambda: (os.write(write, b"cell\n"), os.close(write))).start()
    assert list(answers) == [1]
    os.close(read)


def test_at_end_of_input_a_page_with_cells_left_and_none_training_is_drawn_as_interrupted(tmp_path):
    import io

    import db
    import synthetic
    from analysis.report.live import serve

    synthetic.write_run(tmp_path, "d0", sweep="cut", arm="base", seed=0, lr=1e-3, final=3.0, steps=12)
    db.write_sweep(tmp_path, "cut", {}, [{"arm": "base", "lr": 1e-3, "seed": s, "run_id": f"d{s}"} for s in range(2)])
    read, write = os.pipe()
    os.write(write, b"cell\n")
    os.close(write)  # the runner has ended with a cell that never started
    answers = io.StringIO()
    serve(str(tmp_path), "cut", fd=read, answers=answers)
    os.close(read)
    assert answers.getvalue() == "wrote 1 partial\n"  # while the runner was there, the page said the sweep runs
    page = (tmp_path / "sweeps" / "cut" / "report.html").read_text()
    assert 'class="status interrupted"' in page and 'data-reload="' not in page
