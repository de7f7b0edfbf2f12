"""The probe's report: scored entries to columns, control percentiles, warnings and config."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from contam_cli.features.probe.controls import CONTROL_SUFFIX, control_percentiles, control_stats
from contam_cli.features.probe.methods import FLOAT_MAX, Entry, Plan
from contam_cli.io.model import Record
from contam_cli.report import ExampleTable, Method, Report
from contam_cli.text.fingerprint import text_fingerprint

__all__ = ["build_report"]

TRUNCATED = (
    "Min-K%++ used a truncated (top-k) next-token distribution from this provider: mu and sigma "
    "are approximations; compare these scores only with scores from the same provider and "
    "settings"
)


def build_report(
    plan: Plan,
    records: Sequence[Record],
    entries: Sequence[Entry],
    controls: Sequence[Entry] | None,
    config: Mapping[str, Any],
    inputs: Mapping[str, Any],
) -> Report:
    """The report of scored ``entries`` (one per record), with percentiles among ``controls``."""
    methods = list(plan.report_methods())
    scores = {m.name: _column(entries, m.name) for m in methods}
    warnings = _infinite(scores)
    stats: dict[str, Any] = {}
    if controls is not None:
        per_method = {}
        for m in plan.report_methods():
            values = _column(controls, m.name)
            per_method[m.name] = control_stats(values, m.direction)
            pct = Method(
                m.name + CONTROL_SUFFIX,
                "probe",
                "higher",
                description=f"percentile of {m.name} among the controls (100: more suspicious "
                "than every control; ties count half)",
            )
            methods.append(pct)
            scores[pct.name] = control_percentiles(scores[m.name], values, m.direction)
            if per_method[m.name]["n"] == 0:
                warnings.append(
                    f"no control example has a {m.name} score: its percentiles are null"
                )
        stats["controls"] = per_method
    full = _full_distribution([*entries, *(controls or ())])
    if plan.token_methods:
        config = {**config, "full_distribution": full}
        if not full:
            warnings.insert(0, TRUNCATED)
    table = ExampleTable(
        ids=[r.id for r in records],
        eval_paths=[r.locator.path for r in records],
        eval_lines=[r.locator.line for r in records],
        fingerprints=[text_fingerprint(r.text) for r in records],
        methods=methods,
        scores=scores,
        details={"probe": {e: entry["probe"] for e, entry in enumerate(entries)}},
    )
    return Report(
        examples=table,
        config=dict(config),
        inputs=dict(inputs),
        command="probe",
        redact=plan.redact,
        stats=stats,
        warnings=tuple(warnings),
    )


def _column(entries: Sequence[Entry], name: str) -> np.ndarray:
    values = [entry["scores"].get(name) for entry in entries]
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


def _full_distribution(entries: Sequence[Entry]) -> bool:
    """Whether every text's Min-K%++ moments came from a full next-token distribution."""
    return all(
        bool(e["probe"].get("full_distribution", True))
        for e in entries
        if e["probe"] and e["probe"].get("tokens")
    )


def _infinite(scores: Mapping[str, np.ndarray]) -> list[str]:
    n = {name: int(np.count_nonzero(np.abs(v) == FLOAT_MAX)) for name, v in scores.items()}
    return [
        f"{k} {name} scores are infinite (a token of probability 0 under the model), written as "
        f"{'-' if name != 'perplexity' else ''}{FLOAT_MAX:.3g}"
        for name, k in n.items()
        if k
    ]
