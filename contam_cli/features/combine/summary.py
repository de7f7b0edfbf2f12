"""The combined report's summary, details, warnings and provenance, from the joined inputs and
the measurements (the shape is documented in docs/report-schema.md, ``summary.combination``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from contam_cli.features.combine.inputs import ScoreInput
from contam_cli.features.combine.join import COMBINED, Joined
from contam_cli.features.combine.measure import Deployment, Measured
from contam_cli.io.discover import sha256_file
from contam_cli.report import ExampleTable, Method

__all__ = [
    "LISTED_IDS",
    "deployment_stats",
    "example_details",
    "input_stats",
    "method_stats",
    "provenance",
    "report_warnings",
]

#: Ids listed by name where a count could be long (labels in no input, and the like).
LISTED_IDS = 20


def example_details(
    read: Sequence[ScoreInput], joined: Joined, label_of: np.ndarray
) -> dict[str, dict[int, Any]]:
    """``details.label`` of labelled examples, ``details.combined`` (the inputs' reasons, the
    inputs that lack the example) where there is something to say."""
    combined: dict[int, dict[str, Any]] = {}
    for k, inp in enumerate(read):
        if inp.report is not None:
            at = joined.at[k]
            for j, rs in inp.report.examples.reasons.items():
                entry = combined.setdefault(int(at[j]), {})
                entry.setdefault("input_reasons", []).extend(
                    {**r.to_dict(), "input": inp.path} for r in rs
                )
        for e in np.flatnonzero(joined.missing(k)).tolist():
            combined.setdefault(e, {}).setdefault("missing_from", []).append(inp.path)
    labelled = {int(e): {"label": int(label_of[e])} for e in np.flatnonzero(label_of >= 0)}
    return {COMBINED: combined, "label": labelled}


def input_stats(
    read: Sequence[ScoreInput], methods: Sequence[Sequence[Method]], joined: Joined
) -> list[dict[str, Any]]:
    return [
        {
            "path": inp.path,
            "methods": [m.name for m in ms],
            "examples": len(inp.ids),
            "missing": int(joined.missing(k).sum()),
        }
        for k, (inp, ms) in enumerate(zip(read, methods))
    ]


def deployment_stats(deployment: Deployment | None, measured: Measured) -> dict[str, Any] | None:
    if deployment is None:
        return None
    documents = deployment.documents
    return {
        "prevalence": deployment.prevalence,
        "documents": int(documents) if float(documents).is_integer() else documents,
        "rows": measured.rows,
    }


def method_stats(
    all_methods: Sequence[Method],
    methods: Sequence[Sequence[Method]],
    joined: Joined,
    table: ExampleTable,
    measured: Measured,
) -> dict[str, dict[str, Any]]:
    missing = {m.name: int(joined.missing(k).sum()) for k, ms in enumerate(methods) for m in ms}
    none = {"auc": None, "auc_low": None, "auc_high": None}
    return {
        m.name: {
            "detector": m.detector,
            "direction": m.direction,
            "weight": measured.weights.get(m.name),
            "scored": int((~np.isnan(table.scores[m.name])).sum()),
            "missing": missing.get(m.name, 0),
            **(none if measured.aucs is None else measured.aucs[m.name]),
        }
        for m in all_methods
    }


def report_warnings(
    read: Sequence[ScoreInput],
    joined: Joined,
    flagged: np.ndarray,
    scores: Mapping[str, np.ndarray],
    label_stats: Mapping[str, Any] | None,
    weight_by_auc: bool,
) -> list[str]:
    out = []
    for k, inp in enumerate(read):
        if inp.report is None:
            continue
        out += [f"{inp.path}: {w}" for w in inp.report.warnings]
        theirs = joined.at[k][np.flatnonzero(inp.report.examples.flagged)]
        lost = [joined.ids[e] for e in theirs.tolist() if not flagged[e]]
        if lost:
            out.append(
                f"{inp.path}: {len(lost)} example(s) its own rules flagged are not flagged by the "
                f"combined rule: {_ids(lost)} (their reasons are in "
                "details.combined.input_reasons; without --combined-only, they are flagged)"
            )
    for name, values in scores.items():
        scored = values[~np.isnan(values)]
        if scored.size < 2:
            out.append(f"method {name!r} scored fewer than 2 examples: its z-scores are 0")
        elif not weight_by_auc and bool((scored == scored[0]).all()):
            # NOTE: a z-score of 0 everywhere still counts in each example's mean: it pulls every
            # combined score toward 0 (a scan's overlap_fraction all 0, say).
            out.append(
                f"method {name!r} gave every example the same score ({scored[0]:g}): its z-scores "
                "are 0 and it pulls every combined score toward 0 (drop its input, or weigh by "
                "--weight-by-auc)"
            )
    if label_stats and label_stats["not_in_inputs_count"]:
        unknown = label_stats["not_in_inputs"]
        out.append(
            f"{label_stats['not_in_inputs_count']} labelled id(s) are in no input: "
            f"{_ids(unknown, label_stats['not_in_inputs_count'])}"
        )
    if weight_by_auc:
        out.append(
            "the weights were fitted on the same labels the AUCs are measured on: the combined "
            "AUC is optimistic (measure it on held-out labels)"
        )
    return out


def _ids(ids: Sequence[str], total: int | None = None) -> str:
    shown = ", ".join(ids[:LISTED_IDS])
    more = (len(ids) if total is None else total) - min(len(ids), LISTED_IDS)
    return shown + (f" and {more} more" if more > 0 else "")


def provenance(read: Sequence[ScoreInput], labels: Any) -> dict[str, Any]:
    def sha(path: str) -> str | None:
        return None if path.startswith("<input ") else sha256_file(path)

    return {
        "combined": [
            {
                "path": inp.path,
                "kind": inp.kind,
                "command": None if inp.report is None else inp.report.command,
                "sha256": sha(inp.path),
            }
            for inp in read
        ],
        "labels": None
        if labels is None or isinstance(labels, Mapping)
        else {"path": str(labels), "sha256": sha256_file(labels)},
    }
