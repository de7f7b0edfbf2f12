"""The report: the value every detector fills, and its persistence (JSON, versioned)."""

from __future__ import annotations

from contam_cli.report.fuzzy import FUZZY_METHOD, FuzzyColumns
from contam_cli.report.load import load_report, read_json, report_from_dict
from contam_cli.report.ngram import NGRAM_METHODS, NgramColumns
from contam_cli.report.persist import SLICE_EXAMPLES, iter_json, save_report, write_json
from contam_cli.report.report import SCHEMA, Report
from contam_cli.report.table import ExampleTable
from contam_cli.report.values import (
    CONTROL_SUFFIX,
    Direction,
    ExampleResult,
    FuzzyMatch,
    FuzzyResult,
    Method,
    NgramResult,
    Reason,
    SourceResult,
)

__all__ = [
    "CONTROL_SUFFIX",
    "FUZZY_METHOD",
    "NGRAM_METHODS",
    "SCHEMA",
    "SLICE_EXAMPLES",
    "Direction",
    "ExampleResult",
    "ExampleTable",
    "FuzzyColumns",
    "FuzzyMatch",
    "FuzzyResult",
    "Method",
    "NgramColumns",
    "NgramResult",
    "Reason",
    "Report",
    "SourceResult",
    "iter_json",
    "load_report",
    "read_json",
    "report_from_dict",
    "save_report",
    "write_json",
]
