"""Readers for every input format: a file becomes a stream of Records.

A file is opened (decompressing by suffix), split into records by its format (JSONL/NDJSON lines,
a JSON array, TXT lines or documents, Parquet rows), and each record becomes a
:class:`~contam_cli.io.model.Record` through :func:`~contam_cli.io.extract.extract_text` and
:func:`~contam_cli.io.extract.find_id`. Every problem with an input is an
:class:`~contam_cli.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path

from contam_cli.errors import InputError, UsageError
from contam_cli.io.columnar import arrow_records, parquet_records
from contam_cli.io.discover import iter_files
from contam_cli.io.extract import TextSpec
from contam_cli.io.formats import Format, StrPath, detect_format, open_binary, open_raw, read
from contam_cli.io.jsonarray import iter_array_elements
from contam_cli.io.lines import (
    BOM,
    decode_line,
    decode_whole,
    is_blank,
    iter_lines,
    line_span,
    parse_line,
    seek_line_start,
)
from contam_cli.io.model import Locator, ReadNotes, Record
from contam_cli.io.output import split_compression
from contam_cli.io.remote import RemoteFile
from contam_cli.io.source import FileSource, Role, ranged_id

__all__ = ["iter_corpus", "iter_eval", "iter_records", "read_all", "read_eval", "whole_read_id"]


def _line_records(
    src: FileSource, lines: Iterator[tuple[int, bytes]], fmt: Format, end: int | None
) -> Iterator[Record]:
    """Records of a JSONL or eval-TXT stream. ``end`` set = byte-range mode (no line numbers)."""
    fast = not src.spec.fields and src.spec.id_field is None and fmt == "jsonl"
    ranged = end is not None
    limit = sys.maxsize if end is None else end
    line_no = 0
    ordinal = 0
    path = src.path
    for offset, raw in lines:
        line_no += 1
        if offset >= limit:
            return
        if not raw or raw.isspace():
            continue
        if offset and not raw.endswith(b"\r"):  # NOTE: hot path, _line_span inlined
            start, stop, content = offset, offset + len(raw), raw
        else:
            if is_blank(offset, raw):  # NOTE: a BOM alone on the first line
                continue
            start, stop, content = line_span(offset, raw)
        line = None if ranged else line_no
        where = (path, line)
        locator = Locator(path, line, None if ranged else ordinal, (start, stop))
        ordinal += 1
        if fmt == "txt":
            obj: object = decode_line(content, where)
        else:
            obj = parse_line(content, where, src.notes)
            if fast and type(obj) is dict:  # NOTE: hot path: {"id": str, "text": str}, no spec.
                text = obj.get("text")
                found = obj.get("id")
                if type(text) is str and type(found) is str:
                    if ranged and found[:1] == "@":
                        found = ranged_id(found, f"@{start}")
                    yield Record(found, text, locator)
                    continue
        position = f"@{start}" if ranged else str(line_no)
        yield src.make(obj, where, position, locator, None if fmt == "txt" else content)


def whole_read_id(doc_id: str, offset: int, line: int) -> str:
    """The id a whole read of a JSONL file gives the record a byte-range read gave `doc_id`
    (the record's line starting at byte `offset`, file line `line`): a record without an id is
    ``"@<offset>"`` in a range and its line number in a whole read; an id it has stays (one of
    the form ``"@...@<offset>"`` loses the ``"@"`` :func:`~contam_cli.io.source.ranged_id` gave
    it in the range, so a record whose own id is ``"@<offset>"`` keeps it).

    >>> whole_read_id("@120", 120, 7), whole_read_id("q-1", 120, 7), whole_read_id("@@120", 120, 7)
    ('7', 'q-1', '@120')
    """
    if doc_id[:1] != "@" or doc_id.lstrip("@") != str(offset):
        return doc_id
    return str(line) if doc_id == f"@{offset}" else doc_id[1:]


_UNPARSED = object()


def _line_record(
    src: FileSource, offset: int, raw: bytes, line_no: int, ordinal: int, obj: object = _UNPARSED
) -> Record:
    """Line `line_no` (not blank) of a JSONL file as :func:`_line_records` reads it (`obj`: the
    line already parsed, by the same parser)."""
    start, stop, content = line_span(offset, raw)
    where = (src.path, line_no)
    if obj is _UNPARSED:
        obj = parse_line(content, where, src.notes)
    locator = Locator(src.path, line_no, ordinal, (start, stop))
    return src.make(obj, where, str(line_no), locator, content)


def _ranged_records(src: FileSource, fmt: Format, byte_range: tuple[int, int]) -> Iterator[Record]:
    start, end = byte_range
    if not 0 <= start <= end:
        raise ValueError(f"invalid byte range {byte_range}")
    with open_raw(src.target) as fh:
        first = seek_line_start(fh, start, src.path)
        yield from _line_records(src, iter_lines(fh, first, src.path), fmt, end)


def read_all(path: str | RemoteFile) -> bytes:
    with open_binary(path) as fh:
        return read(fh, -1, str(path), None)


def _txt_document(src: FileSource) -> Iterator[Record]:
    data = read_all(src.target)
    start = 3 if data.startswith(BOM) else 0
    text = decode_whole(data, src.path)[1 if start else 0 :]
    if text.strip():
        yield Record(src.name, text, Locator(src.path, 1, 0, (start, len(data))))


def _json_records(src: FileSource) -> Iterator[Record]:
    data = read_all(src.target)
    elements = iter_array_elements(decode_whole(data, src.path), src.path, src.notes)
    for index, (obj, line, span) in enumerate(elements):
        where = (src.path, line)
        locator = Locator(src.path, line, index, span)
        yield src.make(obj, where, str(index), locator, data[span[0] : span[1]])


def _file_records(src: FileSource, byte_range: tuple[int, int] | None) -> Iterator[Record]:
    fmt = detect_format(src.path)
    compressed = bool(split_compression(Path(src.path).name)[1])
    if byte_range is not None:
        if compressed or not (fmt == "jsonl" or (fmt == "txt" and src.role == "eval")):
            raise ValueError(f"{src.path}: byte_range needs an uncompressed .jsonl or eval .txt")
        yield from _ranged_records(src, fmt, byte_range)
    elif fmt == "parquet":
        yield from parquet_records(src)
    elif fmt == "arrow":
        yield from arrow_records(src)
    elif fmt == "json":
        yield from _json_records(src)
    elif fmt == "txt" and src.role == "corpus":
        yield from _txt_document(src)
    else:
        with open_binary(src.target) as fh:
            yield from _line_records(src, iter_lines(fh, 0, src.path), fmt, None)


def _read_file(src: FileSource, byte_range: tuple[int, int] | None = None) -> Iterator[Record]:
    """Records of one file; an unreadable or empty file is an InputError."""
    count = 0
    try:
        for record in _file_records(src, byte_range):
            count += 1
            yield record
    except OSError as exc:
        raise InputError(src.path, f"cannot read file: {exc.strerror or exc}") from None
    if count == 0 and byte_range is None:
        raise InputError(src.path, "no records")


def iter_records(
    path: StrPath | RemoteFile,
    *,
    role: Role,
    spec: TextSpec = TextSpec(),
    byte_range: tuple[int, int] | None = None,
    notes: ReadNotes | None = None,
) -> Iterator[Record]:
    """Stream the records of one file (or of every input file below a directory); `notes`
    receives what was replaced while reading (lone surrogates).

    ``byte_range=(start, end)`` (uncompressed .jsonl, or .txt with ``role="eval"``) yields exactly
    the records whose line starts at a byte offset in ``[start, end)``, so adjacent ranges split a
    file without loss or overlap. In that mode ``Locator.line`` and ``Locator.record`` are None
    (counting earlier lines would mean reading them), spans stay absolute file offsets, a record
    without an id gets ``"@<offset>"`` instead of its line number (:func:`whole_read_id` gives it
    back once the line is known; a record whose own id is ``"@<offset>"`` of its line reads as
    ``"@@<offset>"`` there, which whole_read_id gives back as it was), and an empty range is no
    error.
    """
    if isinstance(path, RemoteFile):
        src = FileSource(path.url, role, spec, path.name, remote=path, notes=notes)
        yield from _read_file(src, byte_range)
        return
    if Path(path).is_dir():
        if byte_range is not None:
            raise ValueError(f"{path}: byte_range needs a file, not a directory")
        for file in iter_files(path):
            name = file.relative_to(path).as_posix()
            yield from _read_file(FileSource(str(file), role, spec, name, notes=notes))
        return
    yield from _read_file(
        FileSource(str(path), role, spec, Path(path).name, notes=notes), byte_range
    )


def _sources(
    paths: Sequence[StrPath],
    role: Role,
    spec: TextSpec,
    include: Sequence[str],
    exclude: Sequence[str],
) -> list[FileSource]:
    sources = []
    for path in paths:
        is_dir = Path(path).is_dir()
        for file in iter_files(path, include, exclude):
            name = file.relative_to(path).as_posix() if is_dir else file.name
            sources.append(FileSource(str(file), role, spec, name))
    return sources


def read_eval(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> list[Record]:
    """Every eval example from ``paths`` (files or directories), refusing duplicate ids.

    When more than one file is read, a record without an id gets ``"<file>:<line>"`` rather than
    the bare line number, so id-less files can be combined.
    """
    return list(iter_eval(paths, spec, include, exclude))


def iter_eval(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    notes: ReadNotes | None = None,
) -> Iterator[Record]:
    """:func:`read_eval`, one record at a time (a duplicate id fails when it is reached).

    A file named twice (the same file through two paths) is refused. `notes` receives what was
    replaced while reading (lone surrogate escapes).
    """
    sources = eval_sources(paths, spec, include, exclude, notes)
    # NOTE: where each id was first seen, as columns (file, line, record; -1: none), not one
    # Locator per record: a million ids would otherwise hold ~300 MB until the read ends.
    seen: dict[str, int] = {}
    where = array("q")
    for f, src in enumerate(sources):
        for record in _read_file(src):
            loc = record.locator
            k = seen.setdefault(record.id, len(seen))
            if k * 3 < len(where):
                first = _located(sources, where, k)
                raise InputError(
                    loc.path, f"duplicate id {record.id!r} (first seen at {first})", loc.line
                )
            line, ordinal = loc.line, loc.record
            where.extend((f, -1 if line is None else line, -1 if ordinal is None else ordinal))
            yield record


def eval_sources(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    notes: ReadNotes | None = None,
) -> list[FileSource]:
    """The eval files of `paths` as the eval reader reads them: a file named twice refused, and
    ids qualified by the file's name when there are several files."""
    sources = _sources(paths, "eval", spec, include, exclude)
    _refuse_repeats(sources)
    qualify = len(sources) > 1
    return [FileSource(s.path, "eval", spec, s.name, qualify, notes) for s in sources]


def _located(sources: list[FileSource], where: array[int], k: int) -> Locator:
    f, line, ordinal = where[3 * k : 3 * k + 3]
    return Locator(sources[f].path, None if line < 0 else line, None if ordinal < 0 else ordinal)


def _refuse_repeats(sources: list[FileSource]) -> None:
    seen: set[str] = set()
    for src in sources:
        real = os.path.realpath(src.path)
        if real in seen:
            raise UsageError(f"{src.path}: the same eval file is given twice")
        seen.add(real)


def iter_corpus(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[Record]:
    """Stream every corpus document from ``paths`` (files or directories), in a stable order."""
    for src in _sources(paths, "corpus", spec, include, exclude):
        yield from _read_file(src)
