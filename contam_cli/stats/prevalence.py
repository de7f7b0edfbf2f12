"""The deployment view of a detector: precision at a base rate, and the review queue it produces.

False-positive rate divides by the clean set and so flatters a detector on a corpus that is almost
entirely clean; what a reviewer meets is precision at the real prevalence p:
p * recall / (p * recall + (1 - p) * FPR).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ReviewQueue", "precision_at_prevalence", "review_queue_size"]


@dataclass(frozen=True, slots=True)
class ReviewQueue:
    """Expected outcome of sweeping ``documents`` documents (expected counts, not rounded)."""

    flagged: float
    """Documents flagged: true + false."""
    true: float
    """Flagged documents that are contaminated."""
    false: float
    """Flagged documents that are clean."""
    missed: float
    """Contaminated documents not flagged."""
    precision: float | None
    """true / flagged; ``None`` when nothing is flagged."""


def precision_at_prevalence(recall: float, fpr: float, prevalence: float) -> float | None:
    """Share of flagged documents that are contaminated at base rate ``prevalence``.

    ``None`` when nothing would be flagged (0 / 0). Each argument must be a rate in [0, 1].

    >>> round(precision_at_prevalence(0.945, 0.457, 0.01), 7)
    0.0204599
    >>> precision_at_prevalence(0.40, 0.0, 0.01)
    1.0
    >>> precision_at_prevalence(0.0, 0.0, 0.01) is None
    True
    """
    _check_rate("recall", recall)
    _check_rate("false-positive rate", fpr)
    _check_rate("prevalence", prevalence)
    true = prevalence * recall
    flagged = true + (1.0 - prevalence) * fpr
    return true / flagged if flagged > 0.0 else None


def review_queue_size(
    documents: float, recall: float, fpr: float, prevalence: float
) -> ReviewQueue:
    """Expected flagged, true, false and missed counts among ``documents`` at ``prevalence``.

    >>> q = review_queue_size(10_000, 0.945, 0.457, 0.01)
    >>> [round(v, 6) for v in (q.flagged, q.true, q.false, q.missed)]
    [4618.8, 94.5, 4524.3, 5.5]
    """
    if not (math.isfinite(documents) and documents >= 0.0):
        raise ValueError(f"the number of documents must be a non-negative number, got {documents}")
    precision = precision_at_prevalence(recall, fpr, prevalence)
    contaminated = documents * prevalence
    true = contaminated * recall
    false = (documents - contaminated) * fpr
    return ReviewQueue(
        flagged=true + false,
        true=true,
        false=false,
        missed=contaminated - true,
        precision=precision,
    )


def _check_rate(name: str, value: float) -> None:
    try:
        ok = 0.0 <= float(value) <= 1.0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a rate between 0 and 1, got {value!r}")
