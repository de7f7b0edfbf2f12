"""The terminal table: most suspicious first, unscorable examples apart, a one-line summary.

Plain text, aligned in columns; the command line adds colour on a terminal. A scan shows overlap,
run and z-score (and the fuzzy score when that detector ran); any other report shows one column
per method.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from contam_cli.engine.evidence import Evidence
from contam_cli.io.remote import is_url
from contam_cli.render.combination import combination_lines
from contam_cli.render.text import columns, one_line
from contam_cli.report import ExampleResult, FuzzyMatch, Report

__all__ = [
    "DEFAULT_CLEAN_ROWS",
    "DEFAULT_FLAGGED_ROWS",
    "evidence_where",
    "example_evidence",
    "render_table",
]

#: Clean rows shown after every flagged one (the JSON report always holds them all).
DEFAULT_CLEAN_ROWS = 20
#: Flagged rows listed by default: enough to review, while a huge leak stays readable and fast.
DEFAULT_FLAGGED_ROWS = 50
#: Ids longer than this are cut in the table (the JSON has them whole).
ID_WIDTH = 40


def render_table(
    report: Report,
    *,
    clean_rows: int = DEFAULT_CLEAN_ROWS,
    flagged_rows: int | None = DEFAULT_FLAGGED_ROWS,
) -> str:
    """Render `report` as a table.

    At most `flagged_rows` flagged (None: all) and `clean_rows` clean examples are listed, most
    suspicious first; the JSON report always holds every example.
    """
    # NOTE: ranked by index arrays; only the rows shown become ExampleResult objects.
    ranked = report.ranked_indices()
    is_flagged = report.flagged_mask()[ranked]
    flagged, clean = ranked[is_flagged], ranked[~is_flagged]
    limit = len(flagged) if flagged_rows is None else flagged_rows
    shown = report.take(np.concatenate((flagged[:limit], clean[:clean_rows])))
    lines = _rows(report, shown) if shown else []
    # NOTE: a probe flags nothing, so its examples not flagged are not "clean".
    unflagged = "clean" if report.command != "probe" else "scored"
    more = [
        (len(flagged) - len(flagged[:limit]), "flagged"),
        (len(clean) - len(clean[:clean_rows]), unflagged),
    ]
    hidden = ", ".join(f"{k} more {what}" for k, what in more if k)
    if hidden:
        lines.append(f"... {hidden} examples not listed (all are in the JSON report)")
    lines += _unscorable(report, clean_rows)
    lines += _fuzzy_unscorable(report)
    lines += combination_lines(report)
    lines.append(report.summary_line())
    return "".join(line + "\n" for line in lines)


def _rows(report: Report, shown: list[ExampleResult]) -> list[str]:
    redact = report.redact
    if _is_scan(report):
        fz = ["fuzzy"] if "fuzzy" in report.examples.scores else []
        headers = ["id", "overlap", "run", "z", *fz, "flag", "reasons", "where"]
        rows = [
            [
                _id(e.id),
                _number(e.overlap_fraction, ".3f"),
                "-" if e.longest_run is None else str(e.longest_run),
                _number(e.zscore, ".2f"),
                *(_fuzzy(e) for _ in fz),
                _flag(e),
                "; ".join(str(r) for r in e.reasons),
                evidence_where(example_evidence(e)),
            ]
            for e in shown
        ]
        return columns(headers, rows, "lrrr" + "r" * len(fz) + "lll")
    names = [m.name for m in report.methods]
    headers = ["id", *names, "flag", "reasons", "where"]
    rows = [
        [
            _id(e.id),
            *(_score(e.scores.get(k)) for k in names),
            _flag(e),
            "; ".join(str(r) for r in e.reasons),
            "" if redact else _eval_where(e),
        ]
        for e in shown
    ]
    # NOTE: a probe run flags nothing: its empty flag and reasons columns are left out.
    keep = [
        k
        for k, h in enumerate(headers)
        if h not in ("flag", "reasons") or any(row[k] for row in rows)
    ]
    justify = "l" + "r" * len(names) + "lll"
    return columns(
        [headers[k] for k in keep],
        [[row[k] for k in keep] for row in rows],
        "".join(justify[k] for k in keep),
    )


def _unscorable(report: Report, limit: int) -> list[str]:
    unscorable = np.flatnonzero(~report.scorable_mask() & ~report.flagged_mask())
    if not len(unscorable):
        return []
    n = report.config.get("n")
    if _is_scan(report):
        out = [f"Unscorable (fewer than n={n} tokens; not evidence of being clean):"]
    else:
        out = ["Unscorable (no method could score them; not evidence of being clean):"]
    for e in report.take(unscorable[:limit]):
        tokens = f"  {e.n_tokens} tokens" if e.n_tokens is not None else ""
        # NOTE: not a column, so flattened here: a newline or an ESC must not reach the terminal.
        out.append(one_line(f"  {_id(e.id)}{tokens}  {_eval_where(e)}"))
    if len(unscorable) > limit:
        out.append(f"  ... {len(unscorable) - limit} more")
    return out


def _fuzzy_unscorable(report: Report) -> list[str]:
    """A line counting the examples scored, but not by the fuzzy detector (too short for it)."""
    cols = report.examples.fuzzy
    if cols is None:
        return []
    k = int((report.scorable_mask() & ~cols.scorable).sum())
    if not k:
        return []
    least = report.config.get("fuzzy", {}).get("min_tokens", "its minimum of")
    return [
        f"{k} example{'s' if k != 1 else ''} not scored by the fuzzy detector (fewer than "
        f"{least} tokens; not checked for reworded leaks)"
    ]


def _fuzzy(e: ExampleResult) -> str:
    return _number(e.scores.get("fuzzy"), ".3f")


def _number(value: float | None, spec: str) -> str:
    """A score as the table shows it; "-" where the detector could not score the example (an
    example under n tokens that the fuzzy detector flagged is in the table with no overlap)."""
    return "-" if value is None else format(value, spec)


def example_evidence(e: ExampleResult) -> Evidence | FuzzyMatch | None:
    """The evidence to point at: the exact run's, or the reworded copy's when only fuzzy rules
    flagged the example (or it has no exact run)."""
    fz = e.fuzzy.evidence if e.fuzzy is not None else None
    by_fuzzy = any(r.detector == "fuzzy" for r in e.reasons)
    if (
        fz is not None
        and by_fuzzy
        and (e.evidence is None or all(r.detector == "fuzzy" for r in e.reasons))
    ):
        return fz
    return e.evidence


def _is_scan(report: Report) -> bool:
    """A report of the n-gram detector alone (a combined report holds its scores too)."""
    return report.examples.ngram is not None and report.command in ("scan", "clean")


def _flag(e: ExampleResult) -> str:
    """FLAGGED, or "accepted" for a finding the baseline holds (it does not fail the gate)."""
    if not e.flagged:
        return ""
    state = e.details.get("baseline")
    accepted = isinstance(state, Mapping) and state.get("state") == "accepted"
    return "accepted" if accepted else "FLAGGED"


def _id(value: str) -> str:
    return value if len(value) <= ID_WIDTH else value[: ID_WIDTH - 1] + "…"


def _score(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}"


def evidence_where(ev: Evidence | FuzzyMatch | None) -> str:
    """Where a run sits, for people: ``[source: ]path:line`` (or ``path[record]``)."""
    if ev is None or ev.path is None:
        return ""
    place = short_path(ev.path)
    if ev.line is not None:
        place += f":{ev.line}"
    elif ev.record is not None:
        place += f"[{ev.record}]"
    return place if ev.source == "corpus" else f"{ev.source}: {place}"


def short_path(path: str) -> str:
    """A path relative to the working directory when it lies below it (a URL as it is)."""
    if is_url(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _eval_where(e: ExampleResult) -> str:
    return f"{e.eval_path}:{e.eval_line}" if e.eval_line is not None else e.eval_path
