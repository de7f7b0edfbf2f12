"""Scores relative to a known-clean control set: percentiles and the controls' statistics.

A model-based score has no meaning on its own: the Min-K% of a text depends on the model, its
tokenizer and the kind of text as much as on membership. Text known not to be in the training
data (written after the model's cutoff, say) tells what a clean score looks like *for this
model on this kind of text*; each example's score is then read as a percentile of that
distribution.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from contam_cli.report import CONTROL_SUFFIX, Direction
from contam_cli.stats import orient, percentile

__all__ = ["CONTROL_SUFFIX", "PERCENTILES", "control_percentiles", "control_stats"]

PERCENTILES = (50, 90, 99)


def control_percentiles(values: Any, controls: Any, direction: Direction) -> np.ndarray:
    """Per value: the share (0-100) of the control scores it is more suspicious than, ties
    counting half (the mid-rank); NaN for a missing value, and everywhere when no control has a
    score.

    >>> control_percentiles([3.0, 1.0, float("nan")], [1.0, 2.0], "higher").tolist()
    [100.0, 25.0, nan]
    >>> control_percentiles([3.0], [1.0, 2.0], "lower").tolist()
    [0.0]
    """
    c = np.sort(_known(orient(controls, direction)))
    x = orient(values, direction)
    if c.size == 0:
        return np.full(x.shape, np.nan)
    below = np.searchsorted(c, x, side="left")
    upto = np.searchsorted(c, x, side="right")
    pct = 100.0 * (below + upto) / (2 * c.size)
    return np.where(np.isnan(x), np.nan, pct)


def control_stats(controls: Any, direction: Direction) -> dict[str, Any]:
    """The controls' ``n``, ``mean``, ``sd`` (population), and ``percentiles`` 50/90/99
    oriented by ``direction``: percentile q is the score that q% of the controls are no more
    suspicious than (for a lower-is-suspicious method, the raw (100 - q)th percentile), so a
    threshold at p99 flags about 1% of clean text.

    >>> control_stats([1.0, 2.0, 3.0, float("nan")], "lower")["percentiles"]["90"]
    1.2
    """
    raw = _known(np.asarray(controls, dtype=np.float64))
    if raw.size == 0:
        nothing = {str(q): None for q in PERCENTILES}
        return {"n": 0, "mean": None, "sd": None, "percentiles": nothing}
    qs = {str(q): q if direction == "higher" else 100 - q for q in PERCENTILES}
    # NOTE: infinite scores are kept as ±FLOAT_MAX, whose sums overflow: no finite summary.
    with np.errstate(over="ignore", invalid="ignore"):
        mean, sd = float(raw.mean()), float(raw.std())
        cuts = {k: _value(percentile(raw, q)) for k, q in qs.items()}
    return {"n": int(raw.size), "mean": _value(mean), "sd": _value(sd), "percentiles": cuts}


def _known(values: np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64).ravel()
    return arr[~np.isnan(arr)]


def _value(x: float) -> float | None:
    """A statistic as strict JSON holds it (an infinite mean is None: no finite summary)."""
    return x if math.isfinite(x) else None
