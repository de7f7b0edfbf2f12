"""The measurements of ``contam report``: combined scores, AUCs against labels, deployment rows.

Everything here is :mod:`contam_cli.stats` applied to the joined columns; nothing is computed in
another way. Per method: oriented by its direction, z-scored over the examples it scored; the
combined score is the weighted mean of those z-scores (6 decimals, as the report writes z-scores).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.errors import UsageError
from contam_cli.features.combine.join import COMBINED
from contam_cli.report import Method
from contam_cli.stats import (
    auc_from_labels,
    auc_weights,
    bootstrap_auc_interval,
    combine,
    orient,
    precision_at_prevalence,
    review_queue_size,
    zscores,
)

__all__ = [
    "Deployment",
    "Measured",
    "auc_entries",
    "combined_scores",
    "deployment_rows",
    "measure",
    "method_weights",
]


@dataclass(frozen=True, slots=True)
class Deployment:
    """Where the detector would be used: the base rate of contamination and the queue size."""

    prevalence: float
    documents: float


def oriented_z(values: np.ndarray, direction: str) -> np.ndarray:
    """z-scores of a method's scores turned so that higher is more suspicious.

    >>> oriented_z(np.array([90.0, 10.0]), "lower").tolist()
    [-1.0, 1.0]
    """
    return zscores(orient(values, direction))


def method_weights(
    methods: Sequence[Method],
    aucs: Mapping[str, float | None] | None,
    derived: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """Equal weights summing to 1, or, given AUCs, max(0, AUC - 0.5) normalized. A method in
    `derived` (a monotone transform of another method: a probe's ``X:control_pct``) gets weight
    0: it would be a second vote of the method it comes from."""
    voting = [m for m in methods if m.name not in derived]
    if aucs is None:
        return {m.name: 1.0 / len(voting) if m.name not in derived else 0.0 for m in methods}
    try:
        return auc_weights(
            {m.name: aucs[m.name] if m.name not in derived else None for m in methods}
        )
    except ValueError as e:
        raise UsageError(f"--weight-by-auc: {e}") from None


def combined_scores(
    scores: Mapping[str, np.ndarray], methods: Sequence[Method], weights: Mapping[str, float]
) -> np.ndarray:
    """The combined score per example (NaN where no weighted method scored it), 6 decimals."""
    directions = {m.name: m.direction for m in methods}
    values = combine({m.name: scores[m.name] for m in methods}, directions, weights)
    # NOTE: + 0.0 turns the -0.0 of rounding into 0.0, so the JSON never reads -0.0.
    return np.round(values, 6) + 0.0


def auc_entries(
    oriented: Mapping[str, np.ndarray],
    labels: np.ndarray,
    *,
    bootstrap: int,
    seed: int,
) -> dict[str, dict[str, float | None]]:
    """Per method: Mann-Whitney AUC of its oriented scores against `labels` (-1: unlabelled)
    and the seeded, stratified 95% bootstrap interval."""
    known = labels >= 0
    y = labels[known]
    out = {}
    for name, values in oriented.items():
        x = values[known]
        value = auc_from_labels(x, y)
        interval = bootstrap_auc_interval(x, y, n=bootstrap, seed=seed)
        low, high = (None, None) if interval is None else interval
        out[name] = {"auc": value, "auc_low": low, "auc_high": high}
    return out


def deployment_rows(
    flagged: Mapping[str, np.ndarray], labels: np.ndarray, deployment: Deployment
) -> list[dict[str, Any]]:
    """Per method (given which examples its rule flags): recall and FPR among the labelled
    examples, precision at the prevalence, and the review queue for the documents."""
    known = labels >= 0
    positive, negative = labels == 1, labels == 0
    rows = []
    for name, mask in flagged.items():
        row: dict[str, Any] = {"method": name}
        recall = float(mask[positive].mean()) if positive.any() else None
        fpr = float(mask[negative].mean()) if negative.any() else None
        row.update(recall=recall, fpr=fpr)
        if recall is None or fpr is None or not known.any():
            row.update(precision=None, flagged=None, true=None, false=None, missed=None)
        else:
            q = review_queue_size(deployment.documents, recall, fpr, deployment.prevalence)
            row.update(
                precision=precision_at_prevalence(recall, fpr, deployment.prevalence),
                flagged=q.flagged,
                true=q.true,
                false=q.false,
                missed=q.missed,
            )
        rows.append(row)
    return rows


@dataclass(frozen=True, eq=False)
class Measured:
    """What the statistics make of the joined scores."""

    weights: dict[str, float]
    combined: np.ndarray
    flagged: np.ndarray
    aucs: dict[str, dict[str, float | None]] | None
    """Per method and ``combined``: auc, auc_low, auc_high (None without labels)."""
    rows: list[dict[str, Any]] | None
    """The deployment rows (None without a prevalence)."""


def measure(
    flat: Sequence[Method],
    scores: Mapping[str, np.ndarray],
    label_of: np.ndarray | None,
    weight_by_auc: bool,
    threshold: float,
    deployment: Deployment | None,
    *,
    bootstrap: int,
    seed: int,
    derived: frozenset[str] = frozenset(),
) -> Measured:
    """Weights (by AUC when asked, from `label_of`: -1 unlabelled), the combined score and its
    flags, every AUC with its interval, and the deployment rows when a deployment is given."""
    aucs = None
    if label_of is not None:
        oriented = {m.name: orient(scores[m.name], m.direction) for m in flat}
        aucs = auc_entries(oriented, label_of, bootstrap=bootstrap, seed=seed)
    by_auc = {k: v["auc"] for k, v in aucs.items()} if aucs and weight_by_auc else None
    weights = method_weights(flat, by_auc, derived)
    combined = combined_scores(scores, flat, weights)
    flagged = np.nan_to_num(combined, nan=-np.inf) >= threshold
    if aucs is not None and label_of is not None:
        aucs.update(auc_entries({COMBINED: combined}, label_of, bootstrap=bootstrap, seed=seed))
    rows = None
    if deployment is not None and label_of is not None:
        rule = {m.name: oriented_z(scores[m.name], m.direction) >= threshold for m in flat}
        rows = deployment_rows({**rule, COMBINED: flagged}, label_of, deployment)
    return Measured(weights, combined, flagged, aucs, rows)
