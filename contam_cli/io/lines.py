"""Line files: splitting a stream into lines, parsing and decoding one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import BinaryIO

import orjson

from contam_cli.errors import InputError
from contam_cli.io.extract import Where, fail, without_surrogates
from contam_cli.io.formats import BLOCK_SIZE, read
from contam_cli.io.model import ReadNotes

__all__ = [
    "BIG_LINE",
    "BOM",
    "decode_line",
    "decode_whole",
    "iter_lines",
    "is_blank",
    "line_span",
    "parse_line",
    "seek_line_start",
]

BOM = b"\xef\xbb\xbf"


def iter_lines(fh: BinaryIO, offset: int, path: str) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line from ``offset`` on, without its ``\\n`` (``\\r`` is kept).

    NOTE: pieces without a newline are collected and joined once, so a huge line costs O(n).
    """
    pending: list[bytes] = []
    count = 0
    while block := read(fh, BLOCK_SIZE, path, count + 1):
        cut = block.find(b"\n")
        if cut < 0:
            pending.append(block)
            continue
        if len(pending) > 1:
            # NOTE: a long line is joined from its pieces alone (one copy), not with the block.
            pending.append(block[:cut])
            head = b"".join(pending)
            pending = []
            yield offset, head
            offset += len(head) + 1
            count += 1
            block = block[cut + 1 :]
        lines = b"".join((*pending, block)).split(b"\n") if pending else block.split(b"\n")
        pending = [lines.pop()]
        for line in lines:
            yield offset, line
            offset += len(line) + 1
        count += len(lines)
    tail = b"".join(pending)
    if tail:
        yield offset, tail


def is_blank(offset: int, line: bytes) -> bool:
    """Whether a line holds nothing but whitespace; a BOM at file start is nothing too, so a
    file opening with a BOM alone on its first line reads like one without the BOM."""
    if offset == 0 and line.startswith(BOM):
        line = line[3:]
    return not line or line.isspace()


def line_span(offset: int, line: bytes) -> tuple[int, int, bytes]:
    """Strip ``\\r`` (and a BOM at file start) from a line: ``(start, end, content)``."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if offset == 0 and line.startswith(BOM):
        return 3, len(line), line[3:]
    return offset, offset + len(line), line


#: Lines longer than this are parsed by the standard library: orjson's parser holds about twelve
#: times a document's size while it reads it (a 48 MB line peaks at 580 MB), the stdlib's one.
BIG_LINE = 8 << 20


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _number(value: float) -> float:
    if value in (float("inf"), float("-inf")):
        raise ValueError("number is infinity when parsed as double")
    return value


def _integer(digits: str) -> int | float:
    """An integer as orjson reads it: within 64 bits exactly, else as a double."""
    value = int(digits)
    if -(1 << 63) <= value < (1 << 64):
        return value
    try:
        return _number(float(value))
    except OverflowError:
        raise ValueError("number is infinity when parsed as double") from None


def _loads_big(content: bytes, where: Where, notes: ReadNotes | None) -> object:
    """:func:`parse_line` of a big line, with orjson's rules: strict UTF-8, no NaN or
    Infinity, integers beyond 64 bits as doubles, no infinite doubles; lone surrogates replaced
    and noted, as there."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as bad:
        raise fail(where, f"invalid UTF-8 (byte {bad.start + 1} of the line)") from None
    try:
        obj = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_int=_integer,
            parse_float=lambda d: _number(float(d)),
        )
    except json.JSONDecodeError as exc:
        raise fail(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:
        raise fail(where, f"invalid JSON: {exc}") from None
    obj, replaced = without_surrogates(obj)
    if replaced and notes is not None:
        notes.replaced(where[0])
    return obj


def parse_line(content: bytes, where: Where, notes: ReadNotes | None = None) -> object:
    """One JSON line parsed; lone surrogate escapes read as U+FFFD (and noted)."""
    if len(content) > BIG_LINE:
        return _loads_big(content, where, notes)
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise fail(where, f"invalid UTF-8 (byte {bad.start + 1} of the line)") from None
        if "surrogate" in exc.msg:
            # NOTE: "\ud800" is valid JSON but not text; orjson refuses it, the stdlib reads it.
            # Read like the .json reader does, then replaced so that every output can carry it.
            try:
                obj, _ = without_surrogates(json.loads(text))
            except ValueError:
                pass
            else:
                if notes is not None:
                    notes.replaced(where[0])
                return obj
        raise fail(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None


def decode_line(content: bytes, where: Where) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as bad:
        raise fail(where, f"invalid UTF-8 (byte {bad.start + 1} of the line)") from None


def seek_line_start(fh: BinaryIO, start: int, path: str) -> int:
    """Position ``fh`` at the first line starting at or after ``start``; return that offset."""
    if start == 0:
        return 0
    pos = start - 1
    fh.seek(pos)
    while chunk := read(fh, 1 << 16, path, None):
        newline = chunk.find(b"\n")
        if newline >= 0:
            fh.seek(pos + newline + 1)
            return pos + newline + 1
        pos += len(chunk)
    return pos


def decode_whole(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data.count(b"\n", 0, bad.start) + 1
        raise InputError(path, "invalid UTF-8", line) from None
