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
