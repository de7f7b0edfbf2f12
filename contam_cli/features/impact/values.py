"""The values ``contam impact`` returns: subsets of the eval set, their scores and intervals.

Every figure is about the examples that are both in the report and in the results file (the
*matched* ones). A :class:`Split` divides them by one definition of "flagged" into clean, flagged
and unscorable examples; the :class:`Impact` holds the split by the report's own flags, the
flagged examples broken down by rule and by source, and one split per strictness level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Difference",
    "Group",
    "Impact",
    "Level",
    "LevelResult",
    "MatchBy",
    "Matching",
    "Metric",
    "Split",
    "Subgroup",
]

Metric = Literal["accuracy", "mean"]
"""``accuracy``: every outcome is 0 or 1; ``mean``: any finite number (a graded score)."""
MatchBy = Literal["id", "fingerprint"]
"""How results records find their report examples: by id, or by the text's fingerprint."""
LevelScore = Literal["overlap_fraction", "longest_run"]


@dataclass(frozen=True, slots=True)
class Group:
    """A subset of the matched examples: its size, mean outcome and bootstrap interval.

    >>> Group(0, None, None).empty
    True
    """

    n: int
    value: float | None
    """The mean outcome (accuracy for 0/1 outcomes); None for an empty subset."""
    interval: tuple[float, float] | None
    """Percentile bootstrap interval of the mean; None for an empty subset."""

    @property
    def empty(self) -> bool:
        return self.n == 0


@dataclass(frozen=True, slots=True)
class Difference:
    """A difference of two subsets' means, with its bootstrap interval (None: a side is empty)."""

    value: float | None
    interval: tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class Split:
    """The matched examples divided by one definition of "flagged".

    ``full`` is every matched example (unscorable ones too: it is the score a paper reports);
    ``clean`` is scorable and not flagged; ``unscorable`` is neither clean nor flagged.
    """

    full: Group
    clean: Group
    flagged: Group
    unscorable: Group
    full_minus_clean: Difference
    """Paired bootstrap (each resample draws the examples once, both means from that draw)."""
    flagged_minus_clean: Difference
    """Two independent samples, resampled apart."""
    p_value: float | None
    """One-sided permutation test of "flagged examples score higher than clean ones"."""


@dataclass(frozen=True, slots=True)
class Subgroup:
    """The flagged examples sharing one rule or one source, against the clean examples."""

    kind: Literal["rule", "source"]
    name: str
    group: Group
    minus_clean: Difference
    """This subgroup's mean minus the clean mean (independent samples)."""
    p_value: float | None


@dataclass(frozen=True, slots=True)
class Level:
    """A strictness level: an example is flagged when its score is at least ``threshold``.

    >>> Level("overlap_fraction", 0.5).label, Level("longest_run", 30).label
    ('overlap >= 0.5', 'run >= 30')
    """

    score: LevelScore
    threshold: float

    @property
    def label(self) -> str:
        if self.score == "longest_run":
            return f"run >= {int(self.threshold)}"
        return f"overlap >= {self.threshold:g}"


@dataclass(frozen=True, slots=True)
class LevelResult:
    """The split at one strictness level."""

    level: Level
    split: Split


@dataclass(frozen=True, slots=True)
class Matching:
    """How the results file and the report met: counts, and every record left unmatched."""

    by: MatchBy
    report_examples: int
    results_records: int
    matched: int
    results_only: tuple[str, ...]
    """Results records with no report example, in file order (their id, else ``line N``)."""
    report_only: tuple[str, ...]
    """Ids of report examples without a result, in report order."""


@dataclass(frozen=True)
class Impact:
    """What contamination did to a score: see the module docstring."""

    metric: Metric
    score_field: str
    """The results field the outcomes were read from (``acc``, ``exact_match``, ...)."""
    matching: Matching
    overall: Split
    """Flagged as the report flags (any rule fired)."""
    by_rule: tuple[Subgroup, ...]
    by_source: tuple[Subgroup, ...]
    """A flagged example belongs to the sources its reasons name, and to its ``best_source``
    for a reason that names none (global thresholds)."""
    levels: tuple[LevelResult, ...]
    bootstrap: int
    """Resamples of every bootstrap interval and of the permutation test."""
    seed: int
    confidence: float = 0.95
    report_path: str | None = None
    results_path: str | None = None
    lm_eval_filter: str | None = None
    """The lm-evaluation-harness filter of the rows read (``strict-match``, ...), if any."""
