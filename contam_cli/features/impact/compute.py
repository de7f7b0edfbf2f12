"""impact(): the score on the clean subset beside the full score, with intervals.

The GPT-3 paper's contamination study (Brown et al. 2020, Appendix C): score the benchmark on all
its examples and on the clean ones (those with no flagged overlap), and report the difference.
Here every figure has a seeded percentile bootstrap interval, and a permutation test asks whether
flagged examples score higher than clean ones. The statistics are :mod:`contam_cli.stats`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from contam_cli.errors import ArgumentError, UsageError
from contam_cli.features.impact.levels import DEFAULT_LEVELS, parse_levels
from contam_cli.features.impact.matching import pair
from contam_cli.features.impact.results import ResultsSpec, read_outcomes
from contam_cli.features.impact.values import (
    Difference,
    Group,
    Impact,
    Level,
    LevelResult,
    MatchBy,
    Metric,
    Split,
    Subgroup,
)
from contam_cli.report import Report, load_report
from contam_cli.report.table import ExampleTable
from contam_cli.stats import (
    bootstrap_difference_interval,
    bootstrap_full_minus_clean,
    bootstrap_mean_interval,
    permutation_test,
)
from contam_cli.stats.resample import check_bootstrap

__all__ = ["impact"]


def impact(
    report: Report | str | os.PathLike[str],
    results: str | os.PathLike[str] | Iterable[Any],
    *,
    metric: Metric = "accuracy",
    score_field: str | None = None,
    id_field: str | None = None,
    match: MatchBy = "id",
    text_fields: Sequence[str] = (),
    lm_filter: str | None = None,
    bootstrap: int = 10_000,
    seed: int = 0,
    levels: str | Sequence[str | Level] | None = None,
    confidence: float = 0.95,
) -> Impact:
    """How much contamination moved the score: see the module docstring and docs/impact.md.

    ``report``: a Report or the path of one (``contam scan --report``). ``results``: a JSONL or
    CSV file of per-example outcomes (lm-evaluation-harness ``--log_samples`` files as they are),
    or an iterable of dict records. ``levels``: strictness levels such as ``"overlap>=0.2,0.5"``
    or ``"run>=13,30"`` (default: ``overlap>=0.2,0.5,0.8`` on a report with overlap fractions;
    ``"none"``: no levels). ``text_fields`` (matching by fingerprint): the text fields of each
    record's ``doc``, as given to the scan with ``--field``.
    """
    rep = _report(report)
    _check(metric, match, bootstrap, seed, confidence)
    chosen = _levels(levels, rep.examples)
    spec = ResultsSpec(
        metric=metric,
        score_field=score_field,
        id_field=id_field,
        want_ids=match == "id",
        text_fields=tuple(text_fields),
        want_text=match == "fingerprint",
        lm_filter=lm_filter,
    )
    outcomes = read_outcomes(results, spec)
    pairs = pair(rep, outcomes, match)
    table, ex = rep.examples, pairs.examples
    stats = _Resampler(outcomes.values[pairs.rows], int(bootstrap), int(seed), confidence)
    flagged, scorable = table.flagged[ex], table.scorable()[ex]
    overall = stats.split(flagged, ~scorable & ~flagged)
    clean = ~flagged & scorable
    rules, sources = _flagged_subsets(table, ex)
    return Impact(
        metric=metric,
        score_field=outcomes.field,
        matching=pairs.matching,
        overall=overall,
        by_rule=tuple(stats.subgroup("rule", k, m, clean) for k, m in rules),
        by_source=tuple(stats.subgroup("source", k, m, clean) for k, m in sources),
        levels=tuple(LevelResult(lv, stats.split(*_level_masks(table, ex, lv))) for lv in chosen),
        bootstrap=int(bootstrap),
        seed=int(seed),
        confidence=confidence,
        report_path=None if isinstance(report, Report) else str(report),
        results_path=outcomes.path,
        lm_eval_filter=outcomes.lm_filter,
    )


#: The detectors whose rules flag examples; a report of none of them judged nothing.
_JUDGES = ("ngram", "fuzzy", "combined")


def _report(report: object) -> Report:
    if isinstance(report, Report):
        rep, where = report, "report"
    elif isinstance(report, (str, os.PathLike)):
        rep, where = load_report(Path(report)), str(report)
    else:
        raise ArgumentError(f"report: expected a Report or a path, got {type(report).__name__}")
    if not any(m.detector in _JUDGES for m in rep.methods):
        found = ", ".join(sorted({m.detector for m in rep.methods})) or "none"
        # NOTE: a probe's scores flag nothing: every example would count as clean.
        raise UsageError(
            f"{where}: its examples were never judged for contamination (detectors: {found}); "
            "give impact the report of contam scan or clean, or of contam report combining them"
        )
    return rep


def _check(metric: str, match: str, bootstrap: int, seed: int, confidence: float) -> None:
    if metric not in ("accuracy", "mean"):
        raise ArgumentError(f"metric must be 'accuracy' or 'mean', not {metric!r}")
    if match not in ("id", "fingerprint"):
        raise ArgumentError(f"match must be 'id' or 'fingerprint', not {match!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ArgumentError(f"seed must be a non-negative integer, got {seed!r}")
    try:
        check_bootstrap(bootstrap, confidence)
    except ValueError as e:
        raise ArgumentError(str(e)) from None


def _levels(levels: str | Sequence[str | Level] | None, table: ExampleTable) -> tuple[Level, ...]:
    if levels is None:
        return parse_levels(DEFAULT_LEVELS) if "overlap_fraction" in table.scores else ()
    chosen = parse_levels(levels)
    for lv in chosen:
        if lv.score not in table.scores:
            raise UsageError(
                f"levels: {lv.label} needs the report's {lv.score} scores, and this report has "
                f"none (its scores: {', '.join(table.scores) or 'none'})"
            )
    return chosen


def _level_masks(table: ExampleTable, ex: np.ndarray, level: Level) -> tuple[np.ndarray, ...]:
    """(flagged, unscorable) at ``level``: the score at least the threshold; no score."""
    values = table.scores[level.score][ex]
    known = ~np.isnan(values)
    flagged = np.greater_equal(values, level.threshold, out=np.zeros(len(ex), bool), where=known)
    return flagged, ~known


Subsets = list[tuple[str, np.ndarray]]


def _flagged_subsets(table: ExampleTable, ex: np.ndarray) -> tuple[Subsets, Subsets]:
    """Masks over the matched examples: per rule that fired, and per source of a finding."""
    at = np.full(len(table), -1, dtype=np.int64)
    at[ex] = np.arange(len(ex))
    best = table.ngram.best_source if table.ngram is not None else {}
    rules: dict[str, list[int]] = {}
    sources: dict[str, list[int]] = {}
    for e, reasons in table.reasons.items():
        k = int(at[e])
        if k < 0:
            continue
        for rule in dict.fromkeys(r.rule for r in reasons):
            rules.setdefault(rule, []).append(k)
        named = [r.source for r in reasons if r.source is not None]
        # NOTE: a global rule (no source of its own) is charged to where the longest run sits.
        if any(r.source is None for r in reasons) and best.get(e) is not None:
            named.append(best[e])
        for source in dict.fromkeys(named):
            sources.setdefault(source, []).append(k)
    return _masks(rules, len(ex)), _masks(sources, len(ex))


def _masks(members: dict[str, list[int]], n: int) -> Subsets:
    """Largest subset first, then by name."""
    out = []
    for name in sorted(members, key=lambda k: (-len(members[k]), k)):
        mask = np.zeros(n, dtype=bool)
        mask[members[name]] = True
        out.append((name, mask))
    return out


class _Resampler:
    """The outcomes of the matched examples and every statistic of their subsets.

    Results are kept by subset (the same examples always get the same interval, whichever
    breakdown or level asks): levels often repeat the report's own split.
    """

    def __init__(self, values: np.ndarray, n: int, seed: int, confidence: float) -> None:
        self.x = values
        self.kw: dict[str, Any] = {"n": n, "seed": seed}
        self.level = confidence
        self.memo: dict[tuple[Any, ...], Any] = {}

    def _cached(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        full = tuple(np.packbits(k).tobytes() if isinstance(k, np.ndarray) else k for k in key)
        if full not in self.memo:
            self.memo[full] = make()
        return self.memo[full]

    def group(self, mask: np.ndarray) -> Group:
        n = int(mask.sum())
        if n == 0:
            return Group(0, None, None)
        values = self.x[mask]
        interval = self._cached(
            ("mean", mask),
            lambda: bootstrap_mean_interval(values, level=self.level, **self.kw),
        )
        return Group(n, float(values.mean()), interval)

    def versus(self, a: np.ndarray, b: np.ndarray) -> tuple[Difference, float | None]:
        """mean(a) - mean(b) with its interval, and the p-value of "a scores higher"."""
        if not a.any() or not b.any():
            return Difference(None, None), None
        xa, xb = self.x[a], self.x[b]
        interval = self._cached(
            ("diff", a, b),
            lambda: bootstrap_difference_interval(xa, xb, level=self.level, **self.kw),
        )
        p = self._cached(("perm", a, b), lambda: permutation_test(xa, xb, **self.kw))
        return Difference(float(xa.mean() - xb.mean()), interval), p

    def split(self, flagged: np.ndarray, unscorable: np.ndarray) -> Split:
        clean = ~flagged & ~unscorable
        full, clean_group = self.group(np.ones(len(self.x), bool)), self.group(clean)
        if clean_group.empty:
            full_minus_clean = Difference(None, None)
        else:
            interval = self._cached(
                ("full-clean", clean),
                lambda: bootstrap_full_minus_clean(self.x, clean, level=self.level, **self.kw),
            )
            assert full.value is not None and clean_group.value is not None
            full_minus_clean = Difference(full.value - clean_group.value, interval)
        difference, p = self.versus(flagged, clean)
        return Split(
            full=full,
            clean=clean_group,
            flagged=self.group(flagged),
            unscorable=self.group(unscorable),
            full_minus_clean=full_minus_clean,
            flagged_minus_clean=difference,
            p_value=p,
        )

    def subgroup(
        self, kind: Literal["rule", "source"], name: str, mask: np.ndarray, clean: np.ndarray
    ) -> Subgroup:
        difference, p = self.versus(mask, clean)
        return Subgroup(kind, name, self.group(mask), difference, p)
