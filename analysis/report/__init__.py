"""The HTML report and live dashboard of a sweep: `write_report`, and `serve` for `harness report --serve`."""

from analysis.report.write import write_report

__all__ = ["write_report"]
