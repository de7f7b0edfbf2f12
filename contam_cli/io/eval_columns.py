"""The eval reader's records as columns: ids, texts and lines, a batch at a time.

What a scan's eval side needs of each example is its id, its text and its line; a Record (and
its Locator) per example was most of the cost of reading a large eval set. :func:`iter_eval_columns`
reads what :func:`~contam_cli.io.readers.iter_eval` reads, with the same errors, without them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import BinaryIO

import numpy as np
import orjson

from contam_cli.errors import InputError
from contam_cli.io.extract import TextSpec
from contam_cli.io.formats import StrPath, detect_format, open_binary, read
from contam_cli.io.jsonl_fast import BLOCK_SIZE
from contam_cli.io.jsonl_fast import kernels as jsonl_kernels
from contam_cli.io.lines import BIG_LINE, is_blank, iter_lines
from contam_cli.io.model import Locator, ReadNotes, Record
from contam_cli.io.readers import _line_record, _read_file, eval_sources
from contam_cli.io.source import FileSource

__all__ = ["EvalColumns", "iter_eval_columns"]


@dataclass
class EvalColumns:
    """Consecutive eval records of one file, as columns (see :func:`iter_eval_columns`)."""

    path: str
    ids: list[str]
    texts: list[bytes]
    """Each record's text, UTF-8 (lone surrogates as ``surrogatepass`` writes them): what the
    tokenizer reads, never decoded only to be encoded again."""
    lines: list[int]
    """1-based line of each record (-1: unknown)."""


def iter_eval_columns(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    notes: ReadNotes | None = None,
    size: int = 4096,
    accel: bool | None = None,
) -> Iterator[EvalColumns]:
    """:func:`~contam_cli.io.readers.iter_eval`'s records (the same ids, texts, lines and
    errors), up to `size` at a time as columns.

    NOTE: a JSONL file under the default spec is read without a Record per line: a line that
    holds an object with a string "id" and "text" goes straight into the columns (decoded by the
    compiled line scanner a block at a time where numba is installed, else parsed line by line),
    and any other line (the first, blank ones, ``\\r\\n`` ends, other shapes, errors) through
    the record reader. For the other files this is iter_eval batched. `accel`: use the compiled
    scanner (None: when installed; False: never, as when the caller's tokenizer does without).
    ``tests/io/test_eval_columns.py`` holds every route equal to it.
    """
    sources = eval_sources(paths, spec, include, exclude, notes)
    seen: dict[str, int] = {}
    # NOTE: where each id was first seen (file, line, record), as columns: see iter_eval
    where = (array("i"), array("q"), array("q"))
    for f, src in enumerate(sources):
        for batch in _file_columns(src, size, accel):
            ids, texts, lines, ordinals = batch
            if not seen.keys().isdisjoint(ids) or len(set(ids)) != len(ids):
                _refuse_duplicate(sources, seen, where, src.path, batch)
            base = len(seen)
            seen.update(zip(ids, range(base, base + len(ids))))
            where[0].extend([f] * len(ids))
            where[1].extend(lines)
            where[2].extend(ordinals)
            yield EvalColumns(src.path, ids, texts, lines)


_Columns = tuple[list[str], list[bytes], list[int], list[int]]
"""ids, texts, lines and record ordinals (-1: unknown) of consecutive records."""


def _file_columns(src: FileSource, size: int, accel: bool | None) -> Iterator[_Columns]:
    """One eval file's records as columns, up to `size` at a time (see iter_eval_columns)."""
    cols: _Columns = ([], [], [], [])
    if src.spec.fields or src.spec.id_field is not None or detect_format(src.path) != "jsonl":
        yield from _in_batches(_record_rows(src, cols), cols, size)
        return
    k = jsonl_kernels() if accel is not False else None
    try:
        with open_binary(src.target) as fh:
            count = 0
            rows = (
                _jsonl_rows(src, iter_lines(fh, 0, src.path), cols)
                if k is None
                else _kernel_rows(k, src, fh, cols)
            )
            for batch in _in_batches(rows, cols, size):
                count += len(batch[0])
                yield batch
    except OSError as exc:
        raise InputError(src.path, f"cannot read file: {exc.strerror or exc}") from None
    if count == 0:
        raise InputError(src.path, "no records")


def _in_batches(rows: Iterator[None], cols: _Columns, size: int) -> Iterator[_Columns]:
    """The records `rows` appends to `cols` (it yields after each few), `size` at a time.

    NOTE: the records read before an error go first: a duplicate id among them is the error
    the record reader meets first, as it checks each record once it is read.
    """
    try:
        for _ in rows:
            while len(cols[0]) >= size:
                yield _head(cols, size)
    except Exception:
        if cols[0]:
            yield _head(cols, len(cols[0]))
        raise
    if cols[0]:
        yield _head(cols, len(cols[0]))


def _record_rows(src: FileSource, cols: _Columns) -> Iterator[None]:
    """Every record of the file by the record reader, into `cols`."""
    for rec in _read_file(src):
        loc = rec.locator
        _append(cols, rec.id, rec.text, loc.line, loc.record)
        yield


def _jsonl_rows(
    src: FileSource, lines: Iterator[tuple[int, bytes]], cols: _Columns
) -> Iterator[None]:
    """Every record of a JSONL file's `lines`, into `cols`: each line that parses to an object
    with a string "id" and "text" at once, any other through the record reader."""
    loads, invalid = orjson.loads, orjson.JSONDecodeError
    ids, texts, line_nos, ordinals = cols
    line_no = ordinal = 0
    for offset, raw in lines:
        line_no += 1
        found: object = None
        text: object = None
        obj: object = invalid
        if offset and len(raw) <= BIG_LINE and not raw.endswith(b"\r"):
            try:
                obj = loads(raw)
            except invalid:  # NOTE: blank, not JSON, or a lone surrogate: the reader says which
                obj = invalid
            if type(obj) is dict:  # NOTE: hot path: {"id": str, "text": str}
                text, found = obj.get("text"), obj.get("id")
        if type(text) is not str or type(found) is not str:
            rec = _other_line(src, offset, raw, line_no, ordinal, None if obj is invalid else obj)
            if rec is None:
                continue
            found, text = rec.id, rec.text
        ids.append(found)
        texts.append(text.encode("utf-8", "surrogatepass"))
        line_nos.append(line_no)
        ordinals.append(ordinal)
        ordinal += 1
        yield


def _kernel_rows(k: ModuleType, src: FileSource, fh: BinaryIO, cols: _Columns) -> Iterator[None]:
    """:func:`_jsonl_rows` by the compiled line scanner: a block of lines at a time, the ids
    and texts of the lines it accepts decoded by one kernel call, and every line it declines
    (and the first, the ``\\r``-ended and the very long ones) through the record reader, as
    there."""
    line_no = ordinal = offset = 0
    pending: list[bytes] = []
    while True:
        block = read(fh, BLOCK_SIZE, src.path, line_no + 1)
        cut = block.rfind(b"\n")
        if block and cut < 0:
            pending.append(block)
            continue
        data = b"".join([*pending, block[: cut + 1]])
        pending = [block[cut + 1 :]]
        ordinal, lines = _block_columns(k, src, data, offset, line_no, ordinal, cols)
        line_no += lines
        offset += len(data)
        yield
        if not block:
            break


def _block_columns(
    k: ModuleType,
    src: FileSource,
    data: bytes,
    offset: int,
    line_no: int,
    ordinal: int,
    cols: _Columns,
) -> tuple[int, int]:
    """Append the records of `data` (whole lines from file `offset`, after `line_no` lines)
    to `cols`; returns the next record ordinal and the lines read. A declined line that is an
    error raises once the records before it are in `cols`."""
    arr = np.frombuffer(data, dtype=np.uint8)
    starts, ends, status, t0, t1, out, i0, i1, id_bytes = k.scan_eval_lines(arr, offset == 0)
    fast = status == k.FAST
    # NOTE: as _jsonl_rows: a "\r"-ended or very long line goes to the record reader.
    last = arr[np.maximum(ends - 1, 0)]
    fast &= ((ends > starts) & (last != 0x0D)) & (ends - starts <= BIG_LINE)
    other = np.flatnonzero(~fast & (status != k.BLANK)).tolist()
    texts, ids = out.tobytes(), id_bytes.tobytes()
    begin = 0
    for j in [*other, len(starts)]:
        run = np.flatnonzero(fast[begin:j]) + begin
        ids_here = [ids[a:b].decode("utf-8") for a, b in zip(i0[run].tolist(), i1[run].tolist())]
        cols[0].extend(ids_here)
        cols[1].extend([texts[a:b] for a, b in zip(t0[run].tolist(), t1[run].tolist())])
        cols[2].extend((run + line_no + 1).tolist())
        cols[3].extend(range(ordinal, ordinal + len(run)))
        ordinal += len(run)
        if j == len(starts):
            break
        a, b = int(starts[j]), int(ends[j])
        rec = _other_line(src, offset + a, data[a:b], line_no + j + 1, ordinal, None)
        if rec is not None:
            _append(cols, rec.id, rec.text, line_no + j + 1, ordinal)
            ordinal += 1
        begin = j + 1
    return ordinal, len(starts)


def _head(cols: _Columns, size: int) -> _Columns:
    """The first `size` records of `cols`, taken out of it."""
    head = tuple(c[:size] for c in cols)
    for c in cols:
        del c[:size]
    return head  # type: ignore[return-value]


def _other_line(
    src: FileSource, offset: int, raw: bytes, line_no: int, ordinal: int, obj: object
) -> Record | None:
    """A line the hot path does not take, as the record reader reads it (None: blank);
    `obj`: what it parsed to, None when it did not parse (or was not tried)."""
    if obj is None:
        blank = is_blank(offset, raw)  # NOTE: a BOM alone on the first line is blank too
        return None if blank else _line_record(src, offset, raw, line_no, ordinal)
    return _line_record(src, offset, raw, line_no, ordinal, obj)


def _append(cols: _Columns, found: str, text: str, line: int | None, ordinal: int | None) -> None:
    cols[0].append(found)
    cols[1].append(text.encode("utf-8", "surrogatepass"))
    cols[2].append(-1 if line is None else line)
    cols[3].append(-1 if ordinal is None else ordinal)


def _refuse_duplicate(
    sources: list[FileSource],
    seen: dict[str, int],
    where: tuple[array[int], array[int], array[int]],
    path: str,
    batch: _Columns,
) -> None:
    """Raise iter_eval's error for the first id of `batch` seen before (in an earlier batch, or
    earlier in this one)."""
    ids, _, lines, ordinals = batch
    first_here: dict[str, int] = {}
    for j, found in enumerate(ids):
        k = seen.get(found)
        if k is not None:
            f, line, ordinal = where[0][k], where[1][k], where[2][k]
            first = Locator(sources[f].path, _known(line), _known(ordinal))
        elif found in first_here:
            j0 = first_here[found]
            first = Locator(path, _known(lines[j0]), _known(ordinals[j0]))
        else:
            first_here[found] = j
            continue
        raise InputError(path, f"duplicate id {found!r} (first seen at {first})", _known(lines[j]))
    raise AssertionError("no duplicate id in the batch")


def _known(value: int) -> int | None:
    return None if value < 0 else value
