"""Percentiles of control scores, as ``contam calibrate`` takes thresholds from known-clean text."""

from __future__ import annotations

import math

import numpy as np

from contam_cli.stats.combination import Scores, as_floats

__all__ = ["percentile"]


def percentile(values: Scores, q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation, NaN left out.

    Interpolates between the two nearest ranks as numpy's default ``linear`` method does. No value
    (or only NaN) gives NaN; ``q`` outside [0, 100] raises ``ValueError``.

    >>> percentile([1, 2, 3, 4], 0), percentile([1, 2, 3, 4], 100), percentile([0, 10], 50)
    (1.0, 4.0, 5.0)
    >>> percentile([1.0, float("nan"), 3.0], 50)
    2.0
    >>> percentile([], 50)
    nan
    >>> percentile([-1e308, 1e308], 25)
    -5e+307
    """
    try:
        q_ok = 0.0 <= float(q) <= 100.0
    except (TypeError, ValueError):
        q_ok = False
    if not q_ok:
        raise ValueError(f"a percentile must lie between 0 and 100, got {q!r}")
    x = as_floats(values)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan
    with np.errstate(over="ignore", invalid="ignore"):
        out = float(np.percentile(x, float(q), method="linear"))
    if not math.isfinite(out) and np.isfinite(x).all():
        # NOTE: numpy interpolates as a + (b - a)·t, and b - a overflows between values of
        # opposite signs beyond half the largest float (the 25th percentile of -1e308 and 1e308
        # came out +inf); halved, exactly, the difference fits.
        out = 2.0 * float(np.percentile(x * 0.5, float(q), method="linear"))
    return out
