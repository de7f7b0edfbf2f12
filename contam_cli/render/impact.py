"""What ``contam impact`` prints: a text table, JSON (``contam.impact/1``), Markdown, an SVG chart.

Pure functions of an :class:`~contam_cli.features.impact.Impact`. The text and Markdown share
their tables (one set of rows, two layouts); lists of unmatched ids are cut to
:data:`LISTED_IDS` there (the JSON has them all), so a summary of any eval set stays small (a
GitHub step summary holds at most 1 MiB).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from contam_cli.features.impact import Group, Impact, Matching, Split, Subgroup
from contam_cli.render.impact_json import IMPACT_SCHEMA, impact_to_dict, render_impact_json
from contam_cli.render.svg import interval_plot
from contam_cli.render.text import columns, one_line

__all__ = [
    "IMPACT_SCHEMA",
    "LISTED_IDS",
    "impact_svg",
    "impact_to_dict",
    "render_impact_json",
    "render_impact_markdown",
    "render_impact_table",
]

LISTED_IDS = 20
"""Unmatched ids listed in the text and Markdown outputs (JSON lists every one)."""

Table = tuple[list[str], list[list[str]], str]
"""Headers, rows, and the justification of each column (``l`` or ``r``)."""


# -- shared rows -----------------------------------------------------------------------------


def _num(value: float | None, sign: bool = False) -> str:
    """A value with three decimals (signed for a difference); ``-`` when there is none.

    >>> _num(0.5), _num(0.1, sign=True), _num(None)
    ('0.500', '+0.100', '-')
    """
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _interval(interval: tuple[float, float] | None, sign: bool = False) -> str:
    if interval is None:
        return "-"
    return f"[{_num(interval[0], sign)}, {_num(interval[1], sign)}]"


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.4f}"


def _subsets_table(impact: Impact) -> Table:
    s, metric = impact.overall, impact.metric
    rows = [
        [name, f"{g.n:,}", _num(g.value), _interval(g.interval)]
        for name, g in _groups(s)
        if name != "unscorable" or g.n
    ]
    return ["subset", "n", metric, _ci(impact)], rows, "lrrl"


def _groups(s: Split) -> list[tuple[str, Group]]:
    return [
        ("full", s.full),
        ("clean", s.clean),
        ("flagged", s.flagged),
        ("unscorable", s.unscorable),
    ]


def _differences_table(impact: Impact) -> Table:
    s = impact.overall
    rows = [
        [name, _num(d.value, True), _interval(d.interval, True)]
        for name, d in (
            ("full - clean", s.full_minus_clean),
            ("flagged - clean", s.flagged_minus_clean),
        )
    ]
    return ["difference", "value", _ci(impact)], rows, "lrl"


def _breakdown_table(impact: Impact) -> Table | None:
    subs: Sequence[Subgroup] = (*impact.by_rule, *impact.by_source)
    if not subs:
        return None
    m, ci = impact.metric, _ci(impact)
    headers = ["flagged by", "name", "n", m, ci, "- clean", ci, "p"]
    rows = [
        [
            sub.kind,
            sub.name,
            f"{sub.group.n:,}",
            _num(sub.group.value),
            _interval(sub.group.interval),
            _num(sub.minus_clean.value, True),
            _interval(sub.minus_clean.interval, True),
            _p(sub.p_value),
        ]
        for sub in subs
    ]
    return headers, rows, "llrrlrlr"


def _levels_table(impact: Impact) -> Table | None:
    if not impact.levels:
        return None
    m, ci = impact.metric, _ci(impact)
    headers = ["level", "flagged", "clean", f"clean {m}", ci, f"flagged {m}", ci]
    headers += ["full - clean", ci, "p"]
    splits = [("as flagged", impact.overall)] + [(r.level.label, r.split) for r in impact.levels]
    rows = [
        [
            label,
            f"{s.flagged.n:,}",
            f"{s.clean.n:,}",
            _num(s.clean.value),
            _interval(s.clean.interval),
            _num(s.flagged.value),
            _interval(s.flagged.interval),
            _num(s.full_minus_clean.value, True),
            _interval(s.full_minus_clean.interval, True),
            _p(s.p_value),
        ]
        for label, s in splits
    ]
    return headers, rows, "lrrrlrlrlr"


def _ci(impact: Impact) -> str:
    return f"{impact.confidence:.0%} interval"


def _heading(impact: Impact) -> str:
    return (
        f"{impact.metric} ('{impact.score_field}') on the clean subset beside the full set; "
        f"{_ci(impact)}s: percentile bootstrap, {impact.bootstrap:,} resamples, seed {impact.seed}"
    )


def _matched_line(m: Matching) -> str:
    return (
        f"matched by {m.by}: {m.matched:,} of {m.report_examples:,} report examples, "
        f"{m.matched:,} of {m.results_records:,} results records"
    )


def _p_line(impact: Impact) -> str:
    return (
        f"p (flagged score higher than clean; one-sided permutation test, "
        f"{impact.bootstrap:,} permutations): {_p(impact.overall.p_value)}"
    )


def _missing(m: Matching, code: bool) -> list[str]:
    """One line per direction: how many are unmatched, and the first few of them."""
    out = []
    for ids, what in (
        (m.report_only, "report examples have no result"),
        (m.results_only, "results records are not in the report"),
    ):
        if not ids:
            out.append(f"0 {what}")
            continue
        shown = ", ".join(_code(i) if code else one_line(i) for i in ids[:LISTED_IDS])
        more = (
            f", and {len(ids) - LISTED_IDS:,} more (all in the JSON)"
            if len(ids) > LISTED_IDS
            else ""
        )
        out.append(f"{len(ids):,} {what}: {shown}{more}")
    return out


def _flat(text: str) -> str:
    """`text` on one line, for Markdown: whitespace runs as one space, other control characters
    left out (an ESC must not reach a terminal the summary is printed on).

    >>> _flat("a\\nb\\x1b[2Jc\\x00")
    'a b[2Jc'
    """
    if any(c in text for c in "\r\n\t\v\f\x85\u2028\u2029"):
        text = " ".join(text.split())
    return "".join(ch for ch in text if ch >= " " and ch != "\x7f")


# -- text ------------------------------------------------------------------------------------


def render_impact_table(impact: Impact) -> str:
    """The plain-text summary (what ``contam impact`` prints by default)."""
    lines = [_heading(impact), _matched_line(impact.matching)]
    if impact.lm_eval_filter is not None:
        lines.append(f"lm-eval filter: {impact.lm_eval_filter}")
    for table in (_subsets_table(impact), _differences_table(impact)):
        lines += ["", *columns(*table)]
    lines.append(_p_line(impact))
    for extra in (_breakdown_table(impact), _levels_table(impact)):
        if extra is not None:
            lines += ["", *columns(*extra)]
    lines += ["", *_missing(impact.matching, code=False)]
    return "".join(line + "\n" for line in lines)


# -- Markdown --------------------------------------------------------------------------------


def render_impact_markdown(impact: Impact) -> str:
    """GitHub-flavoured Markdown: for a paper's appendix or a CI step summary."""
    m = impact.matching
    where = f" of {_code(impact.results_path)}" if impact.results_path else ""
    lines = [
        f"### Contamination impact on {impact.metric}",
        "",
        f"{_code(impact.score_field)}{where}, {_matched_line(m)}. The score on the clean subset "
        "beside the full set (as in the GPT-3 paper's contamination study, Appendix C); "
        f"{_ci(impact)}s: percentile bootstrap, {impact.bootstrap:,} resamples, seed "
        f"{impact.seed}.",
    ]
    if impact.lm_eval_filter is not None:
        lines[-1] += f" lm-eval filter {_code(impact.lm_eval_filter)}."
    for table in (_subsets_table(impact), _differences_table(impact)):
        lines += ["", *_md_table(table)]
    lines += ["", _p_line(impact) + "."]
    for title, extra in (
        ("Flagged examples by rule and by source", _breakdown_table(impact)),
        ("By strictness level (flagged: the score at least the threshold)", _levels_table(impact)),
    ):
        if extra is not None:
            lines += ["", f"#### {title}", "", *_md_table(extra)]
    lines += ["", "#### Not matched", "", *(f"- {x}" for x in _missing(m, code=True))]
    return "".join(line + "\n" for line in lines)


def _md_table(table: Table) -> list[str]:
    headers, rows, justify = table
    rule = ["--:" if j == "r" else "---" for j in justify]
    return [_md_row(headers), _md_row(rule), *(_md_row(r) for r in rows)]


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(_md_cell(c) for c in cells) + " |"


def _md_cell(text: str) -> str:
    return _flat(text).replace("\\", "\\\\").replace("|", "\\|")


def _code(text: str) -> str:
    """An id as a Markdown code span (a longer fence when it holds backticks).

    >>> _code("q1"), _code("a`b")
    ('`q1`', '`` a`b ``')
    """
    text = _flat(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    if not longest:
        return f"`{text}`"
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


# -- SVG -------------------------------------------------------------------------------------


def impact_svg(impact: Impact) -> str:
    """The clean and flagged scores with their intervals per strictness level (the report's own
    flags first), the full score as a dashed line."""
    splits = [("as flagged", impact.overall)] + [(r.level.label, r.split) for r in impact.levels]
    groups = [[s.clean for _, s in splits], [s.flagged for _, s in splits]]
    values = np.array([[_nan(g.value) for g in row] for row in groups])
    lows = np.array([[_nan(g.interval and g.interval[0]) for g in row] for row in groups])
    highs = np.array([[_nan(g.interval and g.interval[1]) for g in row] for row in groups])
    full = impact.overall.full.value
    return interval_plot(
        [label for label, _ in splits],
        values,
        lows,
        highs,
        title=f"{impact.metric} of clean and flagged examples (dashed: all)",
        y_label=f"{impact.metric} ({impact.score_field})",
        series=["clean", "flagged"],
        reference=full,
    )


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
