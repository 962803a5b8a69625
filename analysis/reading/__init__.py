"""Reading a sweep: its runs from the store's views, and what a finished run's result is.

    source    a sweep's runs and progress (`sweep_cells`, `sweeps`), without pandas
    frames    tidy pandas frames of one sweep, each with the SQL behind it
    outcomes  a finished run's outcome on a metric (completed, or diverged), as SQL
    cells     what a comparison is computed from: the metric, min_effect, the finished cells (no store, no scipy)
    finished  the finished cells read from the store and checked (metric, baseline, progress)

No module here imports scipy, and this file imports nothing: `harness compare` reads the cells in a child process
that must not pay for scipy (docs/analysis.md).
"""
