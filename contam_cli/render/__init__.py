"""Renderers: pure functions from a Report to text. They never filter, decide, or open files.

:class:`OutputFormat` names every format a command can print, and :func:`render` renders a
report in one of them. The HTML and SARIF renderers are imported when asked for, so that the
other formats never pay for loading them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import Enum
from typing import Any

from contam_cli.errors import UsageError
from contam_cli.render.json import iter_json, render_json, write_json
from contam_cli.render.markdown import render_markdown
from contam_cli.render.table import DEFAULT_CLEAN_ROWS, render_table
from contam_cli.report import Report

__all__ = [
    "OutputFormat",
    "iter_json",
    "render",
    "render_json",
    "render_markdown",
    "render_table",
    "renderer",
    "write_json",
]


class OutputFormat(str, Enum):
    """Formats a command can print (``--format``)."""

    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"
    sarif = "sarif"
    github = "github"


def renderer(fmt: OutputFormat | str) -> Callable[..., str]:
    """The function that renders a report in `fmt` (a UsageError for an unknown format)."""
    try:
        fmt = OutputFormat(fmt)
    except ValueError:
        names = ", ".join(f.value for f in OutputFormat)
        raise UsageError(f"unknown output format {fmt!r} (formats: {names})") from None
    if fmt is OutputFormat.table:
        return _table
    if fmt is OutputFormat.json:
        return render_json
    if fmt is OutputFormat.markdown:
        return render_markdown
    if fmt is OutputFormat.github:
        from contam_cli.render.github import render_github

        return render_github
    try:
        if fmt is OutputFormat.html:
            from contam_cli.render.html import render_html

            return render_html
        from contam_cli.render.sarif import render_sarif

        return render_sarif
    except ModuleNotFoundError as e:
        raise UsageError(f"--format {fmt.value} is not available in this build ({e})") from None


def render(report: Report, fmt: OutputFormat | str, **options: Any) -> str:
    """`report` rendered in `fmt`. Options a format's renderer does not take are left out (so
    ``top`` may be given whatever the format: JSON has every example)."""
    fn = renderer(fmt)
    taken = inspect.signature(fn).parameters
    return fn(report, **{k: v for k, v in options.items() if k in taken})


def _table(report: Report, *, top: int | None = None) -> str:
    """The terminal table (`top`: rows listed, flagged ones first; None: the defaults)."""
    if top is None:
        return render_table(report)
    return render_table(report, flagged_rows=top, clean_rows=min(top, DEFAULT_CLEAN_ROWS))
