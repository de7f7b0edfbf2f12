"""Byte-exact rewriting: line files and JSON arrays copied with records left out or replaced."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import IO, BinaryIO

from contam_cli.io import open_binary
from contam_cli.io.formats import StrPath as PathLike
from contam_cli.io.formats import decompress_errors, open_raw
from contam_cli.io.remote import READ_BLOCK, RemoteFile

_BLOCK = 1 << 20


class _Cursor:
    """Reads a (decompressed) stream forward, by absolute offsets."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.pos = 0
        self._ahead = b""  # NOTE: bytes peeked at, not yet read: they start at pos

    def read_to(self, end: int) -> bytes:
        parts = [self._ahead[: max(end - self.pos, 0)]]
        self._ahead = self._ahead[len(parts[0]) :]
        self.pos += len(parts[0])
        while self.pos < end:
            block = self.fh.read(end - self.pos)
            if not block:
                break
            parts.append(block)
            self.pos += len(block)
        return b"".join(parts)

    def peek(self, n: int) -> bytes:
        """The next `n` bytes (fewer at the end), left to be read. A damaged stream gives what
        came before the damage: the reading that follows names it."""
        try:
            while len(self._ahead) < n:
                block = self.fh.read(n - len(self._ahead))
                if not block:
                    break
                self._ahead += block
        except decompress_errors():
            pass
        return self._ahead[:n]

    def rest(self) -> bytes:
        data, self._ahead = self._ahead + self.fh.read(), b""
        self.pos += len(data)
        return data


class _LineSink:
    """Writes a line file back: gaps (terminators, blank lines) verbatim, records or replacements;
    a dropped record takes its line terminator with it."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.drop_terminator = False
        self.records = 0

    def put(self, gap: bytes, data: bytes | None) -> None:
        if self.drop_terminator:
            gap = gap[2:] if gap.startswith(b"\r\n") else gap[1:] if gap[:1] == b"\n" else gap
        self.out.write(gap)
        if data is not None:
            self.out.write(data)
        self.drop_terminator = data is None


def _rebuild_array(
    data: bytes, spans: list[tuple[int, int]], units: Sequence[Sequence[bytes] | None]
) -> bytes:
    """`data` with each JSON array element i replaced by units[i] (None: the element as it is).

    Elements keep their original separators (``,\\n  `` or ``, ``); text before the first and
    after the last element (the array's opening, an enclosing object) is kept as it is. A
    document that is one record (a top-level object) becomes an array when it is replaced by
    none or several (``[]``, ``[{...}, {...}]``), which a bare sequence of objects is not.
    """
    if not spans:
        return data
    if len(spans) == 1 and units[0] is not None and len(units[0]) != 1:
        head = data[: spans[0][0]]
        if not head.rstrip().endswith(b"["):  # NOTE: the record is the whole document
            return head + b"[" + b", ".join(units[0]) + b"]" + data[spans[0][1] :]
    seps = [data[spans[i][1] : spans[i + 1][0]] for i in range(len(spans) - 1)]
    default_sep = seps[0] if seps else b", "
    parts = [data[: spans[0][0]]]
    previous: int | None = None
    for i, ((a, b), unit) in enumerate(zip(spans, units)):
        for element in [data[a:b]] if unit is None else unit:
            if previous is not None:
                parts.append(seps[previous] if previous < len(seps) else default_sep)
            parts.append(element)
            previous = i
    parts.append(data[spans[-1][1] :])
    return b"".join(parts)


def _read_all(path: PathLike | RemoteFile) -> bytes:
    with open_binary(path) as fh:
        return fh.read()


def _copy_prefix(src: Path | RemoteFile, size: int, out: IO[bytes]) -> None:
    with open_binary(src) as fh:
        while size > 0:
            block = fh.read(min(_BLOCK, size))
            if not block:
                return
            out.write(block)
            size -= len(block)


def copy_file(src: Path | RemoteFile, dest: Path) -> bool:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(src, RemoteFile):
        with open_raw(src) as fh, open(dest, "wb") as out:
            shutil.copyfileobj(fh, out, READ_BLOCK)
        return True
    shutil.copyfile(src, dest)
    return True
