"""analysis: SQL views → tidy frames → statistics → seaborn figures → one self-contained HTML report.

    import analysis
    analysis.write_report("results", "qk")            # <results>/sweeps/qk/report.html, rewritten atomically

Never imports torch. The command line: `harness compare`, `harness plot`, `harness report` (docs/analysis.md).
"""

from analysis.report import write_report

__all__ = ["write_report"]
