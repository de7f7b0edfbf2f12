"""Flag rules: which measured examples count as contaminated, and why."""

from __future__ import annotations

from contam_cli.policy.rules import FlagPolicy, Reason, SourceThreshold, zscores

__all__ = ["FlagPolicy", "Reason", "SourceThreshold", "zscores"]
