"""Corpus documents in batches of text bytes, by the fastest route for each format."""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import BinaryIO

import orjson

from contam_cli.errors import InputError
from contam_cli.io.extract import TextSpec
from contam_cli.io.formats import StrPath, detect_format, open_binary, open_raw
from contam_cli.io.jsonl_fast import kernel_batches, kernels
from contam_cli.io.line_batch import LineBatch, TextBatch
from contam_cli.io.lines import BIG_LINE, is_blank, iter_lines, seek_line_start
from contam_cli.io.model import ReadNotes, Record
from contam_cli.io.readers import iter_records
from contam_cli.io.remote import RemoteFile
from contam_cli.io.source import FileSource

__all__ = ["TextBatch", "iter_text_batches"]


def iter_text_batches(
    path: StrPath | RemoteFile,
    *,
    spec: TextSpec = TextSpec(),
    byte_range: tuple[int, int] | None = None,
    chunk_bytes: int = 1 << 20,
    line_count: list[int] | None = None,
    notes: ReadNotes | None = None,
    accel: bool | None = None,
) -> Iterator[TextBatch]:
    """The corpus documents of one file in batches, by the fastest route for its format.

    Yields exactly the documents of :func:`iter_records` (``role="corpus"``), with the same
    errors: JSONL (compressed or not) is parsed line by line straight to text; anything unusual
    on a line falls back to the full record reader for that line. `line_count`, when given,
    receives the number of lines read from a JSONL file (in byte-range mode: the lines starting
    inside the range, so that the counts of earlier ranges turn range lines into file lines).
    `notes` receives what was replaced while reading (lone surrogates), for the report.
    `accel`: read JSONL with the compiled line scanner (:mod:`contam_cli.io.jsonl_fast`; None:
    when numba is installed); the batches are the same either way.
    """
    if isinstance(path, RemoteFile):
        src = FileSource(path.url, "corpus", spec, path.name, remote=path, notes=notes)
    else:
        src = FileSource(str(path), "corpus", spec, Path(path).name, notes=notes)
    fmt = detect_format(path)
    if fmt == "jsonl":
        yield from _jsonl_text_batches(src, byte_range, chunk_bytes, line_count, accel)
        return
    records: list[Record] = []
    size = ordinal = 0
    for rec in iter_records(path, role="corpus", spec=spec, byte_range=byte_range, notes=notes):
        records.append(rec)
        size += len(rec.text)
        if size >= chunk_bytes:
            yield _records_batch(records, ordinal)
            ordinal += len(records)
            records, size = [], 0
    if records:
        yield _records_batch(records, ordinal)


def _records_batch(records: list[Record], ordinal: int) -> TextBatch:
    return TextBatch(
        [r.text.encode("utf-8", "surrogatepass") for r in records],
        [r.locator.span[0] if r.locator.span else -1 for r in records],
        ordinal,
        records.__getitem__,
        [r.locator.line if r.locator.line is not None else -1 for r in records],
    )


def _jsonl_text_batches(
    src: FileSource,
    byte_range: tuple[int, int] | None,
    chunk_bytes: int,
    line_count: list[int] | None,
    accel: bool | None,
) -> Iterator[TextBatch]:
    ranged = byte_range is not None
    if byte_range is not None:
        fh: BinaryIO = open_raw(src.target)  # closed below
        start = seek_line_start(fh, byte_range[0], src.path)
        limit = byte_range[1]
    else:
        fh, start, limit = open_binary(src.target), 0, sys.maxsize
    fast = not src.spec.fields and src.spec.id_field is None
    k = kernels() if fast and accel is not False else None
    try:
        if k is not None:
            span = (start, limit, ranged)
            count = yield from kernel_batches(k, src, fh, span, chunk_bytes, line_count)
        else:
            count = yield from _line_batches(src, fh, (start, limit, ranged), fast, chunk_bytes,
                                             line_count)  # fmt: skip
    except OSError as exc:
        raise InputError(src.path, f"cannot read file: {exc.strerror or exc}") from None
    finally:
        fh.close()
    if count == 0 and not ranged:
        raise InputError(src.path, "no records")


def _line_batches(
    src: FileSource,
    fh: BinaryIO,
    span: tuple[int, int, bool],
    fast: bool,
    chunk_bytes: int,
    line_count: list[int] | None,
) -> Generator[TextBatch, None, int]:
    """The line-by-line route (orjson per line); returns the number of documents."""
    start, limit, ranged = span
    loads = orjson.loads
    count = 0
    batch = LineBatch(src, ranged, 0)
    line_no = 0
    for offset, raw in iter_lines(fh, start, src.path):
        line_no += 1
        if offset >= limit:
            line_no -= 1  # that line belongs to the next range
            break
        if not raw or raw.isspace() or (not offset and is_blank(0, raw)):
            continue
        text: object = None
        # NOTE: offset 0 may start with a BOM: the full reader strips it; and it parses a big
        # line with less memory than orjson.
        if fast and offset and len(raw) <= BIG_LINE:
            try:
                obj = loads(raw)
            except orjson.JSONDecodeError:
                obj = None
            if type(obj) is dict:
                text = obj.get("text")
        if type(text) is str:
            data = None if text.isascii() else _text_as_written(raw)
            batch.add(data or text.encode("utf-8"), offset, line_no, raw)
        else:  # the full reader: other shapes, --field, and the exact error for bad lines
            rec = batch.full_record(offset, line_no, raw, len(batch.texts))
            batch.add(rec.text.encode("utf-8", "surrogatepass"), offset, line_no, raw, rec)
        count += 1
        if batch.size >= chunk_bytes:
            yield batch.done()
            batch = LineBatch(src, ranged, count)
    if batch.texts:
        yield batch.done()
    if line_count is not None:
        line_count.append(line_no)
    return count


def _text_as_written(line: bytes) -> bytes | None:
    """The UTF-8 of a JSONL line's top-level ``"text"`` string, sliced from the line itself, or
    None when that cannot be done safely (then the parsed string is encoded instead).

    NOTE: without a backslash in the line, no string holds an escape or a quote, so a string's
    bytes between its quotes are its UTF-8 text (orjson has already validated the line), and
    ``"text"`` appearing once can only be the top-level key the parser found. This saves
    re-encoding a non-ASCII text that was just decoded.
    """
    if b"\\" in line or line.count(b'"text"') != 1:
        return None
    at = line.find(b'"text":"')
    if at < 0:  # written with spaces around the colon
        return None
    start = at + 8
    return line[start : line.index(b'"', start)]
