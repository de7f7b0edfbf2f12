"""Corpus documents in batches of text bytes, by the fastest route for each format."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import orjson

from contam_cli.errors import InputError
from contam_cli.io.extract import TextSpec
from contam_cli.io.formats import StrPath, detect_format, open_binary, open_raw
from contam_cli.io.lines import BIG_LINE, iter_lines, line_span, parse_line, seek_line_start
from contam_cli.io.model import Locator, ReadNotes, Record
from contam_cli.io.readers import iter_records
from contam_cli.io.remote import RemoteFile
from contam_cli.io.source import FileSource

__all__ = ["TextBatch", "iter_text_batches"]


@dataclass
class TextBatch:
    """About `chunk_bytes` of consecutive documents of one file, as UTF-8 text, for scanning.

    Records are not built for the documents (that is most of the cost of reading); `record(d)`
    rebuilds document `d`'s full Record on demand, for the few that become evidence.
    """

    texts: list[bytes]
    offsets: list[int]
    """Byte offset of each document's record in the (decompressed) file; -1 when unknown."""
    first_ordinal: int
    """Ordinal of the first document within its file; -1 in byte-range mode."""
    record: Callable[[int], Record]
    lines: list[int]
    """1-based line of each document (-1 when unknown); in byte-range mode counted from the
    range's first line (see `line_count` of :func:`iter_text_batches`)."""


def iter_text_batches(
    path: StrPath | RemoteFile,
    *,
    spec: TextSpec = TextSpec(),
    byte_range: tuple[int, int] | None = None,
    chunk_bytes: int = 1 << 20,
    line_count: list[int] | None = None,
    notes: ReadNotes | None = None,
) -> Iterator[TextBatch]:
    """The corpus documents of one file in batches, by the fastest route for its format.

    Yields exactly the documents of :func:`iter_records` (``role="corpus"``), with the same
    errors: JSONL (compressed or not) is parsed line by line straight to text; anything unusual
    on a line falls back to the full record reader for that line. `line_count`, when given,
    receives the number of lines read from a JSONL file (in byte-range mode: the lines starting
    inside the range, so that the counts of earlier ranges turn range lines into file lines).
    `notes` receives what was replaced while reading (lone surrogates), for the report.
    """
    if isinstance(path, RemoteFile):
        src = FileSource(path.url, "corpus", spec, path.name, remote=path, notes=notes)
    else:
        src = FileSource(str(path), "corpus", spec, Path(path).name, notes=notes)
    fmt = detect_format(path)
    if fmt == "jsonl":
        yield from _jsonl_text_batches(src, byte_range, chunk_bytes, line_count)
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
) -> Iterator[TextBatch]:
    ranged = byte_range is not None
    if byte_range is not None:
        fh: BinaryIO = open_raw(src.target)  # closed below
        start = seek_line_start(fh, byte_range[0], src.path)
        limit = byte_range[1]
    else:
        fh, start, limit = open_binary(src.target), 0, sys.maxsize
    fast = not src.spec.fields and src.spec.id_field is None
    loads = orjson.loads
    count = 0
    try:
        batch = _LineBatch(src, ranged, 0)
        line_no = 0
        for offset, raw in iter_lines(fh, start, src.path):
            line_no += 1
            if offset >= limit:
                line_no -= 1  # that line belongs to the next range
                break
            if not raw or raw.isspace():
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
                batch = _LineBatch(src, ranged, count)
        if batch.texts:
            yield batch.done()
        if line_count is not None:
            line_count.append(line_no)
    except OSError as exc:
        raise InputError(src.path, f"cannot read file: {exc.strerror or exc}") from None
    finally:
        fh.close()
    if count == 0 and not ranged:
        raise InputError(src.path, "no records")


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


class _LineBatch:
    """A TextBatch being filled from the lines of a JSONL file."""

    def __init__(self, src: FileSource, ranged: bool, first_ordinal: int) -> None:
        self.src, self.ranged, self.first = src, ranged, first_ordinal
        self.texts: list[bytes] = []
        self.offsets: list[int] = []
        self.lines: list[int] = []
        self.raws: list[bytes] = []
        self.built: dict[int, Record] = {}
        self.size = 0

    def add(
        self, text: bytes, offset: int, line: int, raw: bytes, rec: Record | None = None
    ) -> None:
        if rec is not None:
            self.built[len(self.texts)] = rec
            offset = rec.locator.span[0] if rec.locator.span else offset  # after a BOM
        self.texts.append(text)
        self.offsets.append(offset)
        self.lines.append(line)
        self.raws.append(raw)
        self.size += len(text)

    def full_record(self, offset: int, line_no: int, raw: bytes, d: int) -> Record:
        """Document `d` of this batch, read by the full record reader."""
        start, stop, content = line_span(offset, raw)
        line = None if self.ranged else line_no
        where = (self.src.path, line)
        ordinal = None if self.ranged else self.first + d
        locator = Locator(self.src.path, line, ordinal, (start, stop))
        position = f"@{start}" if self.ranged else str(line_no)
        return self.src.make(parse_line(content, where, self.src.notes), where, position, locator)

    def record(self, d: int) -> Record:
        if d not in self.built:
            self.built[d] = self.full_record(self.offsets[d], self.lines[d], self.raws[d], d)
        return self.built[d]

    def done(self) -> TextBatch:
        first = -1 if self.ranged else self.first
        return TextBatch(self.texts, self.offsets, first, self.record, self.lines)
