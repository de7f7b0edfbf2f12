"""Flag rules: which measured examples count as contaminated, and why."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["FlagPolicy", "Reason", "SourceThreshold", "zscores"]


@dataclass(frozen=True, slots=True)
class SourceThreshold:
    """A per-source threshold measured on known-clean control text (``contam calibrate``)."""

    longest_run: int | None = None
    overlap_fraction: float | None = None


@dataclass(frozen=True, slots=True)
class Reason:
    """One rule that fired for one example."""

    rule: str
    """``min-overlap``, ``min-run``, ``zscore`` or ``source-threshold``."""
    value: float
    threshold: float
    source: str | None = None

    def __str__(self) -> str:
        where = f" in {self.source}" if self.source else ""
        if self.rule == "min-overlap":
            return f"overlap {self.value:.3f} >= {self.threshold:g}{where}"
        if self.rule == "min-run":
            return f"run {int(self.value)} >= {int(self.threshold)}{where}"
        if self.rule == "zscore":
            return f"z {self.value:.2f} >= {self.threshold:g}"
        return f"{self.source} threshold: {self.value:g} >= {self.threshold:g}"

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "value": self.value,
            "threshold": self.threshold,
            "source": self.source,
        }


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
    thresholds: dict[str, SourceThreshold] = field(default_factory=dict)
    """Calibrated per-source thresholds, applied to each source's own run and overlap."""

    def reasons(
        self,
        *,
        overlap: float,
        run: int,
        z: float,
        per_source: dict[str, tuple[float, int]],
    ) -> list[Reason]:
        """The rules that fire for one scorable example (`per_source`: name -> (overlap, run))."""
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
                out.append(Reason("source-threshold", src_run, t.longest_run, name))
            elif (
                t.overlap_fraction is not None
                and src_overlap > 0
                and (src_overlap >= t.overlap_fraction)
            ):
                out.append(Reason("source-threshold", src_overlap, t.overlap_fraction, name))
        return out

    def describe(self) -> dict[str, object]:
        return {
            "min_overlap": self.min_overlap,
            "min_run": self.min_run,
            "zscore": self.zscore,
            "source_thresholds": {
                k: {"longest_run": v.longest_run, "overlap_fraction": v.overlap_fraction}
                for k, v in sorted(self.thresholds.items())
            },
        }


def zscores(values: np.ndarray) -> np.ndarray:
    """Population z-scores (all zeros when fewer than two values or no spread).

    >>> zscores(np.array([1.0, 1.0, 0.0, 0.0, 0.0])).round(4).tolist()
    [1.2247, 1.2247, -0.8165, -0.8165, -0.8165]
    """
    if len(values) < 2:
        return np.zeros(len(values))
    std = float(values.std())
    if not math.isfinite(std) or std == 0.0:
        return np.zeros(len(values))
    return (values - values.mean()) / std
