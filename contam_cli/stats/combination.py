"""Combining detectors: orient each method's scores, z-score them, and take a weighted mean.

A method's scores only mean something relative to each other, so each method is standardized over
the examples it scored (population standard deviation, nulls left out) after it has been oriented so
that higher is always more suspicious. The combined score of an example is the weighted mean of the
z-scores of the methods that scored it; with labels, ``auc_weights`` gives a method a vote in
proportion to how far its AUC is above chance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Direction", "Scores", "auc_weights", "combine", "orient", "zscores"]

Scores: TypeAlias = "ArrayLike | Sequence[float | None]"
"""One score per example: an array, or a list where ``None`` is a null (unscored) example."""


class Direction(str, Enum):
    """Which way a method's score is more suspicious (perplexity: ``lower``)."""

    # NOTE: upper-case members: a member named ``lower`` would hide ``str.lower``.
    HIGHER = "higher"
    LOWER = "lower"


def as_floats(values: Scores) -> np.ndarray:
    """A 1-D float64 copy of ``values``; ``None`` becomes NaN (a null score).

    >>> as_floats([1, None, 2.5]).tolist()
    [1.0, nan, 2.5]
    """
    out = np.array(values, dtype=np.float64)
    if out.ndim != 1:
        raise ValueError(f"expected a 1-D array of scores, got shape {out.shape}")
    return out


def orient(values: Scores, direction: Direction | str) -> np.ndarray:
    """Scores turned so that higher is more suspicious (negated for ``lower``); NaN stays NaN.

    >>> orient([90.0, 10.0], "lower").tolist()
    [-90.0, -10.0]
    >>> orient([0.1, 0.9], Direction.HIGHER).tolist()
    [0.1, 0.9]
    """
    x = as_floats(values)
    return -x if Direction(direction) is Direction.LOWER else x


def zscores(values: Scores) -> np.ndarray:
    """Population z-scores over the non-null values; NaN stays NaN.

    Fewer than two non-null values, or no spread among them, gives 0 for each non-null value.
    Infinite scores cannot be standardized and raise ``ValueError``.

    >>> zscores([1.0, 2.0, 3.0]).round(4).tolist()
    [-1.2247, 0.0, 1.2247]
    >>> zscores([5.0, None, 5.0]).tolist()
    [0.0, nan, 0.0]
    """
    x = as_floats(values)
    out = np.full(x.shape, np.nan)
    known = ~np.isnan(x)
    vals = x[known]
    if np.isinf(vals).any():
        raise ValueError("scores must be finite numbers or null to be z-scored")
    out[known] = 0.0
    # NOTE: an exact-equality test, not std == 0: the mean of [0.1, 0.1, 0.1] is off by one ulp,
    # which would otherwise turn rounding error into z-scores of -1.
    if vals.size < 2 or vals.min() == vals.max():
        return out
    # NOTE: scaled by powers of two (exact) to below 1, so squares neither overflow nor underflow,
    # and centred twice (the corrected two-pass algorithm), so the mean comes out 0 to rounding.
    centred = _unit_scale(vals)
    centred = _unit_scale(centred - centred.mean())
    centred -= centred.mean()
    out[known] = centred / math.sqrt(float(np.mean(centred * centred)))
    return out


def _unit_scale(x: np.ndarray) -> np.ndarray:
    """``x`` times the power of two that brings its largest magnitude into [0.5, 1)."""
    _, exponent = np.frexp(np.abs(x).max())
    return np.ldexp(x, -int(exponent))


def combine(
    method_values: Mapping[str, Scores],
    directions: Mapping[str, Direction | str],
    weights: Mapping[str, float] | None = None,
) -> np.ndarray:
    """Per example, the weighted mean of the oriented z-scores of the methods that scored it.

    Every method must score the same examples in the same order (NaN where it could not). A method
    missing from ``directions`` counts as ``higher``; ``weights`` (default: equal) must name every
    method. An example that no method with a positive weight scored gets NaN.

    >>> combine({"a": [1, 2, 3], "ppl": [30, 20, None]}, {"ppl": "lower"}).round(4).tolist()
    [-1.1124, 0.5, 1.2247]
    """
    if not method_values:
        raise ValueError("no method scores to combine")
    names = list(method_values)
    oriented = [orient(method_values[m], directions.get(m, "higher")) for m in names]
    sizes = {m: x.size for m, x in zip(names, oriented)}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"methods scored different numbers of examples: {sizes}")
    z = np.vstack([zscores(x) for x in oriented])
    w = _weight_column(names, weights)
    scored = ~np.isnan(z)
    total = (np.where(scored, z, 0.0) * w).sum(axis=0)
    weight = (scored * w).sum(axis=0)
    out = np.full(z.shape[1], np.nan)
    np.divide(total, weight, out=out, where=weight > 0)
    return out


def _weight_column(names: list[str], weights: Mapping[str, float] | None) -> np.ndarray:
    if weights is None:
        return np.ones((len(names), 1))
    missing = [m for m in names if m not in weights]
    if missing:
        raise ValueError(f"no weight given for method(s): {', '.join(missing)}")
    w = np.array([float(weights[m]) for m in names]).reshape(-1, 1)
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("method weights must be finite and non-negative")
    return w


def auc_weights(aucs: Mapping[str, float | None]) -> dict[str, float]:
    """Weights max(0, AUC - 0.5), normalized to sum 1: a method at or below chance gets no vote.

    A method without an AUC (``None`` or NaN: a class was empty) gets weight 0. Raises
    ``ValueError`` when no method is above chance, since nothing is left to combine.

    >>> weights = auc_weights({"good": 0.9, "ok": 0.6, "noise": 0.3, "unknown": None})
    >>> {name: round(w, 6) for name, w in weights.items()}
    {'good': 0.8, 'ok': 0.2, 'noise': 0.0, 'unknown': 0.0}
    """
    raw: dict[str, float] = {}
    for name, value in aucs.items():
        if value is None or math.isnan(value):
            raw[name] = 0.0
            continue
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"AUC of {name!r} is {value}, outside [0, 1]")
        raw[name] = max(0.0, float(value) - 0.5)
    total = sum(raw.values())
    if total <= 0.0:
        raise ValueError("no method separates the labels better than chance (every AUC <= 0.5)")
    return {name: v / total for name, v in raw.items()}
