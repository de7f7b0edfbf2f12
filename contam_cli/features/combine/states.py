"""The baseline states of ``contam report``'s input reports, carried into the combined report.

A scan run with ``--baseline`` records each finding's state (``details.baseline``: ``new`` or
``accepted``) and its gate (``summary.baseline.fail_on``). The combined report keeps them, and
conservatively: a flagged example is ``accepted`` only when at least one input report flagged it
and every input report that flagged it recorded it accepted by its baseline. One an input flagged
without a baseline, or as new, is ``new``; so is one the combined rule alone flagged (no
baseline judged it). Nothing is re-matched here: a state is the one the scan's own rule gave.

The default gate (``--fail-on``) follows the inputs: ``any`` when an input scan recorded
``any``, else ``new`` when one recorded a baseline, else ``any``. ``none`` is never inherited:
it would pass the other inputs' findings too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from contam_cli.features.combine.inputs import ScoreInput
from contam_cli.features.combine.join import Joined
from contam_cli.policy.baseline import BaselineResult, FailOn
from contam_cli.report import Report

__all__ = ["carried_states", "default_fail_on", "fail_on_of", "recorded_result"]


def _recorded(inp: ScoreInput) -> Mapping[str, Any] | None:
    """The baseline summary an input report recorded (None: no baseline, or not a report)."""
    found = None if inp.report is None else inp.report.stats.get("baseline")
    return found if isinstance(found, Mapping) else None


def default_fail_on(read: Sequence[ScoreInput]) -> FailOn | None:
    """The gate the inputs recorded (None: no input report recorded a baseline)."""
    recorded = [b for b in map(_recorded, read) if b is not None]
    if not recorded:
        return None
    return "any" if any(b.get("fail_on") == "any" for b in recorded) else "new"


def carried_states(
    read: Sequence[ScoreInput],
    joined: Joined,
    flagged: Sequence[int],
    fail_on: FailOn | None,
) -> tuple[dict[int, dict[str, Any]], dict[str, Any]] | None:
    """``details.baseline`` of the combined report's `flagged` examples and its
    ``summary.baseline``; None when no input report recorded a baseline."""
    recorded = [_recorded(inp) for inp in read]
    if all(b is None for b in recorded):
        return None
    seen: dict[int, list[str]] = {}
    sources: dict[int, dict[str, str]] = {}
    for k, (inp, base) in enumerate(zip(read, recorded)):
        if inp.report is None:
            continue
        rows = inp.report.examples.details.get("baseline", {}) if base is not None else {}
        at = joined.at[k]
        for j in inp.report.examples.reasons:
            e, got = int(at[j]), rows.get(j)
            got = got if isinstance(got, Mapping) else {}
            state = "accepted" if got.get("state") == "accepted" else "new"
            seen.setdefault(e, []).append(state)
            for name, s in (got.get("sources") or {}).items():
                mine = sources.setdefault(e, {})
                mine[name] = "new" if "new" in (s, mine.get(name)) else "accepted"
    states: dict[int, dict[str, Any]] = {}
    for e in flagged:
        said = seen.get(e, ["new"])
        row: dict[str, Any] = {"state": "new" if "new" in said else "accepted"}
        if e in sources:
            row["sources"] = dict(sorted(sources[e].items()))
        states[e] = row
    return states, _summary(read, recorded, states, fail_on)


def _summary(
    read: Sequence[ScoreInput],
    recorded: Sequence[Mapping[str, Any] | None],
    states: Mapping[int, Mapping[str, Any]],
    fail_on: FailOn | None,
) -> dict[str, Any]:
    used = [(inp, b) for inp, b in zip(read, recorded) if b is not None]
    fixed: dict[tuple[Any, Any], Any] = {}
    for _, b in used:
        for en in b.get("fixed_findings") or ():
            if isinstance(en, Mapping):
                fixed.setdefault((en.get("fingerprint"), en.get("source")), dict(en))
    paths = list(dict.fromkeys(str(b.get("path")) for _, b in used))
    accepted = sum(1 for row in states.values() if row["state"] == "accepted")
    return {
        "path": ", ".join(paths),
        "per_source": any(bool(b.get("per_source")) for _, b in used),
        "new": len(states) - accepted,
        "accepted": accepted,
        "fixed": len(fixed),
        "fixed_findings": list(fixed.values()),
        "fail_on": fail_on or default_fail_on(read),
        "inputs": [
            {"input": inp.path, "baseline": b.get("path"), "fail_on": b.get("fail_on")}
            for inp, b in used
        ],
    }


def recorded_result(report: Report) -> BaselineResult | None:
    """The baseline result `report` records (None: it records no baseline), for the gate and
    SARIF's states: flagged examples not recorded ``accepted`` are new. ``fixed`` is empty (the
    report's summary lists them)."""
    if not isinstance(report.stats.get("baseline"), Mapping):
        return None
    rows = report.examples.details.get("baseline", {})
    new: list[int] = []
    accepted: list[int] = []
    for e in (int(i) for i in report.flagged_mask().nonzero()[0]):
        row = rows.get(e)
        ok = isinstance(row, Mapping) and row.get("state") == "accepted"
        (accepted if ok else new).append(e)
    return BaselineResult(report, tuple(new), tuple(accepted), ())


def fail_on_of(report: Report) -> FailOn:
    """The gate `report` records: its baseline's ``fail_on`` (``new`` or ``any``; without a
    baseline ``any``). A recorded ``none`` is not taken up."""
    base = report.stats.get("baseline")
    if not isinstance(base, Mapping):
        return "any"
    return cast(FailOn, "any" if base.get("fail_on") == "any" else "new")
