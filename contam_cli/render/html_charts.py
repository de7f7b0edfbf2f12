"""The HTML report's pictures and the combination's tables: score distributions (flagged against
the rest), ROC curves when the report holds labels, overlap against run length for a scan, and,
for a combined report, each method's AUC and weight and the deployment view.

The charts are :mod:`contam_cli.render.svg`'s, inlined; the scatter is down-sampled to a fixed
number of points, so a report of any size gives a page of bounded size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from contam_cli.render import svg
from contam_cli.render.html_parts import el, esc, fmt_num
from contam_cli.report import Report
from contam_cli.stats import auc_from_labels, orient, roc_curve

__all__ = ["HISTOGRAM_METHODS", "combination_section", "figures_section", "labels_of"]

#: Methods given a histogram at most (the first ones: the report's most decisive).
HISTOGRAM_METHODS = 4
#: Points drawn in the scatter at most.
SCATTER_POINTS = 4000


def figures_section(report: Report) -> str:
    """The pictures, or nothing when no example has a score."""
    figures = [*_histograms(report), *_scatter(report), *_roc(report)]
    if not figures:
        return ""
    return el(
        "section",
        el("h2", "Pictures") + el("div", "".join(figures), class_="figures"),
        id="pictures",
    )


def labels_of(report: Report) -> tuple[np.ndarray, np.ndarray]:
    """The labelled examples (``details["label"] = {"label": 0 | 1}``), as indices and labels."""
    rows = report.examples.details.get("label", {})
    pairs = [
        (e, int(d["label"]))
        for e, d in sorted(rows.items())
        if isinstance(d, Mapping) and d.get("label") in (0, 1)
    ]
    idx = np.array([e for e, _ in pairs], dtype=np.int64)
    return idx, np.array([y for _, y in pairs], dtype=np.int64)


def _figure(chart: str, caption: str) -> str:
    return el("figure", chart + el("figcaption", esc(caption)))


def _histograms(report: Report) -> list[str]:
    scorable = report.scorable_mask()
    flagged = report.flagged_mask()
    out = []
    for m in report.methods[:HISTOGRAM_METHODS]:
        v = report.examples.scores[m.name]
        keep = scorable & ~np.isnan(v)
        if not keep.any():
            continue
        groups: dict[str, np.ndarray]
        if flagged[keep].any() and (~flagged[keep]).any():
            groups = {"flagged": v[keep & flagged], "not flagged": v[keep & ~flagged]}
        else:
            groups = {"flagged" if flagged[keep].any() else "all examples": v[keep]}
        chart = svg.histogram(
            groups,
            title=f"{m.name} by flag",
            x_label=m.name,
            normalize=len(groups) > 1,
        )
        caption = f"{m.name}: {m.direction} is more suspicious."
        if len(groups) > 1:
            caption += " Each group's share of its own examples per bin."
        out.append(_figure(chart, caption))
    return out


def _scatter(report: Report) -> list[str]:
    scores = report.examples.scores
    if "longest_run" not in scores or "overlap_fraction" not in scores:
        return []
    groups = np.where(report.flagged_mask(), "flagged", "not flagged")
    chart = svg.scatter(
        scores["longest_run"],
        scores["overlap_fraction"],
        groups,
        title="overlap against longest run",
        x_label="longest run (tokens)",
        y_label="overlap fraction",
        max_points=SCATTER_POINTS,
    )
    caption = "One dot per scorable example; a long run with a low overlap is a short leak in a "
    caption += "long example."
    return [_figure(chart, caption)]


def _roc(report: Report) -> list[str]:
    idx, y = labels_of(report)
    if not (y == 1).any() or not (y == 0).any():
        return []
    curves: dict[str, tuple[np.ndarray, np.ndarray, float | None]] = {}
    for m in report.methods:
        x = orient(report.examples.scores[m.name][idx], m.direction)
        curve = roc_curve(x, y)
        if curve is not None:
            curves[m.name] = (curve[0], curve[1], auc_from_labels(x, y))
    if not curves:
        return []
    chart = svg.roc_curves(curves, title="ROC curves against the labels")
    caption = f"{int((y == 1).sum()):,} contaminated and {int((y == 0).sum()):,} clean labelled "
    caption += "examples; each method oriented so that higher is more suspicious."
    return [_figure(chart, caption)]


# -- the combination (contam report) ------------------------------------------------------------


def combination_section(report: Report) -> str:
    """The combined report's methods (AUC, weight) and deployment view; nothing for others."""
    combo = report.stats.get("combination")
    if not isinstance(combo, Mapping):
        return ""
    parts = [el("h2", "Combination")]
    facts = [
        ("threshold", _value(combo.get("threshold"))),
        ("weights", "by AUC" if combo.get("weight_by_auc") else "equal"),
        ("inputs", ", ".join(_input_name(x) for x in combo.get("inputs") or []) or "–"),
    ]
    parts.append(el("dl", "".join(el("dt", k) + el("dd", esc(v)) for k, v in facts), class_="kv"))
    methods = combo.get("methods")
    if isinstance(methods, Mapping) and methods:
        parts.append(_methods_table(methods))
        parts.append(_auc_figure(methods))
    deployment = combo.get("deployment")
    if isinstance(deployment, Mapping):
        parts.append(_deployment(deployment))
    return el("section", "".join(parts), id="combination")


def _input_name(x: Any) -> str:
    if isinstance(x, Mapping):
        return str(x.get("path") or x.get("name") or x.get("command") or "?")
    return str(x)


def _value(v: Any, spec: str = "") -> str:
    if isinstance(v, bool) or v is None or not isinstance(v, (int, float)):
        return "–" if v is None else str(v)
    if spec:
        return format(v, spec)
    return fmt_num(float(v), isinstance(v, int))


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> str:
    head = "".join(
        el("th", esc(h), class_="num" if i in numeric else None) for i, h in enumerate(headers)
    )
    body = "".join(
        el(
            "tr",
            "".join(
                el("td", esc(c), class_="num" if i in numeric else None) for i, c in enumerate(row)
            ),
        )
        for row in rows
    )
    return el("table", el("thead", el("tr", head)) + el("tbody", body))


def _methods_table(methods: Mapping[str, Any]) -> str:
    headers = ["method", "detector", "direction", "weight", "scored", "missing", "AUC", "95% CI"]
    rows = []
    for name, d in methods.items():
        d = d if isinstance(d, Mapping) else {}
        low, high = d.get("auc_low"), d.get("auc_high")
        ci = "–" if low is None or high is None else f"[{_value(low)}, {_value(high)}]"
        rows.append(
            [
                str(name),
                str(d.get("detector", "–")),
                str(d.get("direction", "–")),
                _value(d.get("weight")),
                _value(d.get("scored")),
                _value(d.get("missing")),
                _value(d.get("auc")),
                ci,
            ]
        )
    return el("h3", "Methods") + _table(headers, rows, {3, 4, 5, 6, 7})


def _auc_figure(methods: Mapping[str, Any]) -> str:
    named = [
        (str(k), d)
        for k, d in methods.items()
        if isinstance(d, Mapping) and isinstance(d.get("auc"), (int, float))
    ]
    if not named:
        return ""

    def get(d: Mapping[str, Any], key: str) -> float:
        v = d.get(key)
        return float(v) if isinstance(v, (int, float)) else float("nan")

    chart = svg.interval_plot(
        [k for k, _ in named],
        [get(d, "auc") for _, d in named],
        [get(d, "auc_low") for _, d in named],
        [get(d, "auc_high") for _, d in named],
        title="AUC per method",
        y_label="AUC",
        reference=0.5,
    )
    return _figure(chart, "AUC against the labels with its bootstrap interval; 0.5 is chance.")


def _deployment(dep: Mapping[str, Any]) -> str:
    prevalence, documents = dep.get("prevalence"), dep.get("documents")
    intro = (
        f"At prevalence {_value(prevalence)} over {_value(documents)} documents: the expected "
        "review queue of each method (precision at that base rate, not the false-positive rate, "
        "is what a reviewer meets)."
    )
    headers = ["method", "recall", "FPR", "precision", "flagged", "true", "false", "missed"]
    keys = ["recall", "fpr", "precision", "flagged", "true", "false", "missed"]
    rows = [
        [str(r.get("method", "–")), *(_value(r.get(k)) for k in keys)]
        for r in dep.get("rows") or []
        if isinstance(r, Mapping)
    ]
    return el("h3", "Deployment") + el("p", esc(intro)) + _table(headers, rows, set(range(1, 8)))
