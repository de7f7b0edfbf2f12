"""Flag rules: which measured examples count as contaminated, and why."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from contam_cli.errors import UsageError
from contam_cli.report.values import Reason
from contam_cli.text import NormConfig

__all__ = ["FlagPolicy", "SourceThreshold"]


@dataclass(frozen=True, slots=True)
class SourceThreshold:
    """Per-source thresholds, measured on known-clean control text (``contam calibrate``) or set
    by hand: an example is flagged for the source when its run or overlap there reaches them."""

    longest_run: int | None = None
    overlap_fraction: float | None = None
    controls: int | None = None
    """Scorable control texts the thresholds were measured on (None: set by hand)."""
    well_estimated: bool = True
    """Enough controls for the percentile asked (a 99th percentile needs at least 100)."""

    def __post_init__(self) -> None:
        run, ov = self.longest_run, self.overlap_fraction
        if run is not None and (isinstance(run, bool) or not isinstance(run, int) or run < 1):
            raise UsageError(f"longest_run must be an integer >= 1, got {run!r}")
        if ov is not None and (
            isinstance(ov, bool) or not isinstance(ov, (int, float)) or not 0.0 <= ov <= 1.0
        ):
            raise UsageError(f"overlap_fraction must be a number in [0, 1], got {ov!r}")


@dataclass(frozen=True, slots=True)
class FlagPolicy:
    """When an example is flagged. Any rule that fires flags it; each rule is reported.

    >>> p = FlagPolicy()
    >>> [str(r) for r in p.reasons(overlap=0.2, run=31, z=0.0, per_source={})]
    ['run 31 >= 30']
    >>> FlagPolicy(zscore=2.0).reasons(overlap=0.1, run=13, z=2.5, per_source={})[0].rule
    'zscore'
    """

    min_overlap: float | None = 0.5
    """Flag when overlap_fraction >= this (None: rule off)."""
    min_run: int | None = 30
    """Flag when the longest exact run, in tokens, is >= this (None: rule off)."""
    zscore: float | None = None
    """Flag a z-score outlier of overlap among examples with a match (off by default)."""
    thresholds: Mapping[str, SourceThreshold] = field(default_factory=dict)
    """Per-source thresholds, applied to each source's own run and overlap."""

    def __post_init__(self) -> None:
        ov, run, z = self.min_overlap, self.min_run, self.zscore
        if ov is not None and not (_number(ov) and 0.0 <= ov <= 1.0):
            raise UsageError(f"--min-overlap must be a number in [0, 1], got {ov!r}")
        if run is not None and (isinstance(run, bool) or not isinstance(run, int) or run < 1):
            raise UsageError(f"--min-run must be an integer >= 1, got {run!r}")
        if z is not None and not (_number(z) and math.isfinite(z)):
            raise UsageError(f"--threshold must be a finite number, got {z!r}")

    def reasons(
        self,
        *,
        overlap: float,
        run: int,
        z: float,
        per_source: Mapping[str, tuple[float, int]],
    ) -> list[Reason]:
        """The rules that fire for one scorable example (`per_source`: name -> (overlap, run)),
        every one of them: the global rules, then each source's in name order."""
        out = []
        if self.min_overlap is not None and overlap >= self.min_overlap:
            out.append(Reason("min-overlap", overlap, self.min_overlap))
        if self.min_run is not None and run >= self.min_run:
            out.append(Reason("min-run", run, self.min_run))
        if self.zscore is not None and overlap > 0 and z >= self.zscore:
            out.append(Reason("zscore", z, self.zscore))
        for name, (src_overlap, src_run) in sorted(per_source.items()):
            t = self.thresholds.get(name)
            if t is None:
                continue
            if t.longest_run is not None and src_run > 0 and src_run >= t.longest_run:
                out.append(Reason("source-run", src_run, t.longest_run, name))
            if t.overlap_fraction is not None and src_overlap > 0:
                if src_overlap >= t.overlap_fraction:
                    out.append(Reason("source-overlap", src_overlap, t.overlap_fraction, name))
        return out

    def check(self, n: int, norm: NormConfig, source_names: list[str]) -> list[str]:
        """UsageError unless the per-source thresholds fit a scan with these sources (and, when
        they record them, this n and normalization); warnings for thresholds measured on too
        few controls."""
        check = getattr(self.thresholds, "check", None)
        if check is not None:
            check(n, norm, source_names)
        else:
            unknown = [s for s in self.thresholds if s not in source_names]
            if unknown:
                raise UsageError(
                    f"a threshold for {unknown[0]!r}, which is not a source of this scan "
                    f"(sources: {', '.join(map(repr, source_names))})"
                )
        return [
            f"the thresholds for source {k!r} are not well estimated "
            f"({v.controls} controls); treat them as rough"
            for k, v in sorted(self.thresholds.items())
            if not v.well_estimated
        ]

    def describe(self) -> dict[str, object]:
        return {
            "min_overlap": self.min_overlap,
            "min_run": self.min_run,
            "zscore": self.zscore,
            "source_thresholds": {
                k: {
                    "longest_run": v.longest_run,
                    "overlap_fraction": v.overlap_fraction,
                    "controls": v.controls,
                    "well_estimated": v.well_estimated,
                }
                for k, v in sorted(self.thresholds.items())
            },
        }


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)
