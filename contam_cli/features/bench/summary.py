"""The benchmark's arithmetic: one signal's numbers on one seed, and their mean and sd over seeds.

Per seed and signal (:func:`seed_values`), for each view (:data:`VIEWS`: which kinds are the
leaks and which the clean population):

- AUC (Mann-Whitney, ties one half, unscored examples left out) of each leak kind's examples
  against ALL the view's negatives, and of all its leaks together (``overall``);
- recall (flagged leaks / leaks) and false-positive rate (flagged negatives / negatives) at the
  signal's rule; an unscored example is never flagged;

and, whatever the view, each kind's flag rate and mean score, and how many examples had no score.
Over seeds (:class:`RowBuilder`): the mean and the population sd of each number (numbers a seed
could not give, such as the AUC of an absent kind, are left out), and the deployment view from
the mean recall and FPR: :func:`~contam_cli.stats.review_queue_size` for ``documents``
documents at ``prevalence``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from contam_cli.features.bench.labelled import NEGATIVE_KINDS, POSITIVE_KINDS
from contam_cli.features.bench.signals import Signal
from contam_cli.stats import ReviewQueue, auc, review_queue_size

__all__ = ["SEED_KINDS", "VIEWS", "Row", "RowBuilder", "Stat", "View", "ViewSpec", "seed_values"]

SEED_KINDS = ("verbatim", "partial", "paraphrased")
"""The leak kinds of the seed project's benchmark (``scripts/benchmark_detectors.py``)."""

Values = dict[str, float | None]


@dataclass(frozen=True)
class ViewSpec:
    """Which kinds are the leaks and which the clean population of a view."""

    name: str
    positives: tuple[str, ...]
    negatives: tuple[str, ...]
    description: str


VIEWS = (
    ViewSpec(
        "all",
        POSITIVE_KINDS,
        ("clean", *NEGATIVE_KINDS),
        "every leak kind against every clean example and hard negative",
    ),
    ViewSpec(
        "seed",
        SEED_KINDS,
        ("clean",),
        "verbatim, partial and paraphrased leaks against clean examples only",
    ),
)


@dataclass(frozen=True)
class Stat:
    """A number's mean and population sd over seeds (None: no seed gave a finite value)."""

    mean: float | None
    sd: float | None
    seeds: int = 0
    """How many seeds gave a value."""

    @classmethod
    def of(cls, values: Sequence[float | None]) -> Stat:
        """
        >>> Stat.of([0.25, None, 0.75])
        Stat(mean=0.5, sd=0.25, seeds=2)
        >>> Stat.of([None]), Stat.of([math.inf]).mean
        (Stat(mean=None, sd=None, seeds=0), None)
        """
        x = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        x = x[~np.isnan(x)]
        if x.size == 0:
            return cls(None, None, 0)
        with np.errstate(invalid="ignore", over="ignore"):
            mean, sd = float(x.mean()), float(x.std())
        return cls(_finite(mean), _finite(sd), int(x.size))


@dataclass(frozen=True)
class View:
    """One view of a signal over the seeds."""

    spec: ViewSpec
    auc: Mapping[str, Stat]
    """Each leak kind of the view, then ``overall``."""
    recall: Stat
    fpr: Stat
    queue: ReviewQueue | None
    """The deployment view from the mean recall and FPR (None when either is missing)."""


@dataclass(frozen=True)
class Row:
    """One signal (at one n, or ``n`` None for detectors without one) over the seeds."""

    n: int | None
    detector: str
    signal: str
    rule: str
    views: Mapping[str, View]
    rate: Mapping[str, Stat]
    """Per kind, the share of its examples flagged (a leak kind's recall; a negative's FPR)."""
    mean_score: Mapping[str, Stat]
    """Per kind, the mean score of its examples (None when infinite)."""
    unscorable: Stat
    """Examples per seed the signal could not score."""
    info: Mapping[str, Stat] = field(default_factory=dict)
    """What the signal chose per seed (e.g. calibrated thresholds)."""

    @property
    def label(self) -> str:
        return self.signal if self.n is None else f"n={self.n} {self.signal}"


def seed_values(kinds: np.ndarray, signal: Signal) -> Values:
    """One seed's numbers for `signal` (`kinds`: each example's kind, in the same order)."""
    scores = np.asarray(signal.scores, dtype=np.float64)
    flags = np.asarray(signal.flags, dtype=bool) & ~np.isnan(scores)
    if scores.shape != kinds.shape or flags.shape != kinds.shape:
        raise ValueError(f"a signal of {scores.size} scores for {kinds.size} examples")
    out: Values = {"unscorable": float(np.isnan(scores).sum())}
    for kind in (*POSITIVE_KINDS, "clean", *NEGATIVE_KINDS):
        mine = kinds == kind
        out[f"rate:{kind}"] = _share(flags[mine])
        known = scores[mine & ~np.isnan(scores)]
        with np.errstate(invalid="ignore"):
            out[f"mean:{kind}"] = _finite(float(known.mean())) if known.size else None
    for view in VIEWS:
        pos, neg = np.isin(kinds, view.positives), np.isin(kinds, view.negatives)
        out[f"{view.name}:auc:overall"] = auc(scores[pos], scores[neg])
        for kind in view.positives:
            out[f"{view.name}:auc:{kind}"] = auc(scores[kinds == kind], scores[neg])
        out[f"{view.name}:recall"] = _share(flags[pos])
        out[f"{view.name}:fpr"] = _share(flags[neg])
    out.update({f"info:{k}": float(v) for k, v in signal.info.items()})
    return out


@dataclass
class RowBuilder:
    """Collects one signal's per-seed values; :meth:`row` averages them."""

    n: int | None
    detector: str
    signal: str
    rule: str
    seeds: list[Values] = field(default_factory=list)

    def add(self, kinds: np.ndarray, signal: Signal) -> None:
        if signal.rule != self.rule:
            raise ValueError(f"{self.signal}: its rule changed between seeds")
        self.seeds.append(seed_values(kinds, signal))

    def row(self, documents: float, prevalence: float) -> Row:
        def stat(key: str) -> Stat:
            return Stat.of([values.get(key) for values in self.seeds])

        views = {}
        for v in VIEWS:
            aucs = {k: stat(f"{v.name}:auc:{k}") for k in (*v.positives, "overall")}
            recall, fpr = stat(f"{v.name}:recall"), stat(f"{v.name}:fpr")
            queue = None
            if recall.mean is not None and fpr.mean is not None:
                queue = review_queue_size(documents, recall.mean, fpr.mean, prevalence)
            views[v.name] = View(v, aucs, recall, fpr, queue)
        kinds = (*POSITIVE_KINDS, "clean", *NEGATIVE_KINDS)
        info = sorted({k[5:] for values in self.seeds for k in values if k.startswith("info:")})
        return Row(
            n=self.n,
            detector=self.detector,
            signal=self.signal,
            rule=self.rule,
            views=views,
            rate={k: stat(f"rate:{k}") for k in kinds},
            mean_score={k: stat(f"mean:{k}") for k in kinds},
            unscorable=stat("unscorable"),
            info={k: stat(f"info:{k}") for k in info},
        )


def _share(flags: np.ndarray) -> float | None:
    return float(flags.mean()) if flags.size else None


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
