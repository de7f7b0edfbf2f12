"""Reports on disk: the JSON written piece by piece, and read back by :func:`load_report`.

The document is ``orjson.dumps(report.to_dict(), option=OPT_INDENT_2 | OPT_APPEND_NEWLINE)``:
versioned (``schema``), deterministic (same input, same bytes), strict JSON (no NaN: missing values
are ``null``). It is produced piece by piece: the header, then the examples a slice at a time, so
neither every example's dict nor the whole text is ever in memory at once.

Most examples of a scan match nothing; their JSON differs only in a few scalar values. For those,
each column of a slice is dumped by orjson in one call and split into its values' texts, which are
then laid into the fixed text around them (taken from orjson's own dump of such an example): no
dict per example at all. The few other examples are dumped one dict each.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from contam_cli.io.output import atomic_writer
from contam_cli.report.report import Report
from contam_cli.report.table import ExampleTable

__all__ = ["SLICE_EXAMPLES", "iter_json", "save_report", "write_json"]

#: Examples written per piece: a few MB of text at a time.
SLICE_EXAMPLES = 4096

_OPTS = orjson.OPT_INDENT_2
#: How the header dumps with an empty examples list: the last key, then the end of the object.
_EMPTY_TAIL = b'"examples": []\n}'


def iter_json(report: Report, *, slice_examples: int = SLICE_EXAMPLES) -> Iterator[bytes]:
    """The JSON report as consecutive pieces of UTF-8 (each ends between two values, so each
    also decodes on its own); joined, they are exactly the bytes of one whole dump."""
    if slice_examples < 1:
        raise ValueError("slice_examples must be at least 1")
    head = orjson.dumps({**report.header(), "examples": []}, option=_OPTS)
    assert head.endswith(_EMPTY_TAIL)
    yield head[: -len(b"]\n}")]  # ... "examples": [
    n = len(report.examples)
    if n == 0:
        yield b"]\n}\n"
        return
    sep = b"\n"
    for start in range(0, n, slice_examples):
        stop = min(start + slice_examples, n)
        yield sep
        yield _slice(report.examples, start, stop, report.redact)
        sep = b",\n"
    yield b"\n  ]\n}\n"


def write_json(report: Report, fh: IO[bytes]) -> None:
    """Write the JSON report into the binary stream `fh`, piece by piece (see :func:`iter_json`)."""
    for piece in iter_json(report):
        fh.write(piece)


def save_report(report: Report, path: str | Path, *, inputs: Sequence[str | Path] = ()) -> None:
    """Write the JSON report to `path` atomically (compressed by its suffix); never over one of
    `inputs`."""
    with atomic_writer(path, inputs=inputs) as fh:
        write_json(report, fh)


def _items(dicts: list[dict[str, Any]]) -> bytes:
    """Items of the examples list, at their depth in the document, separated by ``,\\n``."""
    # NOTE: a dumped list reads "[\n  {...},\n  {...}\n]" and JSON strings hold no raw newline,
    # so indenting every line by two more spaces puts the items at the depth of the "examples"
    # list; dropping "[\n" and "\n  ]" then leaves "    {...},\n    {...}".
    return orjson.dumps(dicts, option=_OPTS).replace(b"\n", b"\n  ")[2:-4]


def _item(d: dict[str, Any]) -> bytes:
    """One item of the examples list, at its depth in the document."""
    return b"    " + orjson.dumps(d, option=_OPTS).replace(b"\n", b"\n    ")


def _template(table: ExampleTable, n_values: int) -> tuple[bytes, ...]:
    """The fixed text of a plain example before, between and after its `n_values` values, as
    orjson writes it at its depth in the document."""
    marks: list[Any] = [f"\0{j}\0" for j in range(n_values)]
    rest = _item(table.plain_dict(*marks))
    pieces = []
    for mark in marks:
        head, found, rest = rest.partition(orjson.dumps(mark))
        assert found
        pieces.append(head)
    pieces.append(rest)
    return tuple(pieces)


def _scalars(values: Sequence[Any]) -> list[bytes] | None:
    """orjson's text of each value, from one dump; None unless all fit on one line."""
    if not values:
        return []
    dumped = orjson.dumps(values, option=_OPTS)
    # NOTE: "[\n  a,\n  b\n]" holds exactly one newline more than items iff every item is on
    # one line (a string's newlines are escaped), and then ",\n  " only ever separates items.
    if dumped.count(b"\n") != len(values) + 1:
        return None
    return dumped[4:-2].split(b",\n  ")


def _slice(table: ExampleTable, start: int, stop: int, redact: bool) -> bytes:
    """Examples ``start`` to ``stop`` as :func:`_items` would write their dicts."""
    texts = []
    columns = table.plain_columns(start, stop)
    for values in columns:
        text = _scalars(values)
        if text is None:  # not seen from a scan; the general way copes with anything
            return _items(table.example_dicts(start, stop, redact, columns))
        texts.append(text)
    m = stop - start
    fixed = _template(table, len(texts))
    # NOTE: example k's text is parts[k * step : (k + 1) * step]: fixed pieces at even offsets,
    # values at odd ones. Each list slice assignment below fills one of them in every example.
    step = len(fixed) + len(texts)
    parts = [b""] * (m * step)
    parts[0::step] = [b",\n" + fixed[0]] * m
    parts[0] = fixed[0]
    for j, text in enumerate(texts):
        parts[2 * j + 1 :: step] = text
        parts[2 * j + 2 :: step] = [fixed[j + 1]] * m
    # The few examples with reasons or details: dumped whole, in place of their text.
    for k in table.rich_rows(start, stop):
        at = k * step
        item = _item(table.example_dict(start + k, redact, [col[k] for col in columns]))
        parts[at : at + step] = [(b",\n" if k else b"") + item] + [b""] * (step - 1)
    return b"".join(parts)
