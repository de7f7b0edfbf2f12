"""Per-example eval outcomes: a results file (JSONL or CSV) or records in memory.

A record holds an id and an outcome: a 0/1 correctness (``--metric accuracy``) or any number
(``--metric mean``). The outcome field is ``score_field``, else the first of ``correct``, ``acc``,
``exact_match``, ``score`` in the first record, else (an lm-evaluation-harness sample) the first
numeric field its ``metrics`` list names; every record must then have it. The id is ``id_field``,
else the first of the usual id keys, else ``doc_id``. lm-evaluation-harness ``--log_samples``
files are read as they are: one row per document and filter (``doc_id``, ``doc``, ``target``,
``resps``, ``filtered_resps``, ``filter``, ``metrics`` and the metric values); a file holding
several filters needs one chosen. For matching by fingerprint, the text is the record's ``doc``
(the eval record lm-eval logged) or else the record itself, extracted as a scan extracts an eval
record. Every problem is an InputError naming the file and line.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.errors import ArgumentError, InputError, UsageError
from contam_cli.features.impact.values import Metric
from contam_cli.io.extract import ID_KEYS, TextSpec, extract_text
from contam_cli.io.formats import open_binary, read
from contam_cli.io.inputs import classify
from contam_cli.io.lines import decode_whole, iter_lines, line_span, parse_line
from contam_cli.io.output import split_compression

__all__ = ["ID_FIELDS", "SCORE_FIELDS", "Outcomes", "ResultsSpec", "read_outcomes"]

SCORE_FIELDS = ("correct", "acc", "exact_match", "score")
"""Outcome fields looked for, in order, when none is named."""
ID_FIELDS = (*ID_KEYS, "doc_id")
"""Id fields looked for, in order, when none is named (``doc_id``: lm-evaluation-harness)."""
_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}

Where = tuple[str, int | None]


@dataclass(frozen=True, slots=True)
class ResultsSpec:
    """How to read a results file."""

    metric: Metric = "accuracy"
    score_field: str | None = None
    id_field: str | None = None
    want_ids: bool = True
    """Ids are required (matching by id); otherwise they are only labels."""
    text_fields: tuple[str, ...] = ()
    """With ``want_text``: the text fields of each record's ``doc`` (auto-detected if empty)."""
    want_text: bool = False
    lm_filter: str | None = None
    """Keep only the lm-evaluation-harness rows of this ``filter``."""


@dataclass(frozen=True)
class Outcomes:
    """The outcomes read, in file order."""

    path: str | None
    field: str
    values: np.ndarray
    """float64, one per record."""
    ids: tuple[str | None, ...]
    lines: tuple[int | None, ...]
    texts: tuple[str, ...] | None
    lm_filter: str | None
    id_source: str | None = None
    """The field every id was found in, when found by auto-detection (e.g. ``doc_id``)."""

    def __len__(self) -> int:
        return len(self.ids)

    def label(self, i: int) -> str:
        """Record ``i`` as a reader finds it: its id, else its line, else its position."""
        found, line = self.ids[i], self.lines[i]
        if found is not None:
            return found
        return f"line {line}" if line is not None else f"record {i}"


def read_outcomes(results: object, spec: ResultsSpec) -> Outcomes:
    """The outcomes of ``results``: a path (``.jsonl``/``.ndjson``/``.csv``, compressed or not)
    or an iterable of dict records in memory."""
    if spec.metric not in ("accuracy", "mean"):
        raise ArgumentError(f"metric must be 'accuracy' or 'mean', not {spec.metric!r}")
    given = classify(results, what="results")
    if given.memory is not None:
        path, rows = None, _memory_rows(given.memory)
    elif len(given.paths) != 1 or given.paths[0].is_dir():
        raise ArgumentError("results: give one results file (JSONL or CSV)")
    else:
        path = str(given.paths[0])
        rows = _file_rows(given.paths[0])
    collector = _Collector(spec)
    for row, where in rows:
        collector.add(row, where)
    return collector.finish(path)


def _file_rows(path: Path) -> Iterator[tuple[Mapping[str, Any], Where]]:
    base, _ = split_compression(path.name)
    fmt = _FORMATS.get(Path(base).suffix.lower())
    if fmt is None:
        raise InputError(
            path, "unknown results format (expected .jsonl, .ndjson or .csv, optionally compressed)"
        )
    return _jsonl_rows(str(path)) if fmt == "jsonl" else _csv_rows(str(path))


def _jsonl_rows(path: str) -> Iterator[tuple[Mapping[str, Any], Where]]:
    try:
        fh = open_binary(path)
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None
    with fh:
        for number, (offset, raw) in enumerate(iter_lines(fh, 0, path), start=1):
            content = line_span(offset, raw)[2]
            if not content.strip():
                continue
            where = (path, number)
            row = parse_line(content, where)
            if not isinstance(row, dict):
                raise InputError(path, "a results record must be a JSON object", number)
            yield row, where


def _csv_rows(path: str) -> Iterator[tuple[Mapping[str, Any], Where]]:
    try:
        with open_binary(path) as fh:
            data = read(fh, -1, path, None)
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None
    text = decode_whole(data, path).removeprefix("\ufeff")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(path, f"invalid CSV: {e}", line) from None
        if not cells or all(not c.strip() for c in cells):
            continue
        if header is None:
            header = _header(cells, path, line)
            continue
        if len(cells) != len(header):
            raise InputError(path, f"{len(cells)} fields, but the header has {len(header)}", line)
        yield dict(zip(header, cells)), (path, line)


def _header(cells: list[str], path: str, line: int) -> list[str]:
    names = [c.strip() for c in cells]
    seen = [n for i, n in enumerate(names) if n in names[:i]]
    if seen:
        raise InputError(path, f"the header names the column {seen[0]!r} twice", line)
    return names


def _memory_rows(items: Iterable[Any]) -> Iterator[tuple[Mapping[str, Any], Where]]:
    for i, row in enumerate(items):
        where = (f"results[{i}]", None)
        if not isinstance(row, Mapping):
            raise InputError(where[0], f"a results record must be a mapping, got {type(row)}")
        yield row, where


class _Collector:
    """Reads records one by one, keeping only the few values impact needs."""

    def __init__(self, spec: ResultsSpec) -> None:
        self.spec = spec
        self.field = spec.score_field
        self.values: list[float] = []
        self.ids: list[str | None] = []
        self.lines: list[int | None] = []
        self.texts: list[str] = []
        self.filters: dict[str | None, Where] = {}
        self.others: set[str | None] = set()
        self.id_sources: set[str] = set()

    def add(self, row: Mapping[str, Any], where: Where) -> None:
        name = row.get("filter")
        name = name if isinstance(name, str) else None
        if self.spec.lm_filter is not None and name != self.spec.lm_filter:
            self.others.add(name)
            return
        self.filters.setdefault(name, where)
        if self.field is None:
            self.field = _choose_field(row, where)
        self.values.append(_outcome(row, self.field, self.spec.metric, where))
        found, source = _record_id(row, self.spec, where)
        self.ids.append(found)
        self.id_sources.add(source)
        self.lines.append(where[1])
        if self.spec.want_text:
            doc = row.get("doc")
            record = doc if isinstance(doc, (dict, str)) else dict(row)
            self.texts.append(extract_text(record, TextSpec(fields=self.spec.text_fields), where))

    def finish(self, path: str | None) -> Outcomes:
        where = path or "results"
        if self.spec.lm_filter is not None and not self.values:
            present = ", ".join(sorted(repr(f) for f in self.others if f is not None)) or "none"
            raise UsageError(
                f"{where}: no record of the lm-eval filter {self.spec.lm_filter!r} "
                f"(filters present: {present})"
            )
        if not self.values:
            raise InputError(where, "no results records")
        named = sorted(f for f in self.filters if f is not None)
        if len(self.filters) > 1:
            raise UsageError(
                f"{where}: rows of {len(self.filters)} lm-eval filters "
                f"({', '.join(map(repr, named))}), one row per document each: choose one with "
                f"--filter {named[0]}"
            )
        if self.spec.want_ids:
            _check_unique(self.ids, self.lines, where)
        assert self.field is not None
        return Outcomes(
            path=path,
            field=self.field,
            values=np.array(self.values, dtype=np.float64),
            ids=tuple(self.ids),
            lines=tuple(self.lines),
            texts=tuple(self.texts) if self.spec.want_text else None,
            lm_filter=named[0] if named else None,
            id_source=next(iter(self.id_sources)) if len(self.id_sources) == 1 else None,
        )


def _get(row: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """``(found, value)`` at a dotted path; a key that itself holds dots wins."""
    if path in row:
        return True, row[path]
    current: Any = row
    for part in path.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.lstrip("-").isdigit():
            index = int(part)
            if not -len(current) <= index < len(current):
                return False, None
            current = current[index]
        else:
            return False, None
    return True, current


def _choose_field(row: Mapping[str, Any], where: Where) -> str:
    for name in SCORE_FIELDS:
        if name in row:
            return name
    listed = row.get("metrics")
    if isinstance(listed, list):
        for name in listed:
            if isinstance(name, str) and _number(row.get(name)) is not None:
                return name
    raise InputError(
        where[0],
        f"no outcome field: expected one of {', '.join(SCORE_FIELDS)} (or --score-field)",
        where[1],
    )


def _number(value: object) -> float | None:
    """A finite number from a JSON or CSV value (booleans and "true"/"false" are 1 and 0).

    >>> _number(True), _number(" 0.5 "), _number("FALSE"), _number("nan"), _number(None)
    (1.0, 0.5, 0.0, None, None)
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "false"):
            return float(text == "true")
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _outcome(row: Mapping[str, Any], field: str, metric: Metric, where: Where) -> float:
    found, value = _get(row, field)
    if not found:
        raise InputError(where[0], f"no field {field!r} in this record", where[1])
    number = _number(value)
    if number is None:
        shown = "null" if value is None else repr(value)[:40]
        raise InputError(where[0], f"{field!r} is {shown}, expected a finite number", where[1])
    if metric == "accuracy" and number not in (0.0, 1.0):
        raise InputError(
            where[0],
            f"{field!r} is {number:g}, but --metric accuracy needs 0 or 1 (--metric mean takes "
            "any number)",
            where[1],
        )
    return number


def _record_id(row: Mapping[str, Any], spec: ResultsSpec, where: Where) -> tuple[str | None, str]:
    """The record's id (None when not needed and not found), and where it came from."""
    names = (spec.id_field,) if spec.id_field is not None else ID_FIELDS
    for name in names:
        found, value = _get(row, name)
        if not found:
            continue
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return str(value), name if spec.id_field is None else ""
        if spec.id_field is not None and spec.want_ids:
            raise InputError(
                where[0],
                f"id field {name!r} is {value!r}, expected a string or an integer",
                where[1],
            )
    if not spec.want_ids:
        return None, ""
    expected = repr(spec.id_field) if spec.id_field else "one of " + ", ".join(ID_FIELDS)
    raise InputError(where[0], f"no id: expected {expected} (or --id-field)", where[1])


def _check_unique(ids: list[str | None], lines: list[int | None], where: str) -> None:
    first: dict[str | None, int] = {}
    for i, found in enumerate(ids):
        j = first.setdefault(found, i)
        if j != i:
            at = f" (first at line {lines[j]})" if lines[j] is not None else ""
            raise InputError(
                where if lines[i] is not None else f"results[{i}]",
                f"duplicate id {found!r}{at}",
                lines[i],
            )
