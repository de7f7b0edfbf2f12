"""The benchmark's n-gram detectors: each a function from a labelled set and settings to signals.

A :class:`Signal` is one way of judging every example of a set: a score per example, oriented
so that higher is more suspicious (NaN where it cannot score), the flag its rule gives, and the
rule in words. A detector (:class:`~contam_cli.features.bench.runner.Detector`) is a function
``(LabelledSet, Settings) -> {signal name: Signal}``; those here run the real scan engine in
memory (:func:`contam_cli.scan`, :func:`contam_cli.features.calibrate.calibrate`) at
``Settings.n``, and every flag is a reason the scan's own :class:`~contam_cli.policy.FlagPolicy`
gave.

- :func:`ngram_signals`: one scan; ``overlap_fraction`` (flag: overlap >= 0.5), ``longest_run``
  (run >= 30), ``defaults`` (either: the CLI's default policy) and ``zscore`` (overlap z-score
  >= 2 among examples with a match; off by default in the CLI).
- :func:`calibrated_signals`: per-source thresholds from :func:`calibrate` on the controls
  (the 99th percentile), then a scan with only those rules.
- :func:`suppressed_signals`: the default policy with ``--ignore-common K``.
- :func:`chained_signals`: the older tools' run (consecutive matched n-grams, each anywhere in
  the corpus, chained into one run), with contam's tokens, for comparison with the exact run.
- :func:`line_split_signals`: the default policy against the corpus cut at its line breaks
  (every line its own document), as tools that take n-grams per line or paragraph see it.

A rule's score for the combined signals (``defaults``, ``calibrated``, ``ignore_common``) is
``max(value / threshold)`` over its rules, so an example is flagged exactly when it is >= 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contam_cli.features.bench.labelled import LabelledSet
from contam_cli.features.calibrate import calibrate
from contam_cli.features.scan import scan
from contam_cli.policy import FlagPolicy
from contam_cli.report import Report
from contam_cli.text import Tokenizer

__all__ = [
    "SOURCE",
    "Columns",
    "Settings",
    "Signal",
    "calibrated_signals",
    "chained_signals",
    "line_split_signals",
    "longest_true_runs",
    "ngram_signals",
    "ratio",
    "suppressed_signals",
]

SOURCE = "corpus"
"""The one source the benchmark's corpus is scanned as."""


@dataclass(frozen=True)
class Settings:
    """What the detectors are run with (one n at a time for the n-gram ones)."""

    n: int = 13
    min_overlap: float = 0.5
    min_run: int = 30
    zscore: float = 2.0
    """The z-score rule's threshold (the CLI's ``--threshold``, off there by default)."""
    ignore_common: int = 20
    """``--ignore-common K``: n-grams in more than K corpus documents are left out."""
    percentile: float = 99.0
    """Calibration's percentile of the controls, and the probe's flag (control_pct >= it)."""
    controls: tuple[str, ...] = ()
    """Texts of the set's text model planted nowhere (see :mod:`.controls`)."""
    model: Any = None
    """The probe's model: a Provider, or :data:`~.model_signals.BENCH_LM` (trained per set)."""
    methods: tuple[str, ...] = ()
    """The probe's methods (``min-k++``, ``ppl``...)."""


@dataclass(frozen=True, eq=False)
class Signal:
    """One signal on one labelled set, per example in the set's order."""

    rule: str
    """The flag rule, in words (the same for every seed)."""
    scores: np.ndarray
    """float64, higher is more suspicious; NaN: not scored (never counted as flagged)."""
    flags: np.ndarray
    """bool: the rule fired."""
    info: dict[str, float] = field(default_factory=dict)
    """Numbers this set's run chose (e.g. calibrated thresholds), averaged over seeds."""


@dataclass(frozen=True, eq=False)
class Columns:
    """A scan report's n-gram columns, as arrays in the examples' order."""

    overlap: np.ndarray
    run: np.ndarray
    z: np.ndarray
    rules: list[frozenset[str]]

    @classmethod
    def of(cls, report: Report) -> Columns:
        def num(value: float | None) -> float:
            return np.nan if value is None else float(value)

        rows = list(report.examples)
        return cls(
            np.array([num(e.overlap_fraction) for e in rows]),
            np.array([num(e.longest_run) for e in rows]),
            np.array([num(e.zscore) for e in rows]),
            [frozenset(r.rule for r in e.reasons) for e in rows],
        )

    def fired(self, *rules: str) -> np.ndarray:
        """Whether any of `rules` fired, per example."""
        want = set(rules)
        return np.array([bool(want & got) for got in self.rules], dtype=bool)


def ratio(values: np.ndarray, threshold: float) -> np.ndarray:
    """`values` / `threshold` (NaN stays NaN); a threshold of 0 makes any positive value inf,
    as a rule "value >= 0, given a match" flags every match.

    >>> ratio(np.array([0.0, 0.25, np.nan]), 0.5).tolist()
    [0.0, 0.5, nan]
    >>> ratio(np.array([0.0, 0.1]), 0.0).tolist()
    [0.0, inf]
    """
    if threshold > 0:
        return values / threshold
    return np.where(values > 0, np.inf, np.where(np.isnan(values), np.nan, 0.0))


def _max_ratio(pairs: Sequence[tuple[np.ndarray, float]]) -> np.ndarray:
    out = ratio(*pairs[0])
    for values, threshold in pairs[1:]:
        out = np.fmax(out, ratio(values, threshold))
    return out


def ngram_signals(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """One scan at ``s.n``: overlap, exact run, the default policy, the z-score rule."""
    policy = FlagPolicy(min_overlap=s.min_overlap, min_run=s.min_run, zscore=s.zscore)
    c = Columns.of(scan(data.records(), {SOURCE: data.corpus}, n=s.n, policy=policy))
    return {
        "overlap_fraction": Signal(
            f"overlap >= {s.min_overlap:g}", c.overlap, c.fired("min-overlap")
        ),
        "longest_run": Signal(f"run >= {s.min_run}", c.run, c.fired("min-run")),
        "defaults": Signal(
            f"overlap >= {s.min_overlap:g} or run >= {s.min_run}",
            _max_ratio([(c.overlap, s.min_overlap), (c.run, s.min_run)]),
            c.fired("min-overlap", "min-run"),
        ),
        "zscore": Signal(f"overlap z >= {s.zscore:g}, with a match", c.z, c.fired("zscore")),
    }


def calibrated_signals(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """Thresholds calibrated on the controls at ``s.n``, applied alone (no global rules)."""
    corpus = {SOURCE: data.corpus}
    thresholds = calibrate(corpus, list(s.controls), n=s.n, percentile=s.percentile)
    t = thresholds[SOURCE]
    assert t.longest_run is not None and t.overlap_fraction is not None
    policy = FlagPolicy(min_overlap=None, min_run=None, thresholds=thresholds)
    c = Columns.of(scan(data.records(), corpus, n=s.n, policy=policy))
    rule = f"per-source run or overlap >= p{s.percentile:g} of {len(s.controls)} controls"
    score = _max_ratio([(c.overlap, t.overlap_fraction), (c.run, t.longest_run)])
    info = {"run_threshold": float(t.longest_run), "overlap_threshold": t.overlap_fraction}
    return {
        "calibrated": Signal(rule, score, c.fired("source-run", "source-overlap"), info),
    }


def suppressed_signals(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """The default policy with boilerplate suppression (``--ignore-common K``)."""
    policy = FlagPolicy(min_overlap=s.min_overlap, min_run=s.min_run)
    report = scan(
        data.records(), {SOURCE: data.corpus}, n=s.n, policy=policy, ignore_common=s.ignore_common
    )
    c = Columns.of(report)
    rule = f"defaults, n-grams in > {s.ignore_common} documents ignored"
    score = _max_ratio([(c.overlap, s.min_overlap), (c.run, s.min_run)])
    return {"ignore_common": Signal(rule, score, c.fired("min-overlap", "min-run"))}


def line_split_signals(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """The default policy with every line of every corpus document scanned as a document of its
    own: no n-gram spans a line break, so a leak re-wrapped into short lines loses its n-grams."""
    lines = [line for text in data.corpus_texts() for line in text.split("\n") if line.strip()]
    policy = FlagPolicy(min_overlap=s.min_overlap, min_run=s.min_run)
    c = Columns.of(scan(data.records(), {SOURCE: lines}, n=s.n, policy=policy))
    score = _max_ratio([(c.overlap, s.min_overlap), (c.run, s.min_run)])
    rule = "defaults, corpus cut at line breaks"
    return {"line_split": Signal(rule, score, c.fired("min-overlap", "min-run"))}


def chained_signals(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """The older tools' run: the longest stretch of consecutive n-grams of the example that each
    occur somewhere in the corpus (not necessarily together), r n-grams giving r + n - 1
    tokens. Same tokens and hashes as contam, so only the run's definition differs."""
    tk = Tokenizer()
    corpus_grams = np.unique(tk.ngrams(tk.tokens(data.corpus_texts()), s.n)[0])
    stream = tk.tokens([e.text for e in data.examples])
    grams, first = tk.ngrams(stream, s.n)
    example = stream.doc[first].astype(np.int64)
    n_examples = len(data.examples)
    runs = longest_true_runs(np.isin(grams, corpus_grams), example, n_examples)
    scorable = np.bincount(example, minlength=n_examples) > 0
    tokens = np.where(runs > 0, runs + s.n - 1, 0).astype(np.float64)
    tokens[~scorable] = np.nan
    rule = f"chained run >= {s.min_run} (the older tools' run)"
    return {"chained_run": Signal(rule, tokens, scorable & (tokens >= s.min_run))}


def longest_true_runs(hit: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the longest stretch of consecutive True values of `hit` (`group` is sorted:
    each group's values are one contiguous slice).

    >>> hit = np.array([1, 1, 0, 1, 1, 1, 1, 0], dtype=bool)
    >>> longest_true_runs(hit, np.array([0, 0, 0, 0, 1, 1, 2, 2]), 4).tolist()
    [2, 2, 1, 0]
    """
    out = np.zeros(n_groups, dtype=np.int64)
    idx = np.flatnonzero(hit)
    if idx.size == 0:
        return out
    new = np.ones(idx.size, dtype=bool)
    new[1:] = (np.diff(idx) != 1) | (group[idx[1:]] != group[idx[:-1]])
    lengths = np.bincount(np.cumsum(new) - 1)
    np.maximum.at(out, group[idx[new]], lengths)
    return out
