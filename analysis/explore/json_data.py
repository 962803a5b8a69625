"""The page's data as JSON that is safe inside a <script> element: NaN and infinities as null, floats rounded."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

DIGITS = 6  # significant digits kept: loss differences of 1e-4 at 3 nats survive, the file stays small


def plain(value):
    """`value` with numpy and pandas scalars made Python ones, missing and non-finite numbers None, floats rounded."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return [plain(v) for v in list(value)]
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return float(f"{value:.{DIGITS}g}") if math.isfinite(value) else None
    return value


def script_json(value) -> str:
    """JSON text for a `<script type="application/json">` element (no `</` that would end the element)."""
    return json.dumps(plain(value), separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
