"""``contam impact``: how much contamination moved a score (clean versus full, with intervals)."""

from __future__ import annotations

from contam_cli.features.impact.compute import impact
from contam_cli.features.impact.levels import DEFAULT_LEVELS, parse_levels
from contam_cli.features.impact.results import ID_FIELDS, SCORE_FIELDS, Outcomes, read_outcomes
from contam_cli.features.impact.values import (
    Difference,
    Group,
    Impact,
    Level,
    LevelResult,
    MatchBy,
    Matching,
    Metric,
    Split,
    Subgroup,
)

__all__ = [
    "DEFAULT_LEVELS",
    "ID_FIELDS",
    "SCORE_FIELDS",
    "Difference",
    "Group",
    "Impact",
    "Level",
    "LevelResult",
    "MatchBy",
    "Matching",
    "Metric",
    "Outcomes",
    "Split",
    "Subgroup",
    "impact",
    "parse_levels",
    "read_outcomes",
]
