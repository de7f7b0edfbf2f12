"""The plain-text sections of a combined report (``contam report``) below its examples table:
each method's AUC with its interval and weight, the labels, and the deployment table.

The same numbers as the Markdown renderer's sections, aligned for a terminal; a report without
a combination (a scan, a probe run) has none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contam_cli.render.text import columns
from contam_cli.report import Report

__all__ = ["combination_lines"]

#: Methods listed by name, at most (the JSON report has every one).
LISTED = 20


def combination_lines(report: Report) -> list[str]:
    """The lines of the methods, labels and deployment sections (none for other reports)."""
    found = report.stats.get("combination")
    if not isinstance(found, Mapping):
        return []
    return [*_methods(found), *_labels(found), *_deployment(found)]


def _methods(combination: Mapping[str, Any]) -> list[str]:
    methods = combination.get("methods") or {}
    if not methods:
        return []
    rows = []
    for name, m in list(methods.items())[:LISTED]:
        interval = "" if m.get("auc_low") is None else f"[{m['auc_low']:.3f}, {m['auc_high']:.3f}]"
        rows.append(
            [
                name,
                str(m.get("direction") or ""),
                _fixed(m.get("weight")),
                str(m.get("scored")),
                str(m.get("missing")),
                _fixed(m.get("auc")),
                interval,
            ]
        )
    headers = ["method", "direction", "weight", "scored", "missing", "AUC", "95% interval"]
    lines = ["", *columns(headers, rows, "llrrrrl")]
    if len(methods) > LISTED:
        lines.append(f"... {len(methods) - LISTED} more methods (in --format json)")
    return lines


def _labels(combination: Mapping[str, Any]) -> list[str]:
    labels = combination.get("labels")
    if not labels:
        return []
    line = (
        f"labels: {labels['positives']} contaminated, {labels['negatives']} clean, "
        f"{labels['unlabelled']} unlabelled"
    )
    count = labels.get("not_in_inputs_count", 0)
    if count:
        line += f"; {count} labelled ids are in no input"
    return ["", line]


def _deployment(combination: Mapping[str, Any]) -> list[str]:
    d = combination.get("deployment")
    if not d:
        return []
    rows = d["rows"]
    shown = rows if len(rows) <= LISTED else [*rows[: LISTED - 1], rows[-1]]
    table = [
        [
            r["method"],
            *(_rate(r[k]) for k in ("recall", "fpr", "precision")),
            *(_count(r[k]) for k in ("flagged", "true", "false", "missed")),
        ]
        for r in shown
    ]
    headers = ["method", "recall", "FPR", "precision", "flagged", "true", "false", "missed"]
    lines = [
        "",
        f"at prevalence {d['prevalence']:g} over {d['documents']:,g} documents, each method's "
        "rule (its z-score >= the threshold; combined: the flag rule), expected counts:",
        *columns(headers, table, "lrrrrrrr"),
    ]
    if len(rows) > LISTED:
        lines.append(f"... {len(rows) - LISTED} more methods (in --format json)")
    return lines


def _fixed(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"
