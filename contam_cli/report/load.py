"""load_report(): read back any report contam writes (this schema, and the scan reports of
``contam.scan/1``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from contam_cli.errors import InputError
from contam_cli.io.formats import read_whole
from contam_cli.report.fuzzy import FuzzyColumns
from contam_cli.report.ngram import NGRAM_METHODS, NgramColumns
from contam_cli.report.report import SCHEMA, Report
from contam_cli.report.table import ExampleTable
from contam_cli.report.values import Method, Reason

__all__ = ["load_report", "read_json", "report_from_dict"]

_SCAN_V1 = "contam.scan/1"
_COUNTS = ("examples", "flagged", "clean", "unscorable")


def load_report(path: str | Path) -> Report:
    """The report in the JSON file `path` (compressed or not); InputError for anything else.

    ``load_report(p)`` equals the report that was saved to ``p``.
    """
    return report_from_dict(read_json(path), path)


def read_json(path: str | Path) -> Any:
    """The parsed JSON of `path` (decompressed by its suffix), or an InputError naming it."""
    data = read_whole(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        line = data.count(b"\n", 0, e.pos) + 1
        raise InputError(path, f"invalid JSON: {e.msg}", line) from None


def report_from_dict(data: Any, where: str | Path = "<report>") -> Report:
    """The report a parsed JSON document describes (see docs/report-schema.md)."""
    if not isinstance(data, dict) or "schema" not in data:
        raise InputError(where, "not a contam report (no 'schema' key)")
    if data["schema"] == _SCAN_V1:
        data = _from_scan_v1(data)
    elif data["schema"] != SCHEMA:
        raise InputError(where, f"unknown report schema {data['schema']!r} (reads {SCHEMA})")
    try:
        return _report(data)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputError(where, f"not a valid contam report ({type(e).__name__}: {e})") from None


def _report(data: Mapping[str, Any]) -> Report:
    methods = tuple(
        Method(m["name"], m["detector"], m["direction"], m["integer"], m["description"])
        for m in data["methods"]
    )
    examples = data["examples"]
    return Report(
        examples=_table(examples, methods),
        config=data["config"],
        inputs=data["inputs"],
        command=data["command"],
        tool_version=data["tool"]["version"],
        redact=bool(data["redacted"]),
        stats={k: v for k, v in data["summary"].items() if k not in _COUNTS},
        warnings=tuple(data["warnings"]),
    )


def _table(examples: list[dict[str, Any]], methods: tuple[Method, ...]) -> ExampleTable:
    names = [m.name for m in methods]
    has_ngram = any(m.detector == "ngram" for m in methods)
    # NOTE: a report that holds the fuzzy score without its details (a combination of reports)
    # keeps the score alone.
    has_fuzzy = "fuzzy" in names and any("fuzzy" in e["details"] for e in examples)
    columnar = {k for k, on in (("ngram", has_ngram), ("fuzzy", has_fuzzy)) if on}
    details: dict[str, dict[int, Any]] = {}
    for i, e in enumerate(examples):
        for k, v in e["details"].items():
            if k not in columnar:
                details.setdefault(k, {})[i] = v
    ngram = (
        NgramColumns.from_dicts([e["details"]["ngram"] for e in examples]) if has_ngram else None
    )
    fuzzy = (
        FuzzyColumns.from_dicts([e["details"].get("fuzzy") for e in examples])
        if has_fuzzy
        else None
    )
    return ExampleTable(
        ids=[e["id"] for e in examples],
        eval_paths=[e["eval"]["path"] for e in examples],
        eval_lines=[e["eval"]["line"] for e in examples],
        fingerprints=[e["fingerprint"] for e in examples],
        methods=methods,
        scores={
            k: [float("nan") if e["scores"][k] is None else e["scores"][k] for e in examples]
            for k in names
        },
        reasons={i: tuple(_reason(r) for r in e["reasons"]) for i, e in enumerate(examples)},
        ngram=ngram,
        details=details,
        texts={i: e.get("text") for i, e in enumerate(examples)},
        fuzzy=fuzzy,
    )


def _reason(d: Mapping[str, Any]) -> Reason:
    return Reason(d["rule"], d["value"], d["threshold"], d["source"], d["detector"])


def _from_scan_v1(data: Mapping[str, Any]) -> dict[str, Any]:
    """A ``contam.scan/1`` document in this schema's shape."""
    examples = []
    for e in data["examples"]:
        ngram = {
            k: e[k] for k in ("scorable", "n_tokens", "total_ngrams", "matched_ngrams", "zscore")
        }
        ngram.update(
            ignored_ngrams=0,
            best_source=e["best_source"],
            matched_sources=e["matched_sources"],
            per_source=e["per_source"],
            evidence=e["evidence"],
        )
        reasons = [{**r, "detector": "ngram", "rule": _v1_rule(r)} for r in e["reasons"]]
        examples.append(
            {
                "id": e["id"],
                "eval": e["eval"],
                "fingerprint": e["fingerprint"],
                "text": None,
                "flagged": e["flagged"],
                "reasons": reasons,
                "scores": {
                    "longest_run": e["longest_run"],
                    "overlap_fraction": e["overlap_fraction"],
                },
                "details": {"ngram": ngram},
            }
        )
    return {
        "schema": SCHEMA,
        "tool": data["tool"],
        "command": "scan",
        "redacted": any(
            e["evidence"] is not None and e["evidence"]["text"] is None for e in data["examples"]
        ),
        "methods": [m.to_dict() for m in NGRAM_METHODS],
        "config": data["config"],
        "inputs": data["inputs"],
        "warnings": [],
        "summary": data["summary"],
        "examples": examples,
    }


def _v1_rule(r: Mapping[str, Any]) -> str:
    if r["rule"] != "source-threshold":
        return str(r["rule"])
    # NOTE: v1 named both per-source rules alike; run thresholds are token counts (> 1),
    # overlap thresholds fractions (<= 1).
    return "source-run" if r["threshold"] > 1 or r["value"] > 1 else "source-overlap"
