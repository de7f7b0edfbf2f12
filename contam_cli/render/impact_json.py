"""The JSON of ``contam impact`` (``contam.impact/1``): versioned, deterministic, strict.

Keys come in a fixed order, floats are rounded to 12 places (which drops binary noise such as
0.6 - 0.5 = 0.09999999999999998), and a value that does not exist (the mean of an empty subset,
an interval with an empty side) is ``null``, never NaN.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from contam_cli._version import __version__
from contam_cli.features.impact import Difference, Group, Impact, Split, Subgroup

__all__ = ["IMPACT_SCHEMA", "impact_to_dict", "render_impact_json"]

IMPACT_SCHEMA = "contam.impact/1"
"""The layout version; bumped on any incompatible change."""
_DECIMALS = 12


def impact_to_dict(impact: Impact) -> dict[str, Any]:
    """The ``contam.impact/1`` document: fixed key order, no NaN (null instead)."""
    m = impact.matching
    return {
        "schema": IMPACT_SCHEMA,
        "tool": {"name": "contam", "version": __version__},
        "report": impact.report_path,
        "results": impact.results_path,
        "metric": impact.metric,
        "score_field": impact.score_field,
        "lm_eval_filter": impact.lm_eval_filter,
        "bootstrap": {
            "resamples": impact.bootstrap,
            "seed": impact.seed,
            "confidence": impact.confidence,
            "interval": "percentile",
            "test": "permutation, one-sided: flagged > clean",
        },
        "matching": {
            "by": m.by,
            "report_examples": m.report_examples,
            "results_records": m.results_records,
            "matched": m.matched,
            "report_only": {"count": len(m.report_only), "ids": list(m.report_only)},
            "results_only": {"count": len(m.results_only), "ids": list(m.results_only)},
        },
        "overall": _split_dict(impact.overall),
        "by_rule": [_subgroup_dict(s) for s in impact.by_rule],
        "by_source": [_subgroup_dict(s) for s in impact.by_source],
        "levels": [
            {
                "label": r.level.label,
                "score": r.level.score,
                "threshold": _float(r.level.threshold),
                **_split_dict(r.split),
            }
            for r in impact.levels
        ],
    }


def render_impact_json(impact: Impact) -> str:
    """:func:`impact_to_dict` as indented JSON text, ending in a newline."""
    return orjson.dumps(impact_to_dict(impact), option=orjson.OPT_INDENT_2).decode() + "\n"


def _float(value: float | None) -> float | None:
    """A JSON number: rounded, and None for a missing or non-finite value.

    >>> _float(0.6 - 0.5), _float(math.nan), _float(None)
    (0.1, None, None)
    """
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), _DECIMALS)


def _group_dict(g: Group) -> dict[str, Any]:
    low, high = g.interval if g.interval is not None else (None, None)
    return {"n": g.n, "value": _float(g.value), "low": _float(low), "high": _float(high)}


def _difference_dict(d: Difference) -> dict[str, Any]:
    low, high = d.interval if d.interval is not None else (None, None)
    return {"value": _float(d.value), "low": _float(low), "high": _float(high)}


def _split_dict(s: Split) -> dict[str, Any]:
    return {
        "full": _group_dict(s.full),
        "clean": _group_dict(s.clean),
        "flagged": _group_dict(s.flagged),
        "unscorable": _group_dict(s.unscorable),
        "full_minus_clean": _difference_dict(s.full_minus_clean),
        "flagged_minus_clean": _difference_dict(s.flagged_minus_clean),
        "p_value": _float(s.p_value),
    }


def _subgroup_dict(s: Subgroup) -> dict[str, Any]:
    return {
        "name": s.name,
        **_group_dict(s.group),
        "minus_clean": _difference_dict(s.minus_clean),
        "p_value": _float(s.p_value),
    }
