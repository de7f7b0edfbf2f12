"""Markdown for people and for CI step summaries, from any report (scan, probe, report...).

A title with the verdict, the counts, the most suspicious examples as a table (scores, reasons,
where in the eval set and, for an n-gram detector, where the evidence sits), the unscorable
examples, the warnings, and for a combined report the methods (AUC with its interval, weight),
the labels and the deployment table. The text never exceeds ``max_bytes`` (UTF-8): rows that do
not fit are left out and counted on a last ``… N more`` line. Table cells are escaped, so an id
or a text cannot break the table; eval and corpus text appear only when the report is not
redacted, and shortened.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from contam_cli.errors import ArgumentError
from contam_cli.render.table import evidence_where, example_evidence, short_path
from contam_cli.report import ExampleResult, Reason, Report

__all__ = ["MIN_BYTES", "cell", "render_markdown"]

#: The smallest ``max_bytes`` accepted: room for the title and a "… N more" line.
MIN_BYTES = 1024
#: Score columns in the examples table, at most (the JSON report has every method).
SCORE_COLUMNS = 6
#: Rows of the methods table, warnings and ids listed by name, at most.
LISTED = 20
_ESCAPED = str.maketrans({c: "\\" + c for c in "\\`*_[]|~"} | {"<": "&lt;", "&": "&amp;"})
_SPACES = str.maketrans(dict.fromkeys("\r\n\t\v\f\x85\u2028\u2029", " "))
_SHORT = {"longest_run": "run", "overlap_fraction": "overlap"}


def render_markdown(report: Report, *, top: int = 20, max_bytes: int = 1_000_000) -> str:
    """The report as Markdown: at most `top` example rows, at most `max_bytes` bytes of UTF-8."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ArgumentError(f"top must be a non-negative integer, got {top!r}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < MIN_BYTES:
        raise ArgumentError(f"max_bytes must be an integer of at least {MIN_BYTES}")
    head = _head(report)
    tail = _tail(report, LISTED, 500)
    budget = max_bytes - _size(head) - _size(tail) - 200
    if budget < max_bytes // 2:
        # NOTE: a nearly full step summary: the flagged examples' rows come before the lists
        # of unscorable ids and warnings (all in the JSON report), which are shortened.
        tail = _tail(report, 5, 160)
        budget = max_bytes - _size(head) - _size(tail) - 200
    return "".join(
        line + "\n" for line in _fit([*head, *_examples(report, top, budget), *tail], max_bytes)
    )


def _tail(report: Report, listed: int, chars: int) -> list[str]:
    """The sections after the examples, listing at most `listed` ids and warnings, each
    warning cut at `chars` characters."""
    return [
        *_unscorable(report, listed),
        *_warnings(report, listed, chars),
        *_methods(report),
        *_labels(report),
        *_deployment(report),
    ]


def cell(value: object, limit: int = 120) -> str:
    """`value` as one Markdown table cell: on one line, escaped, at most `limit` characters.

    >>> print(cell("a|b\\n`c`"))
    a\\|b \\`c\\`
    >>> cell("x" * 10, 4)
    'xxx…'
    """
    return _one_line(value, limit).translate(_ESCAPED)


def code(value: object, limit: int = 160) -> str:
    """`value` as a code span in a table cell (paths read as written); empty stays empty.

    >>> print(code("a|b.jsonl:3"), code("x`y"))
    `a\\|b.jsonl:3` `` x`y ``
    """
    text = _one_line(value, limit).replace("|", "\\|")
    if not text:
        return ""
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall("`+", text)) + 1)
    return f"{fence} {text} {fence}"


def _one_line(value: object, limit: int) -> str:
    text = str(value).translate(_SPACES)
    text = "".join(ch for ch in text if ch >= " " and ch != "\x7f")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _size(lines: Sequence[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _fit(lines: list[str], max_bytes: int) -> list[str]:
    """`lines` cut so that they and a last "… N more lines" line fit in `max_bytes`."""
    if _size(lines) <= max_bytes:
        return lines
    out: list[str] = []
    used = 100  # NOTE: room for the last line, whatever N is.
    for line in lines:
        size = len(line.encode("utf-8")) + 1
        if used + size > max_bytes:
            break
        out.append(line)
        used += size
    out.append(f"… {len(lines) - len(out)} more lines (the JSON report has everything)")
    return out


def _head(report: Report) -> list[str]:
    s = report.summary()
    if report.command == "probe":
        verdict = f"{s['examples'] - s['unscorable']} of {s['examples']} examples scored"
    elif report.contaminated:
        verdict = f"contamination found, {s['flagged']} of {s['examples']} examples flagged"
    else:
        verdict = f"no contamination flagged in {s['examples']} examples"
    counts = (
        f"**{s['examples']}** examples: **{s['flagged']}** flagged, {s['clean']} clean, "
        f"{s['unscorable']} unscorable"
    )
    if report.command == "probe":
        # NOTE: a probe flags nothing: its examples are scored, never "clean".
        counts = (
            f"**{s['examples']}** examples: {s['examples'] - s['unscorable']} scored, "
            f"{s['unscorable']} unscorable (probe scores flag nothing: see `contam report`)"
        )
    lines = [f"# contam {cell(report.command, 40)}: {verdict}", "", counts]
    combination = report.stats.get("combination")
    if isinstance(combination, Mapping):
        weights = "by AUC" if combination.get("weight_by_auc") else "equal"
        inputs = (
            ", or an input report's own rules (their reasons are the example's)"
            if combination.get("input_rules")
            else ""
        )
        lines += [
            "",
            f"Flag rule: combined z-score >= {combination.get('threshold')} "
            f"(weighted mean of the methods' z-scores; weights {weights}){inputs}.",
        ]
    baseline = report.stats.get("baseline")
    if isinstance(baseline, Mapping):
        lines += [
            "",
            f"Baseline {code(baseline.get('path'))}: **{baseline.get('new')}** new, "
            f"{baseline.get('accepted')} accepted, {baseline.get('fixed')} fixed (in the "
            "baseline, no longer found)",
            *_fixed(baseline.get("fixed_findings")),
        ]
    if report.redact:
        lines += ["", "Redacted: no eval or corpus text is shown."]
    return lines


def _fixed(entries: object) -> list[str]:
    """The baseline's findings no longer found, by id, at most :data:`LISTED` (a baseline may
    hold thousands; the JSON report keeps every one).

    >>> _fixed([{"id": "q1", "fingerprint": "ab" * 16, "source": None}] * 2)
    ['', 'Fixed: `q1`, `q1`']
    >>> line = _fixed([{"id": None, "fingerprint": "ab" * 16, "source": "web"}] * 21)[1]
    >>> line.endswith(", `abababababab` (web), … 1 more (in the JSON report)")
    True
    """
    if not isinstance(entries, Sequence) or not entries:
        return []
    names = []
    for en in entries[:LISTED]:
        en = en if isinstance(en, Mapping) else {}
        name = code(en.get("id") or str(en.get("fingerprint") or "")[:12], 60)
        names.append(f"{name} ({cell(en['source'], 40)})" if en.get("source") else name)
    more = len(entries) - LISTED
    tail = f", … {more} more (in the JSON report)" if more > 0 else ""
    return ["", "Fixed: " + ", ".join(names) + tail]


def _score_names(report: Report) -> list[str]:
    names = [m.name for m in report.methods]
    if "longest_run" in names and report.command != "report":
        return [n for n in ("longest_run", "overlap_fraction", "fuzzy") if n in names]
    return names[:SCORE_COLUMNS]


def _examples(report: Report, top: int, budget: int) -> list[str]:
    ranked = report.ranked_indices()
    if not len(ranked) or top == 0:
        return []
    names = _score_names(report)
    integer = {m.name for m in report.methods if m.integer}
    shown = report.take(ranked[:top])
    # NOTE: the inputs' reasons get their own column where they are not the example's own.
    combined = report.command == "report" and not report.config.get("input_rules", False)
    evidence = report.examples.ngram is not None
    text = not report.redact and any(_leaked_text(e) for e in shown)
    header = ["#", "id", *(cell(_SHORT.get(n, n), 40) for n in names), "reasons"]
    header += ["input reasons"] * combined + ["eval"] + ["evidence"] * evidence
    header += ["text"] * text
    states = "baseline" in report.examples.details
    header += ["baseline"] * states
    align = ["--:", "---", *(["--:"] * len(names))] + ["---"] * (len(header) - 2 - len(names))
    lines = ["", "## Most suspicious examples", "", _row(header), _row(align)]
    budget -= _size(lines)
    more = len(ranked)
    for k, e in enumerate(shown, 1):
        cells = [str(k), cell(e.id, 80), *(_num(e.scores.get(n), n in integer) for n in names)]
        cells.append(cell("; ".join(str(r) for r in e.reasons), 200))
        if combined:
            cells.append(cell(_input_reasons(e), 200))
        cells.append(code(_eval_where(e)))
        if evidence:
            cells.append(code(evidence_where(example_evidence(e))))
        if text:
            cells.append(cell(_leaked_text(e) or "", 100))
        if states:
            cells.append(cell(e.details.get("baseline", {}).get("state", ""), 20))
        line = _row(cells)
        budget -= len(line.encode("utf-8")) + 1
        if budget < 0:
            break
        lines.append(line)
        more -= 1
    if more:
        lines += ["", f"… {more} more examples (the JSON report has every one)"]
    return lines


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _num(value: float | None, integer: bool = False) -> str:
    """A score for people: whole numbers as such, others with 3 decimals (4 digits when big).

    >>> _num(23.0, True), _num(1.0), _num(-0.96699), _num(12345.6), _num(None)
    ('23', '1.000', '-0.967', '1.235e+04', '–')
    """
    if value is None:
        return "–"
    if integer:
        return str(int(value))
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.4g}"


def _eval_where(e: ExampleResult) -> str:
    place = short_path(e.eval_path)
    return f"{place}:{e.eval_line}" if e.eval_line is not None else place


def _leaked_text(e: ExampleResult) -> str | None:
    """The corpus text of the longest run (or of the reworded copy, for an example only the
    fuzzy detector flags) when there is one, else the example's own text."""
    ev = example_evidence(e)
    return ev.text if ev is not None and ev.text else e.text


def _input_reasons(e: ExampleResult) -> str:
    found = e.details.get("combined", {}).get("input_reasons", [])
    parts = []
    for d in found:
        r = Reason(d["rule"], d["value"], d["threshold"], d.get("source"), d["detector"])
        parts.append(f"{r} ({Path(str(d.get('input', ''))).name})")
    return "; ".join(parts)


def _unscorable(report: Report, at_most: int) -> list[str]:
    n = report.summary()["unscorable"]
    if not n:
        return []
    ids = [e.id for e in report.unscorable[:at_most]]
    listed = ", ".join(cell(i, 80) for i in ids) + (
        f", … {n - len(ids)} more" if n > len(ids) else ""
    )
    return [
        "",
        "## Unscorable",
        "",
        f"{n} examples could not be scored (not evidence of being clean): {listed}",
    ]


def _warnings(report: Report, listed: int, chars: int) -> list[str]:
    if not report.warnings:
        return []
    lines = ["", "## Warnings", ""]
    lines += [f"- {cell(w, chars)}" for w in report.warnings[:listed]]
    if len(report.warnings) > listed:
        lines.append(f"- … {len(report.warnings) - listed} more warnings (in the JSON report)")
    return lines


def _combination(report: Report) -> Mapping[str, Any]:
    found = report.stats.get("combination")
    return found if isinstance(found, Mapping) else {}


def _methods(report: Report) -> list[str]:
    methods = _combination(report).get("methods")
    if not methods:
        return []
    lines = [
        "",
        "## Methods",
        "",
        "| method | detector | direction | weight | scored | missing | AUC | 95% interval |",
        "|---|---|---|--:|--:|--:|--:|---|",
    ]
    for name, m in list(methods.items())[:LISTED]:
        interval = "–" if m.get("auc_low") is None else f"{m['auc_low']:.3f} to {m['auc_high']:.3f}"
        auc = "–" if m.get("auc") is None else f"{m['auc']:.3f}"
        weight = "–" if m.get("weight") is None else f"{m['weight']:.3f}"
        cells = [cell(name, 80), cell(m.get("detector"), 40), cell(m.get("direction"), 10)]
        cells += [weight, str(m.get("scored")), str(m.get("missing")), auc, interval]
        lines.append(_row(cells))
    if len(methods) > LISTED:
        lines += ["", f"… {len(methods) - LISTED} more methods (in the JSON report)"]
    return lines


def _labels(report: Report) -> list[str]:
    labels = _combination(report).get("labels")
    if not labels:
        return []
    lines = [
        "",
        "## Labels",
        "",
        f"{labels['positives']} contaminated, {labels['negatives']} clean, "
        f"{labels['unlabelled']} unlabelled examples.",
    ]
    count = labels.get("not_in_inputs_count", 0)
    if count:
        ids = ", ".join(cell(i, 80) for i in labels.get("not_in_inputs", []))
        lines += ["", f"{count} labelled ids are in no input: {ids}" + (" …" if count > 20 else "")]
    return lines


def _deployment(report: Report) -> list[str]:
    d = _combination(report).get("deployment")
    if not d:
        return []
    lines = [
        "",
        "## Deployment",
        "",
        f"Each method's rule (its z-score >= the threshold; combined: the flag rule) at "
        f"prevalence {d['prevalence']:g} over {d['documents']:,g} documents (expected counts):",
        "",
        "| method | recall | FPR | precision | flagged | true | false | missed |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    rows = d["rows"]
    for r in rows[:LISTED]:
        rates = [_rate(r[k]) for k in ("recall", "fpr", "precision")]
        counts = [_count(r[k]) for k in ("flagged", "true", "false", "missed")]
        lines.append(_row([cell(r["method"], 80), *rates, *counts]))
    if len(rows) > LISTED:
        # NOTE: the combined rule's row is the last one; it is the row that matters most.
        lines.append(
            _row(
                [
                    cell(rows[-1]["method"], 80),
                    *(_rate(rows[-1][k]) for k in ("recall", "fpr", "precision")),
                    *(_count(rows[-1][k]) for k in ("flagged", "true", "false", "missed")),
                ]
            )
        )
        lines += ["", f"… {len(rows) - LISTED - 1} more methods (in the JSON report)"]
    return lines


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.4g}"


def _count(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}"
