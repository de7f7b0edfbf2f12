"""Resampling for ``contam impact``: bootstrap intervals of means and differences, and a
permutation test of flagged against clean examples.

Every function is seeded (``np.random.default_rng(seed)``) and vectorized: resamples are drawn as
index matrices, a block of rows at a time so memory stays bounded however large the sample. The
intervals are percentile intervals: the central ``level`` share of the resampled statistics, with
numpy's linear quantiles. NaN values are left out; a sample with nothing left gives ``None``.

A sample of few distinct values (0/1 accuracies, graded scores) is resampled through its counts
instead: a bootstrap resample of m values is a multinomial draw of how often each distinct value
comes up, and a random relabelling of k of them a multivariate hypergeometric one. Both are the
same distributions as drawing indices, exactly, at a cost that does not grow with m (10,000
resamples of 100,000 accuracies take milliseconds, not minutes).
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
_MAX_DISTINCT = 1024
"""A sample with at most this many distinct values (and fewer than its size) is resampled through
its counts."""


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
    return percentile_interval(_resampled_means(x, n, rng), level)


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
    return percentile_interval(_resampled_means(xa, n, rng) - _resampled_means(xb, n, rng), level)


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
    # NOTE: (value, clean) pairs are the categories: a value that is clean and one that is not
    # are different pairs even when equal.
    values, counts = np.unique(np.stack([x, mask.astype(float)]), axis=1, return_counts=True)
    if _few(values.shape[1], x.size):
        drawn = rng.multinomial(x.size, counts / x.size, size=n)
        clean = values[1] == 1.0
        n_clean = drawn[:, clean].sum(axis=1)
        has = n_clean > 0
        full_mean = drawn[has] @ values[0] / x.size
        clean_mean = drawn[has][:, clean] @ values[0][clean] / n_clean[has]
        stats = full_mean - clean_mean
        return percentile_interval(stats, level) if stats.size else None
    parts = []
    for rows in _blocks(n, x.size):
        idx = rng.integers(0, x.size, size=(rows, x.size))
        drawn_x, clean_x = x[idx], mask[idx]
        n_clean = clean_x.sum(axis=1)
        has = n_clean > 0
        clean_mean = np.where(clean_x, drawn_x, 0.0)[has].sum(axis=1) / n_clean[has]
        parts.append(drawn_x[has].mean(axis=1) - clean_mean)
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
    # It is relative to the values' scale only: an absolute floor would make every relabelling of
    # values around 1e-12 a tie (p = 1 whatever the difference).
    observed = flagged.sum()
    tol = 1e-9 * float(np.abs(pooled).sum())
    rng = np.random.default_rng(seed)
    values, counts = np.unique(pooled, return_counts=True)
    if _few(values.size, pooled.size):
        # NOTE: how many of each distinct value the k relabelled "flagged" ones hold.
        sums = rng.multivariate_hypergeometric(counts, k, size=n) @ values
    else:
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


def _few(distinct: int, size: int) -> bool:
    """Whether a sample of ``size`` values, ``distinct`` of them different, is resampled through
    its counts."""
    return distinct <= _MAX_DISTINCT and distinct < size


def _resampled_means(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """The means of ``n`` bootstrap resamples of ``x`` (its counts when it has few values)."""
    values, counts = np.unique(x, return_counts=True)
    if _few(values.size, x.size):
        return rng.multinomial(x.size, counts / x.size, size=n) @ values / x.size
    return np.concatenate(
        [
            x[rng.integers(0, x.size, size=(rows, x.size))].mean(axis=1)
            for rows in _blocks(n, x.size)
        ]
    )


def _known(values: Scores) -> np.ndarray:
    x = as_floats(values)
    return x[~np.isnan(x)]
