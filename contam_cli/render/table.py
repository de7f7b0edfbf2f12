"""The terminal table: most suspicious first, unscorable examples apart, a one-line summary."""

from __future__ import annotations

import io
import os
from typing import Literal

import numpy as np
from rich.console import Console
from rich.table import Table
from rich.text import Text

from contam_cli.engine import Evidence
from contam_cli.report import ExampleResult, Report

#: Clean rows shown after every flagged one (the JSON report always holds them all).
DEFAULT_CLEAN_ROWS = 20
#: Flagged rows listed by default: enough to review, while a huge leak stays readable and fast.
DEFAULT_FLAGGED_ROWS = 50


def render_table(
    report: Report,
    *,
    color: bool = False,
    width: int = 120,
    clean_rows: int = DEFAULT_CLEAN_ROWS,
    flagged_rows: int | None = DEFAULT_FLAGGED_ROWS,
) -> str:
    """Render `report` as a table (ANSI colours only when `color`).

    At most `flagged_rows` flagged (None: all) and `clean_rows` clean examples are listed, most
    suspicious first; the JSON report always holds every example.
    """
    out = io.StringIO()
    console = Console(
        file=out,
        force_terminal=color,
        no_color=not color,
        width=width,
        highlight=False,
        soft_wrap=False,
    )
    # NOTE: ranked by index arrays; only the rows shown become ExampleResult objects.
    ranked = report.ranked_indices()
    is_flagged = report.flagged_mask()[ranked]
    flagged, clean = ranked[is_flagged], ranked[~is_flagged]
    limit = len(flagged) if flagged_rows is None else flagged_rows
    shown = report.take(np.concatenate((flagged[:limit], clean[:clean_rows])))
    n = report.config.get("n")
    if shown:
        console.print(_table(shown, redact=report.redact))
    more = [
        (len(flagged) - len(flagged[:limit]), "flagged"),
        (len(clean) - len(clean[:clean_rows]), "clean"),
    ]
    hidden = ", ".join(f"{k} more {what}" for k, what in more if k)
    if hidden:
        console.print(f"... {hidden} examples not listed (all are in --json and --report)")
    unscorable = np.flatnonzero(~report.scorable_mask())
    if len(unscorable):
        console.print(f"Unscorable (fewer than n={n} tokens; not evidence of being clean):")
        for e in report.take(unscorable[:clean_rows]):
            console.print(f"  {e.id}  {e.n_tokens} tokens  {_eval_where(e)}")
        if len(unscorable) > clean_rows:
            console.print(f"  ... {len(unscorable) - clean_rows} more")
    summary = Text(report.summary_line(), style="bold red" if report.contaminated else "bold green")
    console.print(summary)
    text = out.getvalue()
    if not color:  # Rich pads every row to the width: plain output for pipes and files
        text = "".join(line.rstrip() + "\n" for line in text.splitlines())
    return text


def _table(rows: list[ExampleResult], redact: bool) -> Table:
    t = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    columns: tuple[tuple[str, Literal["left", "right"]], ...] = (
        ("id", "left"),
        ("overlap", "right"),
        ("run", "right"),
        ("z", "right"),
        ("flag", "left"),
        ("reasons", "left"),
        ("where", "left"),
    )
    for name, justify in columns:
        t.add_column(
            name,
            justify=justify,
            no_wrap=name in ("id", "overlap", "run", "z", "flag"),
            overflow="fold",
        )
    for e in rows:
        t.add_row(
            e.id,
            f"{e.overlap_fraction:.3f}",
            str(e.longest_run),
            f"{e.zscore:.2f}",
            Text("FLAGGED", style="bold red") if e.flagged else Text(""),
            "; ".join(str(r) for r in e.reasons),
            evidence_where(e.evidence),
        )
    return t


def evidence_where(ev: Evidence | None) -> str:
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
    """A path relative to the working directory when it lies below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _eval_where(e: ExampleResult) -> str:
    return f"{e.eval_path}:{e.eval_line}" if e.eval_line is not None else e.eval_path
