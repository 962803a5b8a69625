"""analysis: SQL views → tidy frames → statistics → seaborn figures → one self-contained HTML report.

    import analysis
    analysis.write_report("results", "qk")            # <results>/sweeps/qk/report.html, rewritten atomically

Never imports torch. The command line: `harness compare`, `harness plot`, `harness report` (docs/analysis.md).
"""

__all__ = ["write_report"]


def __getattr__(name: str):
    # Lazily: the report pulls in scipy, pandas and matplotlib; `harness compare` reads the store while
    # scipy.stats imports in another thread, which an eager import here would serialize.
    if name == "write_report":
        from analysis.report import write_report

        return write_report
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
