"""Pure statistics for report, bench, calibrate and impact: numpy only, no I/O, no printing."""

from __future__ import annotations

from contam_cli.stats.combination import Direction, Scores, auc_weights, combine, orient, zscores
from contam_cli.stats.percentile import percentile
from contam_cli.stats.prevalence import ReviewQueue, precision_at_prevalence, review_queue_size
from contam_cli.stats.resample import (
    bootstrap_difference_interval,
    bootstrap_full_minus_clean,
    bootstrap_mean_interval,
    permutation_test,
)
from contam_cli.stats.roc import auc, auc_from_labels, bootstrap_auc_interval, roc_curve

__all__ = [
    "Direction",
    "ReviewQueue",
    "Scores",
    "auc",
    "auc_from_labels",
    "auc_weights",
    "bootstrap_auc_interval",
    "bootstrap_difference_interval",
    "bootstrap_full_minus_clean",
    "bootstrap_mean_interval",
    "combine",
    "orient",
    "percentile",
    "permutation_test",
    "precision_at_prevalence",
    "review_queue_size",
    "roc_curve",
    "zscores",
]
