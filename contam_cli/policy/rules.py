"""Flag rules: which measured examples count as contaminated, and why."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from contam_cli.engine.fuzzy.config import DEFAULT_MIN_FUZZY
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
    fuzzy: float | None = None
    """The fuzzy detector's score in this source at or above which an example is flagged
    (applied only when the fuzzy detector ran)."""

    def __post_init__(self) -> None:
        run, ov = self.longest_run, self.overlap_fraction
        if run is not None and (isinstance(run, bool) or not isinstance(run, int) or run < 1):
            raise UsageError(f"longest_run must be an integer >= 1, got {run!r}")
        for name, v in (("overlap_fraction", ov), ("fuzzy", self.fuzzy)):
            if v is not None and not (_number(v) and 0.0 <= v <= 1.0):
                raise UsageError(f"{name} must be a number in [0, 1], got {v!r}")

    def describe(self) -> dict[str, object]:
        """What a report records (``fuzzy`` only when set, so older reports keep their bytes)."""
        out: dict[str, object] = {
            "longest_run": self.longest_run,
            "overlap_fraction": self.overlap_fraction,
            "controls": self.controls,
            "well_estimated": self.well_estimated,
        }
        if self.fuzzy is not None:
            out["fuzzy"] = self.fuzzy
        return out


@dataclass(frozen=True, slots=True)
class FlagPolicy:
    """When an example is flagged. Any rule that fires flags it; each rule is reported.

    >>> p = FlagPolicy()
    >>> [str(r) for r in p.reasons(overlap=0.2, run=31, z=0.0, per_source={})]
    ['run 31 >= 30']
    >>> FlagPolicy(zscore=2.0).reasons(overlap=0.1, run=13, z=2.5, per_source={})[0].rule
    'zscore'
    >>> [str(r) for r in p.fuzzy_reasons(score=0.74, source="web", per_source={"web": 0.74})]
    ['fuzzy 0.740 >= 0.5']
    """

    min_overlap: float | None = 0.5
    """Flag when overlap_fraction >= this (None: rule off)."""
    min_run: int | None = 30
    """Flag when the longest exact run, in tokens, is >= this (None: rule off)."""
    zscore: float | None = None
    """Flag a z-score outlier of overlap among examples with a match (off by default)."""
    thresholds: Mapping[str, SourceThreshold] = field(default_factory=dict)
    """Per-source thresholds, applied to each source's own run and overlap (and fuzzy score)."""
    min_fuzzy: float | None = DEFAULT_MIN_FUZZY
    """Flag when the fuzzy detector's score is >= this (None: rule off). Used only when that
    detector ran (``ScanOptions.fuzzy``); the default comes from a measured null distribution
    (see :class:`~contam_cli.engine.fuzzy.config.FuzzyConfig`)."""

    def __post_init__(self) -> None:
        ov, run, z = self.min_overlap, self.min_run, self.zscore
        if ov is not None and not (_number(ov) and 0.0 <= ov <= 1.0):
            raise UsageError(f"--min-overlap must be a number in [0, 1], got {ov!r}")
        fz = self.min_fuzzy
        if fz is not None and not (_number(fz) and 0.0 <= fz <= 1.0):
            raise UsageError(f"--min-fuzzy must be a number in [0, 1], got {fz!r}")
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

    def fuzzy_reasons(
        self, *, score: float, source: str | None, per_source: Mapping[str, float]
    ) -> list[Reason]:
        """The fuzzy rules that fire for one example the fuzzy detector scored: `score` (its
        best alignment, found in `source`) against ``min_fuzzy``, then each source's own score
        (`per_source`: name -> score, 0 where nothing aligned) against that source's ``fuzzy``
        threshold, in name order. A source's rule needs something aligned there (score > 0)."""
        out = []
        if self.min_fuzzy is not None and score > 0 and score >= self.min_fuzzy:
            out.append(Reason("min-fuzzy", score, self.min_fuzzy, source, "fuzzy"))
        for name, src_score in sorted(per_source.items()):
            t = self.thresholds.get(name)
            if t is not None and t.fuzzy is not None and src_score > 0 and src_score >= t.fuzzy:
                out.append(Reason("source-fuzzy", src_score, t.fuzzy, name, "fuzzy"))
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

    def describe(self, fuzzy: bool = False) -> dict[str, object]:
        """The rules, for a report's config; `fuzzy`: the fuzzy detector ran, so its rule
        (``min_fuzzy``) is recorded too (left out otherwise, so such reports keep their bytes)."""
        out: dict[str, object] = {
            "min_overlap": self.min_overlap,
            "min_run": self.min_run,
            "zscore": self.zscore,
        }
        if fuzzy:
            out["min_fuzzy"] = self.min_fuzzy
        out["source_thresholds"] = {k: v.describe() for k, v in sorted(self.thresholds.items())}
        return out


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)
