"""The report's interactive figures: Plotly figures in the same offline page, drawn by the page's own script
from the sweep's per-run data (`payload`), so arms, LRs and seeds can be shown and hidden, the training curves
smoothed, and one run opened, without a server.

Python writes the data and the figures' JSON (no import of plotly's Python package: the page needs only
plotly.js, which it inlines from that package's files); `static/explore.js` draws them.
"""
