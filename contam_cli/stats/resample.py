"""Resampling for ``contam impact``: bootstrap intervals of means and differences, and a
permutation test of flagged against clean examples.

Every function is seeded (``np.random.default_rng(seed)``) and vectorized: resamples are drawn as
index matrices, a block of rows at a time so memory stays bounded however large the sample. The
intervals are percentile intervals: the central ``level`` share of the resampled statistics, with
numpy's linear quantiles. NaN values are left out; a sample with nothing left gives ``None``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from contam_cli.stats.combination import Scores, as_floats

__all__ = [
    "bootstrap_difference_interval",
    "bootstrap_full_minus_clean",
    "bootstrap_mean_interval",
    "permutation_test",
]

Alternative = Literal["greater", "less", "two-sided"]

_BLOCK = 1000
"""Resamples drawn at a time, at most."""
_MAX_CELLS = 1 << 21
"""Cells of one block's index matrix, at most (16 MiB of int64)."""


def bootstrap_mean_interval(
    values: Scores, *, n: int = 10_000, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values``.

    >>> bootstrap_mean_interval([0.5, 0.5, 0.5])
    (0.5, 0.5)
    >>> bootstrap_mean_interval([]) is None
    True
    """
    n = check_bootstrap(n, level)
    x = _known(values)
    if x.size == 0:
        return None
    rng = np.random.default_rng(seed)
    stats = np.concatenate(
        [
            x[rng.integers(0, x.size, size=(rows, x.size))].mean(axis=1)
            for rows in _blocks(n, x.size)
        ]
    )
    return percentile_interval(stats, level)


def bootstrap_difference_interval(
    a: Scores, b: Scores, *, n: int = 10_000, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of mean(a) - mean(b), two independent samples resampled apart.

    >>> bootstrap_difference_interval([1.0, 1.0], [0.25, 0.25])
    (0.75, 0.75)
    """
    n = check_bootstrap(n, level)
    xa, xb = _known(a), _known(b)
    if xa.size == 0 or xb.size == 0:
        return None
    rng = np.random.default_rng(seed)
    parts = []
    for rows in _blocks(n, max(xa.size, xb.size)):
        mean_a = xa[rng.integers(0, xa.size, size=(rows, xa.size))].mean(axis=1)
        mean_b = xb[rng.integers(0, xb.size, size=(rows, xb.size))].mean(axis=1)
        parts.append(mean_a - mean_b)
    return percentile_interval(np.concatenate(parts), level)


def bootstrap_full_minus_clean(
    values: Scores,
    clean_mask: ArrayLike,
    *,
    n: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of mean(all values) - mean(values where ``clean_mask``).

    Paired: each resample draws examples once and computes both means from the same draw. A
    resample that happens to hold no clean example has no clean mean and is left out. ``None`` when
    there is no clean example (or no value at all).

    >>> bootstrap_full_minus_clean([1.0, 1.0, 1.0], [False, True, True])
    (0.0, 0.0)
    """
    n = check_bootstrap(n, level)
    x = as_floats(values)
    mask = np.asarray(clean_mask, dtype=bool)
    if mask.shape != x.shape:
        raise ValueError(f"{x.size} values but a clean mask of shape {mask.shape}")
    keep = ~np.isnan(x)
    x, mask = x[keep], mask[keep]
    if not mask.any():
        return None
    rng = np.random.default_rng(seed)
    parts = []
    for rows in _blocks(n, x.size):
        idx = rng.integers(0, x.size, size=(rows, x.size))
        drawn, clean = x[idx], mask[idx]
        n_clean = clean.sum(axis=1)
        has = n_clean > 0
        clean_mean = np.where(clean, drawn, 0.0)[has].sum(axis=1) / n_clean[has]
        parts.append(drawn[has].mean(axis=1) - clean_mean)
    stats = np.concatenate(parts)
    return percentile_interval(stats, level) if stats.size else None


def permutation_test(
    flagged_values: Scores,
    clean_values: Scores,
    *,
    n: int = 10_000,
    seed: int = 0,
    alternative: Alternative = "greater",
) -> float | None:
    """p-value for mean(flagged) - mean(clean) under random relabelling, (count + 1) / (n + 1).

    ``greater``: flagged examples score higher than clean ones; ``less``: lower; ``two-sided``:
    twice the smaller one-sided p-value, at most 1. ``None`` if either group is empty.

    >>> p = permutation_test([1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0], n=999)
    >>> 0.0 < p < 0.05
    True
    """
    n = check_resamples(n)
    if alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be greater, less or two-sided, not {alternative!r}")
    flagged, clean = _known(flagged_values), _known(clean_values)
    if flagged.size == 0 or clean.size == 0:
        return None
    pooled = np.concatenate([flagged, clean])
    k = flagged.size
    # NOTE: with the group sizes fixed, the difference of means rises with the flagged group's sum,
    # so sums are compared; the tolerance absorbs summation-order rounding between equal subsets.
    observed = flagged.sum()
    tol = 1e-9 * max(1.0, float(np.abs(pooled).sum()))
    rng = np.random.default_rng(seed)
    sums = np.concatenate(
        [
            rng.permuted(np.tile(pooled, (rows, 1)), axis=1)[:, :k].sum(axis=1)
            for rows in _blocks(n, pooled.size)
        ]
    )
    p_greater = (int((sums >= observed - tol).sum()) + 1) / (n + 1)
    p_less = (int((sums <= observed + tol).sum()) + 1) / (n + 1)
    if alternative == "greater":
        return p_greater
    if alternative == "less":
        return p_less
    return min(1.0, 2.0 * min(p_greater, p_less))


def check_resamples(n: int) -> int:
    """``n`` as an int; a resample count that is not a positive integer raises ``ValueError``."""
    try:
        ok = int(n) == n and n >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"the number of resamples must be a positive integer, got {n!r}")
    return int(n)


def check_bootstrap(n: int, level: float) -> int:
    """``check_resamples(n)``, and a confidence level strictly between 0 and 1."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie strictly between 0 and 1, got {level}")
    return check_resamples(n)


def percentile_interval(stats: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` share of resampled statistics, with numpy's linear quantiles.

    >>> percentile_interval(np.arange(101.0), 0.5)
    (25.0, 75.0)
    """
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(stats, [tail, 1.0 - tail])
    return float(low), float(high)


def block_rows(n: int, width: int) -> int:
    """Resamples to draw at once when each is ``width`` indices wide.

    >>> block_rows(10_000, 80), block_rows(10_000, 100_000), block_rows(5, 10)
    (1000, 20, 5)
    """
    return max(1, min(int(n), _BLOCK, _MAX_CELLS // max(1, width)))


def _blocks(n: int, width: int) -> list[int]:
    """Row counts of the successive blocks that make up ``n`` resamples."""
    block = block_rows(n, width)
    return [min(block, n - start) for start in range(0, n, block)]


def _known(values: Scores) -> np.ndarray:
    x = as_floats(values)
    return x[~np.isnan(x)]
