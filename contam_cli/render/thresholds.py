"""What `contam calibrate` prints: per source its thresholds, then one summary line."""

from __future__ import annotations

from contam_cli.policy.thresholds import Thresholds
from contam_cli.render.text import columns

__all__ = ["render_thresholds"]


def render_thresholds(t: Thresholds, output: str) -> str:
    """One row per source (name order), then where the file went.

    >>> from contam_cli.policy import SourceThreshold
    >>> t = Thresholds({"web": SourceThreshold(14, 0.25, 150, True)}, n=13, percentile=99.0)
    >>> print(render_thresholds(t, "t.json"), end="")
    source  controls  run threshold  overlap threshold  well estimated
    web          150             14              0.250  yes
    1 source, 13-grams, 99th percentile -> t.json

    A fuzzy threshold (``contam calibrate --fuzzy``) gets its own column.
    """
    fuzzy = any(v.fuzzy is not None for v in t.values())
    rows = [
        [
            name,
            "-" if v.controls is None else str(v.controls),
            "-" if v.longest_run is None else str(v.longest_run),
            "-" if v.overlap_fraction is None else f"{v.overlap_fraction:.3f}",
            *(["-" if v.fuzzy is None else f"{v.fuzzy:.3f}"] if fuzzy else []),
            "yes" if v.well_estimated else "no",
        ]
        for name, v in sorted(t.items())
    ]
    headers = ["source", "controls", "run threshold", "overlap threshold"]
    headers += ["fuzzy threshold"] * fuzzy + ["well estimated"]
    lines = columns(headers, rows, "lrrr" + "r" * fuzzy + "l")
    plural = "" if len(t) == 1 else "s"
    line = f"{len(t)} source{plural}"
    if t.n is not None:
        line += f", {t.n}-grams"
    if t.percentile is not None:
        line += f", {_ordinal(t.percentile)} percentile"
    if t.min_run is not None:
        line += f", runs of at least {t.min_run}"
    return "".join(x + "\n" for x in [*lines, f"{line} -> {output}"])


def _ordinal(q: float) -> str:
    """``99`` -> ``99th``, ``99.9`` -> ``99.9th``, ``1`` -> ``1st``.

    >>> [_ordinal(q) for q in (1.0, 2, 3, 11, 12, 21, 99.5, 100)]
    ['1st', '2nd', '3rd', '11th', '12th', '21st', '99.5th', '100th']
    """
    text = f"{q:g}"
    if "." in text or 10 <= int(q) % 100 <= 20:
        return f"{text}th"
    return text + {1: "st", 2: "nd", 3: "rd"}.get(int(q) % 10, "th")
