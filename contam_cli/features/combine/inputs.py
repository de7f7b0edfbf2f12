"""The inputs of ``contam report``: reports contam wrote, and files of scores (JSONL or CSV).

Every input becomes a :class:`ScoreInput`: its ids in order, its methods and one float column
per method (NaN: not scored). A report keeps its :class:`~contam_cli.report.Report` too, for the
evidence, texts and details the combined report carries on. A scores file is
``{"id": ..., "<method>": score, ...}`` per JSONL line or CSV row; its methods are
``detector="input"``, direction ``higher`` unless told otherwise.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli.errors import InputError
from contam_cli.io.extract import TextSpec, extract_id
from contam_cli.io.formats import decompress_errors, open_binary, read_whole
from contam_cli.io.lines import iter_lines, line_span, parse_line
from contam_cli.io.output import split_compression
from contam_cli.report import Method, Report, report_from_dict

__all__ = ["ScoreInput", "read_input", "read_rows"]

_ID = TextSpec(id_field="id")
#: CSV cells read as a null score (case-insensitive). NOTE: not "nan": a NaN (or an infinity),
#: as a number or as text, is a score gone wrong, an error naming the line, never "not scored".
NULLS = frozenset({"", "null", "none", "na"})


@dataclass(frozen=True, eq=False)
class ScoreInput:
    """One input, as columns; see the module docstring."""

    path: str
    """The path as given (``<input K>`` for a Report passed in memory, K counted from 1)."""
    kind: str
    """``report``, ``jsonl`` or ``csv``."""
    ids: tuple[str, ...]
    methods: tuple[Method, ...]
    scores: dict[str, np.ndarray]
    lines: tuple[int | None, ...]
    """Per id, its line in a scores file (None for a report)."""
    report: Report | None = None

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.methods]


def read_input(value: Report | str | Path, position: int) -> ScoreInput:
    """Input number `position` (from 1): a Report, a report file, or a scores file."""
    if isinstance(value, Report):
        return _from_report(value, f"<input {position}>")
    if not isinstance(value, (str, Path)):
        raise InputError(
            f"<input {position}>", f"expected a Report or a path, got {type(value).__name__}"
        )
    path = str(value)
    if split_compression(Path(path).name)[0].lower().endswith(".csv"):
        return _from_rows(path, "csv", read_rows(path, "csv"))
    data = _read_bytes(path)
    doc = _whole_json(data, path)
    if isinstance(doc, dict) and "schema" in doc:
        return _from_report(report_from_dict(doc, path), path)
    if doc is not None and (not isinstance(doc, dict) or data.strip().count(b"\n")):
        raise InputError(path, "neither a contam report (no 'schema' key) nor a scores file")
    return _from_rows(path, "jsonl", read_rows(path, "jsonl", data))


def _whole_json(data: bytes, path: str) -> Any:
    """The file parsed as one JSON document; None when it is not one (JSONL, say). A file that
    starts like a report but does not parse is an InputError with the line."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if b'"schema"' in data[:200] and data.lstrip()[:1] == b"{":
            line = data.count(b"\n", 0, e.pos) + 1
            raise InputError(path, f"invalid JSON report: {e.msg}", line) from None
        return None


def _read_bytes(path: str) -> bytes:
    return read_whole(path)


def _from_report(report: Report, path: str) -> ScoreInput:
    ids = report.examples.ids
    seen: dict[str, int] = {}
    for e, i in enumerate(ids):
        if i in seen:
            raise InputError(
                path, f"duplicate id {i!r} (examples {seen[i] + 1} and {e + 1} of the report)"
            )
        seen[i] = e
    return ScoreInput(
        path=path,
        kind="report",
        ids=ids,
        methods=report.methods,
        scores=dict(report.examples.scores),
        lines=(None,) * len(ids),
        report=report,
    )


def _from_rows(path: str, kind: str, rows: Iterator[tuple[int, dict[str, Any]]]) -> ScoreInput:
    """A scores file's input from its rows ``(line, {"id": ..., method: value, ...})``."""
    ids: list[str] = []
    lines: list[int | None] = []
    first: dict[str, int] = {}
    columns: dict[str, list[float]] = {}
    for line, row in rows:
        if "id" not in row:
            raise InputError(
                path,
                'no "id" in this record (a scores record is {"id": ...,'
                ' "<method>": score}; a contam report has a "schema" key)',
                line,
            )
        i = extract_id(row, _ID, (path, line))
        if not i:
            raise InputError(path, "an empty id", line)
        if i in first:
            raise InputError(path, f"duplicate id {i!r} (first on line {first[i]})", line)
        first[i] = line
        for key, value in row.items():
            if key == "id":
                continue
            if key not in columns:
                columns[key] = [math.nan] * len(ids)
            columns[key].append(score_value(value, key, path, line))
        ids.append(i)
        lines.append(line)
        for col in columns.values():
            if len(col) < len(ids):
                col.append(math.nan)
    if not ids:
        raise InputError(path, "no scores in this file (empty)")
    if not columns:
        raise InputError(path, "no score column besides the id", lines[0])
    methods = tuple(Method(k, "input", "higher", description=f"from {path}") for k in columns)
    return ScoreInput(
        path=path,
        kind=kind,
        ids=tuple(ids),
        methods=methods,
        scores={k: np.array(v, dtype=np.float64) for k, v in columns.items()},
        lines=tuple(lines),
    )


def score_value(value: object, key: str, path: str, line: int) -> float:
    """A score read from a file: a finite number, or null (NaN); anything else, NaN and the
    infinities (as numbers or as text) too, an InputError.

    >>> score_value(2, "m", "s.jsonl", 1), score_value(None, "m", "s.jsonl", 1)
    (2.0, nan)
    >>> score_value("NaN", "m", "s.csv", 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    contam_cli.errors.InputError: s.csv:3: score 'm' is nan, expected a finite number (null ...
    """
    if value is None:
        return math.nan
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in NULLS:
            return math.nan
        try:
            value = float(text)
        except ValueError:
            raise InputError(
                path, f"score {key!r} is {text[:40]!r}, expected a number or null", line
            ) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a boolean" if isinstance(value, bool) else type(value).__name__
        raise InputError(path, f"score {key!r} is {kind}, expected a number or null", line)
    if not math.isfinite(value):
        raise InputError(
            path,
            f"score {key!r} is {value}, expected a finite number (null or an empty cell: not "
            "scored)",
            line,
        )
    return float(value)


def read_rows(
    path: str, kind: str, data: bytes | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, record)`` of each non-blank JSONL line or CSV row of `path` (kind ``jsonl`` or
    ``csv``); CSV cells are strings. Malformed records are InputErrors naming file and line."""
    if kind == "csv":
        return _csv_rows(path)
    return _jsonl_rows(path, _read_bytes(path) if data is None else data)


def _jsonl_rows(path: str, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, (offset, raw) in enumerate(iter_lines(io.BytesIO(data), 0, path), 1):
        _, _, content = line_span(offset, raw)
        if not content.strip():
            continue
        obj = parse_line(content, (path, number))
        if not isinstance(obj, dict):
            raise InputError(path, "expected a JSON object per line", number)
        yield number, obj


def _csv_rows(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        raw = open_binary(path)
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None
    with raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        line = 1
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(path, "empty file (expected a header row with an id column)")
            header = [h.strip() for h in header]
            if len(set(header)) != len(header):
                raise InputError(path, f"repeated column names in the header {header}", 1)
            for row in reader:
                start, line = line + 1, reader.line_num
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    raise InputError(
                        path, f"{len(row)} cells, but the header has {len(header)}", start
                    )
                yield start, dict(zip(header, row))
        except UnicodeDecodeError:
            raise InputError(path, "invalid UTF-8", reader.line_num + 1) from None
        except csv.Error as e:
            raise InputError(path, f"invalid CSV: {e}", reader.line_num) from None
        except decompress_errors() as e:
            raise InputError(path, f"cannot read file: {e}", reader.line_num) from None
