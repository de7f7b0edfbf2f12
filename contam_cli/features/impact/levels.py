"""Strictness levels: ``overlap>=0.2,0.5,0.8`` or ``run>=13,30,50``, parsed and checked.

Each threshold defines its own "flagged" (the report's overlap fraction or longest run at least
that), so one run shows whether the effect on the score grows with the degree of leakage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from contam_cli.errors import ArgumentError
from contam_cli.features.impact.values import Level, LevelScore

__all__ = ["DEFAULT_LEVELS", "parse_levels"]

DEFAULT_LEVELS = "overlap>=0.2,0.5,0.8"
"""The levels used when none are asked for (on a report with overlap fractions)."""

_SCORES: dict[str, LevelScore] = {
    "overlap": "overlap_fraction",
    "overlap_fraction": "overlap_fraction",
    "run": "longest_run",
    "longest_run": "longest_run",
}
_FORM = "expected overlap>=T[,T...] or run>=T[,T...] (e.g. overlap>=0.2,0.5,0.8)"


def parse_levels(spec: str | Sequence[str | Level]) -> tuple[Level, ...]:
    """The levels of ``spec``: strings like ``overlap>=0.2,0.5`` (several joined by ``;`` or
    given as a list) or :class:`Level` values; ``"none"`` or ``""`` gives none. Thresholds of
    one score are sorted, least strict first, and repeats dropped.

    >>> [lv.label for lv in parse_levels("run>=30,13; overlap>=0.5")]
    ['run >= 13', 'run >= 30', 'overlap >= 0.5']
    >>> parse_levels("none")
    ()
    """
    items: list[str | Level] = [spec] if isinstance(spec, str) else list(spec)
    out: list[Level] = []
    for item in items:
        if isinstance(item, Level):
            out.append(_checked(item.score, item.threshold, repr(item)))
            continue
        if not isinstance(item, str):
            raise ArgumentError(f"levels: {_FORM}, got {item!r}")
        for part in item.split(";"):
            out.extend(_parse_one(part.strip()))
    return _ordered(out)


def _parse_one(text: str) -> list[Level]:
    if text.lower() in ("", "none"):
        return []
    name, sep, values = text.partition(">=")
    score = _SCORES.get(name.strip().lower())
    if not sep or score is None:
        raise ArgumentError(f"levels: {_FORM}, got {text!r}")
    levels = []
    for value in values.split(","):
        try:
            threshold = float(value)
        except ValueError:
            raise ArgumentError(f"levels: {value.strip()!r} in {text!r} is not a number") from None
        levels.append(_checked(score, threshold, text))
    return levels


def _checked(score: str, threshold: float, text: str) -> Level:
    if score not in ("overlap_fraction", "longest_run"):
        raise ArgumentError(f"levels: unknown score {score!r} in {text}")
    if score == "overlap_fraction":
        if not 0.0 < threshold <= 1.0:
            raise ArgumentError(f"levels: an overlap threshold lies in (0, 1], got {threshold:g}")
        return Level("overlap_fraction", float(threshold))
    if not (math.isfinite(threshold) and threshold >= 1 and threshold == int(threshold)):
        raise ArgumentError(f"levels: a run threshold is a whole number of tokens >= 1, got {text}")
    return Level("longest_run", float(threshold))


def _ordered(levels: list[Level]) -> tuple[Level, ...]:
    """Scores in the order first given, each one's thresholds ascending, without repeats."""
    scores = list(dict.fromkeys(lv.score for lv in levels))
    return tuple(
        Level(score, t)
        for score in scores
        for t in sorted({lv.threshold for lv in levels if lv.score == score})
    )
