"""``contam report``: several detectors' scores joined by id, combined, measured against labels.

:func:`build_report` reads reports contam wrote and JSONL/CSV files of scores, joins them by
example id, z-scores each method (oriented by its direction), combines them into one weighted
score that flags, and, with labels, measures every method (AUC with a bootstrap interval,
precision at prevalence, review queue). The result is one :class:`~contam_cli.report.Report`.
"""

from __future__ import annotations

from contam_cli.errors import UsageError
from contam_cli.features.combine.build import (
    COMBINED_METHOD,
    build_report,
    normalization_disagreement,
)
from contam_cli.features.combine.join import Rename
from contam_cli.features.combine.labels import read_labels

__all__ = [
    "COMBINED_METHOD", "Rename", "build_report", "normalization_disagreement",
    "parse_direction", "read_labels",
]  # fmt: skip


def parse_direction(spec: str) -> tuple[str, str]:
    """``METHOD=higher|lower`` as ``(method, direction)``.

    >>> parse_direction("perplexity=lower")
    ('perplexity', 'lower')
    """
    name, sep, direction = spec.rpartition("=")
    direction = direction.strip().lower()
    if not sep or not name or direction not in ("higher", "lower"):
        raise UsageError(f"--direction expects METHOD=higher or METHOD=lower, got {spec!r}")
    return name, direction
