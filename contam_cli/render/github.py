"""GitHub Actions workflow commands: an annotation per new finding at its eval file and line.

* ``::error`` for each new finding (every flagged example when the report has no baseline), most
  suspicious first, titled with its id and rule; the message names the reasons and the evidence
  (source, place, run length, overlap) and, unless the report is redacted, a shortened leaked
  text. Findings accepted in a baseline get none: one ``::notice`` counts them and the fixed ones.
* ``::warning`` for each of the report's warnings, then each unscorable example (at its place).
* GitHub shows at most ``MAX_PER_KIND`` annotations of each kind per step, so at most that many
  of each are written, and one ``::notice`` counts the rest.
* Last, the summary line (with the baseline's counts), as plain text.

Values are escaped as the runner reads them (data: ``%``, CR, LF; properties also ``:`` and
``,``), so no id, path or text can end a command early or start another, and other control
characters are written ``\\xNN`` (the log reads ANSI sequences); paths are relative to
`root` (the working directory by default, the repository on a runner) with ``/`` separators.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.render.table import evidence_where
from contam_cli.report import ExampleResult, Report

__all__ = ["MAX_PER_KIND", "command", "escape_data", "escape_property", "render_github"]

#: Annotations of one kind GitHub shows per step (zizmor PR #634; docs "workflow commands").
MAX_PER_KIND = 10
#: Characters of leaked text quoted in a message at most.
QUOTE_CHARS = 100
# NOTE: the log the runner shows reads ANSI sequences: the other C0 controls, DEL and C1 are
# written as \xNN (an ESC in an id or a text must not rewrite the log); tab stays.
_CONTROLS = {
    chr(c): f"\\x{c:02x}" for c in (*range(32), *range(127, 160)) if chr(c) not in "\t\r\n"
}
_DATA = str.maketrans({**_CONTROLS, "%": "%25", "\r": "%0D", "\n": "%0A"})
_PROPERTY = str.maketrans(
    {**_CONTROLS, "%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"}
)
_LINE = str.maketrans(dict.fromkeys("\r\n\x85\u2028\u2029", " "))


def escape_data(value: object) -> str:
    """`value` as a command's message.

    >>> escape_data("50%\\nnext"), escape_data("a\\x1b[2Jb")
    ('50%25%0Anext', 'a\\\\x1b[2Jb')
    """
    return str(value).translate(_DATA)


def escape_property(value: object) -> str:
    """`value` as a command's property (``file=``, ``title=``...).

    >>> escape_property("a:b,c%")
    'a%3Ab%2Cc%25'
    """
    return str(value).translate(_PROPERTY)


def command(kind: str, message: str, **properties: object) -> str:
    """One workflow command line, e.g. ``::error file=a.jsonl,line=3::message`` (properties that
    are None are left out)."""
    props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items() if v is not None)
    return f"::{kind}{' ' + props if props else ''}::{escape_data(message)}"


def render_github(report: Report, *, root: str | os.PathLike[str] | None = None) -> str:
    """`report` as workflow commands and its summary line (see the module docstring)."""
    base = Path(os.getcwd() if root is None else root)
    errors, notices = _errors(report, base)
    warnings, more = _warnings(report, base)
    lines = [*errors, *warnings, *notices, *more, _summary(report)]
    return "".join(line + "\n" for line in lines)


def _baseline(report: Report) -> Mapping[str, Any] | None:
    found = report.stats.get("baseline")
    return found if isinstance(found, Mapping) else None


def _new_mask(report: Report) -> np.ndarray:
    """Per example: a finding the gate counts (flagged and not accepted in a baseline)."""
    mask = report.flagged_mask().copy()
    rows = report.examples.details.get("baseline", {})
    for e, row in rows.items():
        if isinstance(row, Mapping) and row.get("state") == "accepted":
            mask[e] = False
    return mask


def _errors(report: Report, base: Path) -> tuple[list[str], list[str]]:
    new = _new_mask(report)
    scored = report.ranked_indices()
    # NOTE: most suspicious first; a finding no method scored (a hand-made report) comes last.
    ranked = np.concatenate([scored[new[scored]], np.setdiff1d(np.flatnonzero(new), scored)])
    lines = [_error(report, e, base) for e in report.take(ranked[:MAX_PER_KIND])]
    notices = []
    if len(ranked) > MAX_PER_KIND:
        rest = len(ranked) - MAX_PER_KIND
        notices.append(
            command(
                "notice",
                f"{rest} more new findings are not annotated (GitHub shows {MAX_PER_KIND} per "
                "step); the step summary and the JSON report list every one.",
                title="contam: more findings",
            )
        )
    baseline = _baseline(report)
    if baseline is not None:
        path, parts = baseline.get("path"), []
        if baseline.get("accepted"):
            parts.append(
                f"{baseline['accepted']} findings accepted in the baseline {path} are not annotated"
            )
        if baseline.get("fixed"):
            parts.append(
                f"{baseline['fixed']} findings in the baseline {path} are no longer found "
                "(fixed): refresh it with --write-baseline"
            )
        if parts:
            notices.append(command("notice", "; ".join(parts) + ".", title="contam: baseline"))
    return lines, notices


def _error(report: Report, e: ExampleResult, base: Path) -> str:
    first = e.reasons[0]
    title = f"contam: eval example {_short(e.id, 60)} leaked ({first.detector}/{first.rule})"
    return command(
        "error", _message(report, e), file=_file(e.eval_path, base), line=e.eval_line, title=title
    )


def _message(report: Report, e: ExampleResult) -> str:
    reasons = "; ".join(str(r) for r in e.reasons)
    ev = e.evidence
    if ev is None:
        return f"Eval example {e.id} was flagged: {reasons}."
    where = evidence_where(ev) or "a document that could not be read again"
    overlap = e.overlap_fraction
    text = (
        f"Eval example {e.id} is in the training data: {reasons}. Evidence: source {ev.source}, "
        f"{where}, a verbatim run of {ev.length} tokens"
        + (f", overlap {overlap:.3f}" if overlap is not None else "")
        + "."
    )
    quoted = None if report.redact else (ev.text or None)
    if quoted:
        flat = " ".join(quoted.split())
        text += f' Leaked text: "{_short(flat, QUOTE_CHARS)}"'
    return text


def _warnings(report: Report, base: Path) -> tuple[list[str], list[str]]:
    lines = [command("warning", w, title="contam: warning") for w in report.warnings]
    unscorable = np.flatnonzero(~report.scorable_mask() & ~report.flagged_mask())
    room = max(0, MAX_PER_KIND - len(lines))
    n = report.config.get("n")
    fewer = f", fewer than n={n}" if n else ""
    for e in report.take(unscorable[:room]):
        tokens = f" ({e.n_tokens} tokens{fewer})" if e.n_tokens is not None else ""
        lines.append(
            command(
                "warning",
                f"Eval example {e.id} is unscorable{tokens}: not evidence of being clean.",
                file=_file(e.eval_path, base),
                line=e.eval_line,
                title="contam: unscorable example",
            )
        )
    total = len(report.warnings) + len(unscorable)
    shown = lines[:MAX_PER_KIND]
    more = []
    if total > len(shown):
        more.append(
            command(
                "notice",
                f"{total - len(shown)} more warnings and unscorable examples are not annotated "
                f"(GitHub shows {MAX_PER_KIND} per step); the JSON report lists every one.",
                title="contam: more warnings",
            )
        )
    return shown, more


def _summary(report: Report) -> str:
    line = f"contam: {report.summary_line()}"
    baseline = _baseline(report)
    if baseline is not None:
        line += (
            f"; baseline {baseline.get('path')}: {baseline.get('new', 0)} new, "
            f"{baseline.get('accepted', 0)} accepted, {baseline.get('fixed', 0)} fixed"
        )
    # NOTE: never a line of its own that the runner could read as a command.
    return line.translate(_LINE)


def _file(path: str, base: Path) -> str:
    """`path` with ``/`` separators; an absolute one relative to `base` when it lies below it
    (a relative one already is, to the working directory).

    >>> _file("data/a.jsonl", Path.cwd()), _file(str(Path.cwd() / "b.jsonl"), Path.cwd())
    ('data/a.jsonl', 'b.jsonl')
    """
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path(os.path.abspath(base)))
        except ValueError:  # NOTE: elsewhere (another drive on Windows): kept whole.
            pass
    return p.as_posix()


def _short(text: str, limit: int) -> str:
    flat = text.translate(_LINE)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
