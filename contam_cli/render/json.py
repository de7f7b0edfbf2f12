"""The JSON report: versioned, deterministic (same input, same bytes), strict JSON (no NaN)."""

from __future__ import annotations

import orjson

from contam_cli.report import Report


def render_json(report: Report) -> str:
    """Serialize `report`; keys keep a fixed order and floats their shortest exact form."""
    return orjson.dumps(
        report.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    ).decode()
