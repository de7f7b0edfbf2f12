"""Ranking quality against labels: Mann-Whitney AUC, its bootstrap interval, and the ROC curve.

AUC is the probability that a random contaminated example scores above a random clean one, a tie
counting one half. Scores are taken as given (orient them first, see ``combine.orient``); NaN scores
are left out, and a class with no scored example gives ``None`` rather than a number.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from contam_cli.stats.combination import Scores, as_floats
from contam_cli.stats.resample import block_rows, check_bootstrap, percentile_interval

__all__ = ["auc", "auc_from_labels", "bootstrap_auc_interval", "roc_curve"]


def auc(positive_scores: Scores, negative_scores: Scores) -> float | None:
    """P(positive > negative) + P(tie) / 2, from ranks in O(n log n); ``None`` if a class is empty.

    >>> auc([0.9, 0.8], [0.1, 0.2])
    1.0
    >>> auc([0.5, 0.5], [0.5])
    0.5
    >>> auc([0.3, float("nan")], []) is None
    True
    """
    pos = _scored(positive_scores)
    neg = _scored(negative_scores)
    if pos.size == 0 or neg.size == 0:
        return None
    twice_ranks = _twice_average_ranks(np.concatenate([pos, neg]))
    # NOTE: doubled ranks are integers (a tie group's mean rank is a half-integer), so U is exact.
    twice_u = int(twice_ranks[: pos.size].sum()) - pos.size * (pos.size + 1)
    return twice_u / (2 * pos.size * neg.size)


def auc_from_labels(scores: Scores, labels: ArrayLike) -> float | None:
    """AUC of ``scores`` with label 1 (or True) as the positive class.

    >>> auc_from_labels([90, 80, 20, 10], [0, 0, 1, 1])
    0.0
    >>> auc_from_labels([-90, -80, -20, -10], [0, 0, 1, 1])
    1.0
    """
    x, y = _scores_and_labels(scores, labels)
    return auc(x[y], x[~y])


def roc_curve(scores: Scores, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray] | None:
    """(fpr, tpr) at every distinct threshold, from (0, 0) to (1, 1); ``None`` if a class is empty.

    Examples with the same score enter together, as one (diagonal) step, so the area under the
    curve by the trapezoid rule equals ``auc``.

    >>> fpr, tpr = roc_curve([0.9, 0.5, 0.5, 0.1], [1, 1, 0, 0])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    """
    x, y = _scores_and_labels(scores, labels)
    keep = ~np.isnan(x)
    x, y = x[keep], y[keep]
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(-x, kind="stable")
    x, y = x[order], y[order]
    last_of_tie = np.flatnonzero(np.append(x[1:] != x[:-1], True))
    tp = np.cumsum(y)[last_of_tie]
    fp = (last_of_tie + 1) - tp
    fpr = np.concatenate([[0.0], fp / n_neg])
    tpr = np.concatenate([[0.0], tp / n_pos])
    return fpr, tpr


def bootstrap_auc_interval(
    scores: Scores,
    labels: ArrayLike,
    *,
    n: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the AUC, positives and negatives resampled separately.

    Stratified, so every resample keeps both classes at their sizes. ``None`` if a class is empty.

    >>> bootstrap_auc_interval([0.9, 0.8, 0.7, 0.1, 0.2, 0.3], [1, 1, 1, 0, 0, 0])
    (1.0, 1.0)
    """
    n = check_bootstrap(n, level)
    x, y = _scores_and_labels(scores, labels)
    keep = ~np.isnan(x)
    pos, neg = x[keep & y], x[keep & ~y]
    if pos.size == 0 or neg.size == 0:
        return None
    rng = np.random.default_rng(seed)
    uniq, neg_code = np.unique(neg, return_inverse=True)
    # NOTE: each positive's place among the distinct negative values (below it; below or equal) is
    # fixed, so one resample's wins are two lookups in its cumulative counts of negatives.
    below = np.searchsorted(uniq, pos, side="left")
    below_eq = np.searchsorted(uniq, pos, side="right")
    block = block_rows(n, max(pos.size, neg.size, uniq.size + 1))
    stats = np.empty(n)
    for start in range(0, n, block):
        rows = min(block, n - start)
        pos_idx = rng.integers(0, pos.size, size=(rows, pos.size))
        neg_idx = rng.integers(0, neg.size, size=(rows, neg.size))
        stats[start : start + rows] = _resampled_aucs(
            pos_idx, neg_code[neg_idx], below, below_eq, uniq.size
        )
    return percentile_interval(stats, level)


def _resampled_aucs(
    pos_idx: np.ndarray,
    neg_codes: np.ndarray,
    below: np.ndarray,
    below_eq: np.ndarray,
    n_uniq: int,
) -> np.ndarray:
    """AUC of each resample (row): negatives counted per distinct value, then looked up by rank."""
    rows, n_neg = neg_codes.shape
    offsets = (np.arange(rows) * n_uniq)[:, None]
    counts = np.bincount((neg_codes + offsets).ravel(), minlength=rows * n_uniq)
    cum = np.zeros((rows, n_uniq + 1), dtype=np.int64)
    np.cumsum(counts.reshape(rows, n_uniq), axis=1, out=cum[:, 1:])
    r = np.arange(rows)[:, None]
    twice_wins = cum[r, below[pos_idx]] + cum[r, below_eq[pos_idx]]
    return twice_wins.sum(axis=1) / (2.0 * pos_idx.shape[1] * n_neg)


def _scored(values: Scores) -> np.ndarray:
    x = as_floats(values)
    return x[~np.isnan(x)]


def _twice_average_ranks(x: np.ndarray) -> np.ndarray:
    """2 x the 1-based rank of each value, tied values sharing the mean rank of their group."""
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_x[1:] != sorted_x[:-1]]))
    ends = np.append(starts[1:], x.size)
    group = np.repeat(np.arange(starts.size), ends - starts)
    out = np.empty(x.size, dtype=np.int64)
    out[order] = (starts + ends + 1)[group]
    return out


def _scores_and_labels(scores: Scores, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = as_floats(scores)
    raw = np.asarray(labels)
    if raw.shape != x.shape:
        raise ValueError(f"{x.size} scores but labels of shape {raw.shape}")
    if raw.size and not np.isin(raw, [0, 1]).all():
        raise ValueError("labels must be 0/1 or booleans (1: contaminated)")
    return x, raw.astype(bool)
