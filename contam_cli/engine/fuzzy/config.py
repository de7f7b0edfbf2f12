"""FuzzyConfig: the knobs of the paraphrase-tolerant detector, with their documented defaults.

The detector has two stages (see :mod:`contam_cli.engine.fuzzy`): seeds (unordered pairs of
nearby tokens shared by an eval example and a corpus document, gathered on bands of diagonals)
propose candidates, and a banded local alignment over token ids, with matches weighted by
rarity, verifies them. Every weight and penalty below is a fraction of the heaviest token's
weight (1.0), so they read the same whatever the eval set's size.

>>> FuzzyConfig().max_gap, FuzzyConfig().min_fuzzy
(3, 0.5)
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from contam_cli.errors import UsageError

__all__ = ["DEFAULT_MIN_FUZZY", "SCALE", "FuzzyConfig"]

#: Weights and penalties are integers in units of 1/SCALE of the heaviest weight, so the
#: alignment is exact integer arithmetic: every implementation gives the same scores and ties.
SCALE = 1000
#: The default flag threshold (``--min-fuzzy``), from a measured null: see FuzzyConfig.min_fuzzy.
DEFAULT_MIN_FUZZY = 0.5


@dataclass(frozen=True, slots=True)
class FuzzyConfig:
    """How reworded leaks are found and scored. Recorded in every report that uses them.

    Seeds of ``A B C D`` with ``max_gap=2``: the unordered pairs {A,B} {A,C} {B,C} {B,D} {C,D}
    (each also found as B A, C A, ...), so a substituted word costs only the pairs it is in and
    a swap of two neighbours costs none.
    """

    max_gap: int = 3
    """Seeds pair each token with the next `max_gap` tokens of the same text."""
    seed_weight: float = 1.0
    """A pair is a seed when its two weights add up to at least this: a rare word with any
    other, or two uncommon words. Pairs of common words ("of the", "is a") are in every
    document and would only make work."""
    min_pairs: int = 24
    """...but every example keeps at least this many seeds (its heaviest pairs), so an example
    made only of common words can still be found."""
    max_places: int = 64
    """A pair found in more places of the eval set than this is boilerplate: not a seed."""
    band: int = 16
    """Seeds are counted on bins of this many diagonals (doc position - eval position)."""
    slack: int = 8
    """The alignment band reaches this many diagonals past the seeds' bins on each side."""
    min_seeds: int = 3
    """A candidate needs at least this many seeds in two adjacent bins ..."""
    seed_fraction: float = 0.2
    """... and at least this fraction of the example's seeds ..."""
    max_need: int = 40
    """... but never more than this many (long examples drift across bins)."""
    max_band: int = 4096
    """A longer run of candidate bins (a document holding many copies) is aligned in pieces."""
    min_tokens: int = 20
    """Examples with fewer tokens are unscorable (null): a short text shares a phrase with too
    much innocent text for its aligned fraction to mean anything."""
    weight_floor: float = 0.05
    """The lightest weight a token can have (a word in every example)."""
    mismatch: float = 0.1
    """Penalty of aligning two different tokens (a substituted word)."""
    gap: float = 0.15
    """Penalty per token inserted or deleted."""
    swap: float = 0.1
    """Penalty of a transposition: two neighbours in the other order both count as matched."""
    min_fuzzy: float = DEFAULT_MIN_FUZZY
    """Flag an example whose score reaches this. Chosen from a null distribution of real text
    (scripts/fuzzy_eval.py null): the highest score of 2,960 clean paragraphs of the Python and
    PostgreSQL documentation (sharing no 8-gram with the corpus) against 137-139 MB of other
    Debian documentation was 0.446; plus a margin of 0.05, rounded up to a multiple of 0.05."""

    def __post_init__(self) -> None:
        if self.max_gap < 1:
            raise UsageError("fuzzy max_gap must be at least 1")
        if self.band < 1 or self.slack < 0 or self.max_band < 2 * self.band:
            raise UsageError("fuzzy band must be >= 1, slack >= 0 and max_band >= 2 * band")
        if not 0 < self.weight_floor <= 1:
            raise UsageError("fuzzy weight_floor must be in (0, 1]")
        if min(self.mismatch, self.gap, self.swap) < 0:
            raise UsageError("fuzzy penalties must not be negative")
        if self.min_seeds < 1 or self.max_need < self.min_seeds:
            raise UsageError("fuzzy min_seeds must be >= 1 and max_need >= min_seeds")

    def penalties(self) -> tuple[int, int, int]:
        """(mismatch, gap, swap) in alignment units (see SCALE)."""
        return _units(self.mismatch), _units(self.gap), _units(self.swap)

    def describe(self) -> dict[str, object]:
        """The settings, for a report's config section."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _units(x: float) -> int:
    return int(round(x * SCALE))
