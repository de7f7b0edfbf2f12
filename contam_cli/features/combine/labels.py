"""Labels for ``contam report``: which examples are known to be contaminated (1) or clean (0).

A JSONL or CSV file of ``{"id", "label"}``; the label may also be called ``contaminated`` or
``leaked``, and reads 0/1 or false/true. Duplicate ids are an error naming both lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contam_cli.errors import InputError
from contam_cli.features.combine.inputs import read_rows
from contam_cli.io.extract import TextSpec, extract_id
from contam_cli.io.output import split_compression

__all__ = ["LABEL_KEYS", "label_value", "read_labels"]

#: The keys a label may be under, in the order they are looked for.
LABEL_KEYS = ("label", "contaminated", "leaked")
_TRUE = frozenset({"1", "true"})
_FALSE = frozenset({"0", "false"})


def read_labels(path: str | Path | Mapping[str, Any]) -> dict[str, int]:
    """Labels by id, in file order, from a JSONL or CSV file (or a mapping id -> label)."""
    if isinstance(path, Mapping):
        return {str(k): label_value(v, "<labels>", None) for k, v in path.items()}
    where = str(path)
    kind = "csv" if split_compression(Path(where).name)[0].lower().endswith(".csv") else "jsonl"
    labels: dict[str, int] = {}
    lines: dict[str, int] = {}
    for line, row in read_rows(where, kind):
        keys = [k for k in LABEL_KEYS if k in row]
        if len(keys) != 1:
            found = "none of" if not keys else "more than one of"
            raise InputError(where, f"{found} the label keys {', '.join(LABEL_KEYS)}", line)
        if "id" not in row:
            raise InputError(where, 'no "id" in this record', line)
        i = extract_id(row, TextSpec(id_field="id"), (where, line))
        if not i:
            raise InputError(where, "an empty id", line)
        if i in lines:
            raise InputError(where, f"duplicate id {i!r} (first on line {lines[i]})", line)
        lines[i] = line
        labels[i] = label_value(row[keys[0]], where, line)
    if not labels:
        raise InputError(where, "no labels in this file (empty)")
    return labels


def label_value(value: object, path: str, line: int | None) -> int:
    """A label as 0 or 1: from 0/1, false/true (booleans or text, any case).

    >>> label_value(True, "l.jsonl", 1), label_value("0", "l.csv", 2), label_value(1, "l", 3)
    (1, 0, 1)
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return int(value.strip().lower() in _TRUE)
    raise InputError(path, f"label {value!r} is not 0/1 or false/true", line)
