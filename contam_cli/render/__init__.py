"""Renderers: pure functions from a Report to text. They never filter, decide, or open files."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from contam_cli.render.json import iter_json, render_json, write_json
from contam_cli.render.table import render_table
from contam_cli.report import Report

__all__ = [
    "OutputFormat",
    "RENDERERS",
    "iter_json",
    "render",
    "render_json",
    "render_table",
    "write_json",
]


class OutputFormat(str, Enum):
    """Formats `contam scan --format` can print."""

    table = "table"
    json = "json"


RENDERERS: dict[OutputFormat, Callable[[Report], str]] = {
    OutputFormat.table: render_table,
    OutputFormat.json: render_json,
}


def render(report: Report, fmt: OutputFormat) -> str:
    return RENDERERS[fmt](report)
