"""Records from bytes in memory (pasted text, uploads): the file readers' code, no file.

The bytes are read by the format and compression their name says (``eval.jsonl.gz``), through
the same line splitting, JSON scanning and text extraction as :mod:`contam_cli.io.readers`, so
the records (ids, texts, lines, byte spans) and every error (a one-line
:class:`~contam_cli.errors.InputError` naming the name and line) are the ones a file holding
those bytes gives. Nothing is written anywhere: compressed bytes are decompressed in memory,
with the same truncation checks as files.

>>> [r.id for r in records_from_bytes(b'{"id": "a", "text": "x"}\\n', "eval.jsonl", role="eval")]
['a']
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

import orjson

from contam_cli.errors import InputError, UsageError
from contam_cli.io.extract import TextSpec
from contam_cli.io.formats import Format, decompressing, detect_format, read
from contam_cli.io.jsonarray import iter_array_elements
from contam_cli.io.lines import BOM, decode_whole, iter_lines
from contam_cli.io.model import Locator, ReadNotes, Record
from contam_cli.io.output import split_compression
from contam_cli.io.readers import _line_records
from contam_cli.io.roles import check_roles_of
from contam_cli.io.source import FileSource, Role

__all__ = ["check_roles_in_memory", "decompressed", "open_bytes", "records_from_bytes"]

_TEXT_FORMATS = (
    "expected .jsonl, .ndjson, .json or .txt, optionally compressed .gz, .bz2, .xz, .zst"
)


def open_bytes(data: bytes, name: str) -> BinaryIO:
    """`data` as a binary stream, decompressed on the fly by `name`'s compression suffix, by the
    decompressors the file readers use (:func:`contam_cli.io.formats.decompressing`)."""
    return decompressing(io.BytesIO(data), split_compression(name)[1])


def decompressed(data: bytes, name: str) -> bytes:
    """`data` decompressed by `name`'s suffix (a truncated stream is an InputError)."""
    if not split_compression(name)[1]:
        return data
    with open_bytes(data, name) as fh:
        return read(fh, -1, name, None)


def _format(name: str) -> Format:
    fmt = detect_format(name)
    if fmt in ("parquet", "arrow"):
        raise InputError(name, f"{fmt} is not read from memory ({_TEXT_FORMATS})")
    return fmt


def _records(src: FileSource, data: bytes, fmt: Format) -> Iterator[Record]:
    """The records of one input, as the file readers make them (see ``readers._file_records``)."""
    name = src.path
    if fmt == "jsonl" or (fmt == "txt" and src.role == "eval"):
        with open_bytes(data, name) as fh:
            yield from _line_records(src, iter_lines(fh, 0, name), fmt, None)
        return
    plain = decompressed(data, name)
    if fmt == "json":
        elements = iter_array_elements(decode_whole(plain, name), name, src.notes)
        for index, (obj, line, span) in enumerate(elements):
            locator = Locator(name, line, index, span)
            yield src.make(obj, (name, line), str(index), locator, plain[span[0] : span[1]])
        return
    # NOTE: a corpus .txt is one document, as readers._txt_document reads a file.
    start = 3 if plain.startswith(BOM) else 0
    text = decode_whole(plain, name)[1 if start else 0 :]
    if text.strip():
        yield Record(src.name, text, Locator(name, 1, 0, (start, len(plain))))


def records_from_bytes(
    data: bytes,
    name: str,
    *,
    role: Role,
    spec: TextSpec = TextSpec(),
    notes: ReadNotes | None = None,
) -> list[Record]:
    """The records in `data`, read as a file called `name` would be (format and compression
    from its suffix); `name` stands for the path in every locator and message.

    Eval records refuse duplicate ids as :func:`~contam_cli.io.readers.read_eval` does; no
    records at all is an error, as for a file. `notes` receives what was replaced (lone
    surrogate escapes).
    """
    if not isinstance(data, (bytes, bytearray)):
        raise UsageError(f"{name}: expected bytes, got {type(data).__name__}")
    src = FileSource(name, role, spec, name, notes=notes)
    try:
        records = list(_records(src, bytes(data), _format(name)))
    except OSError as exc:  # NOTE: as readers._read_file: a decompressor's own error
        raise InputError(name, f"cannot read file: {exc.strerror or exc}") from None
    if not records:
        raise InputError(name, "no records")
    if role == "eval":
        _refuse_duplicates(records)
    return records


def _refuse_duplicates(records: list[Record]) -> None:
    """The message of ``readers.iter_eval`` for a repeated id."""
    seen: dict[str, Locator] = {}
    for record in records:
        first = seen.setdefault(record.id, record.locator)
        if first is not record.locator:
            loc = record.locator
            raise InputError(
                loc.path, f"duplicate id {record.id!r} (first seen at {first})", loc.line
            )


def _objects(data: bytes, name: str) -> Iterator[Any]:
    """The parsed records of a JSONL or JSON input (others hold no chat turns)."""
    fmt = _format(name)
    if fmt == "jsonl":
        with open_bytes(data, name) as fh:
            for _, line in iter_lines(fh, 0, name):
                if line.strip():
                    try:
                        yield orjson.loads(line)
                    except orjson.JSONDecodeError:
                        continue  # NOTE: records_from_bytes reports it, with its line
    elif fmt == "json":
        text = decode_whole(decompressed(data, name), name)
        for obj, _, _ in iter_array_elements(text, name):
            yield obj


def check_roles_in_memory(
    inputs: Iterable[tuple[bytes, str]], roles: tuple[str, ...] | None, what: str = "inputs"
) -> None:
    """:func:`contam_cli.io.roles.check_roles` for ``(data, name)`` inputs in memory: a
    UsageError, with the same message, unless every role is the role of some chat turn and
    each input with chat turns has one of them."""
    check_roles_of(((name, _objects(data, name)) for data, name in inputs), roles, what)
