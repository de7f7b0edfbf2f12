"""Flag rules: which measured examples count as contaminated, and why."""

from __future__ import annotations

from contam_cli.policy.rules import FlagPolicy, SourceThreshold
from contam_cli.report.values import Reason

__all__ = ["FlagPolicy", "Reason", "SourceThreshold"]
