"""Progress bars for the slow steps of data preparation, shown only when a step turns out to be slow."""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm

DELAY_S = 2.0  # a bar appears only once its step has run this long, so warm starts stay silent


def progress(iterable: Any = None, **options: Any) -> tqdm:
    """A tqdm bar on stderr that stays hidden for the first `DELAY_S` seconds and vanishes when done."""
    return tqdm(iterable, delay=DELAY_S, leave=False, **options)
