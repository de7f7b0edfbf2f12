"""build_report(): several detectors' scores joined, combined, measured against labels.

An example is flagged when the combined score is at or above the threshold
(``combined-zscore``), or when an input report's own rules flagged it (a scan's ``min-run``,
``min-overlap``...: their reasons are the example's too): a verbatim leak a scan found stays a
finding, whatever the other methods' z-scores say. With ``input_rules=False`` the combined rule
alone flags, and a warning names the examples an input flagged that it does not. The recall,
AUC and precision at prevalence of the ``combined`` row describe the combined rule either way.
The inputs' reasons are also kept, per example, in ``details.combined.input_reasons``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from contam_cli.errors import ArgumentError, UsageError
from contam_cli.features.combine.inputs import read_input
from contam_cli.features.combine.join import (
    COMBINED,
    Joined,
    Rename,
    join,
    joined_column,
    rename_methods,
    table_for,
)
from contam_cli.features.combine.labels import read_labels
from contam_cli.features.combine.measure import Deployment, measure
from contam_cli.features.combine.states import carried_states
from contam_cli.features.combine.summary import (
    LISTED_IDS,
    deployment_stats,
    example_details,
    input_stats,
    method_stats,
    provenance,
    report_warnings,
)
from contam_cli.policy.baseline import FailOn
from contam_cli.report import CONTROL_SUFFIX, Direction, Method, Reason, Report

__all__ = ["COMBINED_METHOD", "build_report", "normalization_disagreement"]

COMBINED_METHOD = Method(
    COMBINED,
    COMBINED,
    "higher",
    description="weighted mean of the methods' oriented z-scores (over the methods that scored "
    "the example)",
)


def build_report(
    inputs: Sequence[Report | str | Path],
    *,
    labels: str | Path | Mapping[str, Any] | None = None,
    directions: Mapping[str, str] | None = None,
    weight_by_auc: bool = False,
    threshold: float = 2.0,
    prevalence: float | None = None,
    documents: float | None = None,
    method_names: Sequence[Rename | str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    redact: bool = False,
    input_rules: bool = True,
    fail_on: FailOn | None = None,
) -> Report:
    """The combined report of `inputs` (reports, or JSONL/CSV files of ``{"id", method: score}``).

    `labels`: a JSONL/CSV file (or a mapping id -> 0/1) of known contaminated (1) and clean (0)
    examples, for AUCs, `weight_by_auc` and the deployment rows. `directions`: method ->
    ``higher``/``lower`` overrides. `method_names`: renames (``INPUT:OLD=NEW``). Examples are
    flagged when the combined score >= `threshold`. `prevalence` (and `documents`, by default the
    number of examples): each rule's expected precision and review queue. `redact`: no eval or
    corpus text in the report (as when any input report was redacted). `input_rules`: an
    example an input report flagged is flagged too (False: the combined rule alone flags).
    Input reports scanned with a baseline carry their findings' states (``details.baseline``,
    see :mod:`~contam_cli.features.combine.states`); `fail_on` is the gate recorded with them
    (None: the one the inputs recorded).
    """
    deployment = _check(inputs, labels, weight_by_auc, threshold, prevalence, documents, bootstrap)
    read = [read_input(value, k) for k, value in enumerate(inputs, 1)]
    renames = [r if isinstance(r, Rename) else Rename.parse(r) for r in method_names or ()]
    methods = _directed(rename_methods(read, renames), directions or {})
    joined = join(read)
    if deployment is not None and math.isnan(deployment.documents):
        deployment = replace(deployment, documents=len(joined.ids))
    scores = {
        m.name: joined_column(inp.scores[old.name], joined.rows[k])
        for k, (inp, ms) in enumerate(zip(read, methods))
        for old, m in zip(inp.methods, ms)
    }
    label_of, label_stats = _labels(labels, joined)
    flat = [m for ms in methods for m in ms]
    # NOTE: a probe's X:control_pct is X's percentile among its controls, a monotone transform
    # of X: it is measured (its AUC) but given no vote of its own.
    derived = frozenset(
        new.name
        for inp, ms in zip(read, methods)
        for old, new in zip(inp.methods, ms)
        if old.name.endswith(CONTROL_SUFFIX)
        and old.name.removesuffix(CONTROL_SUFFIX) in {o.name for o in inp.methods}
    )
    measured = measure(
        flat,
        scores,
        label_of if label_stats else None,
        weight_by_auc,
        threshold,
        deployment,
        bootstrap=bootstrap,
        seed=seed,
        derived=derived,
    )
    redact = redact or any(inp.report is not None and inp.report.redact for inp in read)
    all_methods = [COMBINED_METHOD, *flat]
    reasons = {
        int(e): [Reason("combined-zscore", float(measured.combined[e]), threshold, None, COMBINED)]
        for e in np.flatnonzero(measured.flagged)
    }
    if input_rules:
        for k, inp in enumerate(read):
            if inp.report is not None:
                at = joined.at[k]
                for j, rs in sorted(inp.report.examples.reasons.items()):
                    reasons.setdefault(int(at[j]), []).extend(rs)
    all_scores = {COMBINED: measured.combined, **scores}
    details = example_details(read, joined, label_of)
    carried = carried_states(read, joined, sorted(reasons), fail_on)
    if carried is not None:
        details["baseline"] = carried[0]
    table = table_for(read, joined, all_methods, all_scores, reasons, details, redact=redact)
    stats = {
        "threshold": threshold,
        "weight_by_auc": weight_by_auc,
        "input_rules": input_rules,
        "inputs": input_stats(read, methods, joined),
        "methods": method_stats(all_methods, methods, joined, table, measured),
        "labels": label_stats,
        "deployment": deployment_stats(deployment, measured),
    }
    config = {
        "rule": "combined-zscore",
        "input_rules": input_rules,
        "threshold": threshold,
        "weight_by_auc": weight_by_auc,
        "bootstrap": bootstrap,
        "seed": seed,
        "directions": dict(directions or {}),
        "method_names": [str(r) for r in renames],
    }
    norms = [
        (inp.path, inp.report.config.get("normalization")) for inp in read if inp.report is not None
    ]
    known = [(path, nm) for path, nm in norms if isinstance(nm, dict)]
    # NOTE: the examples' fingerprints are the input reports'; impact --match fingerprint hashes
    # results texts the way they record (a --no-casefold scan's, say), so it is kept when agreed,
    # and each input's is recorded when they disagree (so that a matcher can refuse).
    if known and all(nm == known[0][1] for _, nm in known):
        config["normalization"] = dict(known[0][1])
    elif known:
        config["input_normalizations"] = [
            {"input": path, "normalization": dict(nm)} for path, nm in known
        ]
    flagged = table.flagged if input_rules else measured.flagged
    warnings = report_warnings(read, joined, flagged, scores, label_stats, weight_by_auc)
    return Report(
        examples=table,
        config=config,
        inputs=provenance(read, labels),
        command="report",
        redact=redact,
        stats={"combination": stats, **({} if carried is None else {"baseline": carried[1]})},
        warnings=tuple(warnings),
    )


def normalization_disagreement(config: Mapping[str, Any]) -> str | None:
    """What a combined report's input reports recorded when they disagree on normalization (its
    examples' fingerprints are of several kinds), as a phrase; None when they do not.

    >>> normalization_disagreement({"input_normalizations": [
    ...     {"input": "a.json", "normalization": {"casefold": True}},
    ...     {"input": "b.json", "normalization": {"casefold": False}}]})
    'a.json: casefold true; b.json: casefold false'
    """
    found = config.get("input_normalizations")
    if not isinstance(found, list) or not found:
        return None
    parts = []
    for item in found:
        norm = item.get("normalization") if isinstance(item, Mapping) else None
        pairs = norm.items() if isinstance(norm, Mapping) else ()
        text = ", ".join(f"{k} {json.dumps(v)}" for k, v in pairs)
        parts.append(f"{item.get('input') if isinstance(item, Mapping) else '?'}: {text}")
    return "; ".join(parts)


def _check(
    inputs: Any,
    labels: Any,
    weight_by_auc: bool,
    threshold: float,
    prevalence: float | None,
    documents: float | None,
    bootstrap: int,
) -> Deployment | None:
    """Arguments that cannot work raise; the deployment asked for (or None)."""
    if isinstance(inputs, (str, Path, Report)) or not isinstance(inputs, Sequence):
        raise ArgumentError("inputs must be a sequence of reports or paths")
    if not inputs:
        raise UsageError("no input: give one or more reports or scores files")
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold)):
        raise ArgumentError(f"threshold must be a finite number, got {threshold!r}")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 1:
        raise ArgumentError(f"bootstrap must be a positive integer, got {bootstrap!r}")
    if weight_by_auc and labels is None:
        raise UsageError("--weight-by-auc needs --labels: the weights are the methods' AUCs")
    if prevalence is None:
        if documents is not None:
            raise UsageError("--documents needs --prevalence (the expected share contaminated)")
        return None
    if labels is None:
        raise UsageError("--prevalence needs --labels: precision comes from recall and FPR")
    if not (isinstance(prevalence, (int, float)) and 0.0 <= prevalence <= 1.0):
        raise ArgumentError(f"prevalence must be a rate between 0 and 1, got {prevalence!r}")
    if documents is not None and not (
        isinstance(documents, (int, float)) and math.isfinite(documents) and documents >= 0
    ):
        raise ArgumentError(f"documents must be a non-negative number, got {documents!r}")
    # NOTE: documents default to the report's example count, filled in once it is known.
    return Deployment(float(prevalence), math.nan if documents is None else float(documents))


def _directed(methods: list[list[Method]], directions: Mapping[str, str]) -> list[list[Method]]:
    names = {m.name for ms in methods for m in ms}
    unknown = sorted(set(directions) - names)
    if unknown:
        raise UsageError(
            f"--direction for {', '.join(unknown)}: no such method (methods: "
            f"{', '.join(sorted(names))})"
        )
    bad = {k: v for k, v in directions.items() if v not in ("higher", "lower")}
    if bad:
        raise ArgumentError(f"a direction is 'higher' or 'lower', got {bad}")
    return [
        [replace(m, direction=cast(Direction, directions.get(m.name, m.direction))) for m in ms]
        for ms in methods
    ]


def _labels(labels: Any, joined: Joined) -> tuple[np.ndarray, dict[str, Any] | None]:
    """Per combined example its label (-1: none), and the labels' counts (None: no labels)."""
    out = np.full(len(joined.ids), -1, dtype=np.int64)
    if labels is None:
        return out, None
    given = read_labels(labels)
    index = {i: e for e, i in enumerate(joined.ids)}
    unknown = [i for i in given if i not in index]
    for i, value in given.items():
        if i in index:
            out[index[i]] = value
    return out, {
        "positives": int((out == 1).sum()),
        "negatives": int((out == 0).sum()),
        "unlabelled": int((out < 0).sum()),
        "not_in_inputs": unknown[:LISTED_IDS],
        "not_in_inputs_count": len(unknown),
    }
