"""The JSON renderer: the report as written to disk (see :mod:`contam_cli.report.persist`)."""

from __future__ import annotations

from contam_cli.report import Report, iter_json, write_json

__all__ = ["iter_json", "render_json", "write_json"]


def render_json(report: Report) -> str:
    """The JSON report as text; keys keep a fixed order and floats their shortest exact form."""
    return b"".join(iter_json(report)).decode()
