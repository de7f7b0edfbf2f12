"""File formats and compression: which reader a file needs, and its bytes decompressed."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import sys
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

from contam_cli.errors import InputError
from contam_cli.io.model import StrPath
from contam_cli.io.output import split_compression
from contam_cli.io.read_digests import tee
from contam_cli.io.remote import RemoteFile, is_url, open_object
from contam_cli.io.zstd import ZstdReader

__all__ = [
    "BLOCK_SIZE",
    "Format",
    "StrPath",
    "decompressing",
    "detect_format",
    "format_of",
    "open_binary",
    "open_raw",
    "read",
    "read_whole",
]

Format = Literal["jsonl", "json", "txt", "parquet", "arrow"]

BLOCK_SIZE = 1 << 22
"""Bytes read per block when splitting lines (4 MiB: amortizes calls, stays cache-friendly)."""

_FORMATS: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".txt": "txt",
    ".parquet": "parquet",
    ".arrow": "arrow",
}
# Metadata files that Hugging Face `Dataset.save_to_disk` writes beside its .arrow shards.


def format_of(name: str) -> Format | None:
    base, compression = split_compression(name)
    fmt = _FORMATS.get(Path(base).suffix.lower())
    if fmt in ("parquet", "arrow") and compression:
        return None
    return fmt


def detect_format(path: StrPath | RemoteFile) -> Format:
    """The format of ``path`` from its suffix, after stripping a compression suffix.

    >>> detect_format("train.ndjson.zst")
    'jsonl'
    """
    fmt = format_of(path.name if isinstance(path, RemoteFile) else Path(path).name)
    if fmt is None:
        raise InputError(
            path,
            "unknown file format (expected .jsonl, .ndjson, .json, .txt, .parquet or "
            ".arrow, the text formats optionally compressed with .gz, .bz2, .xz or .zst)",
        )
    return fmt


_ENDED = "Compressed file ended before the end-of-stream marker was reached"


class _Streams(io.RawIOBase):
    """Decompressed bytes of a .bz2 or .xz file of one or more streams, refusing anything after
    the last stream that is not a whole stream (zero padding between .xz streams excepted).

    NOTE: ``bz2.open`` and ``lzma.open`` stop silently at data after a stream that does not
    start a valid one (a damaged second stream of a pbzip2 or ``xz -T`` file), which would read
    the file short (found by fuzz/fuzz_readers.py). Output is bounded per call (max_length),
    as in the stdlib readers.
    """

    def __init__(self, raw: BinaryIO, compression: str) -> None:
        self._raw = raw
        self._make = bz2.BZ2Decompressor if compression == ".bz2" else lzma.LZMADecompressor
        self._padding = compression == ".xz"
        self._obj: Any = self._make()
        self._streams = 0
        self._started = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        out = self._next(len(view))
        view[: len(out)] = out
        return len(out)

    def _next(self, size: int) -> bytes:
        while True:
            if self._obj.eof:
                data = self._obj.unused_data or self._raw.read(BLOCK_SIZE)
                if self._padding:
                    while data and not data.strip(b"\0"):
                        data = self._raw.read(BLOCK_SIZE)
                    data = data.lstrip(b"\0")
                if not data:
                    return b""
                self._obj = self._make()
                self._streams += 1
            elif self._obj.needs_input:
                data = self._raw.read(BLOCK_SIZE)
                if not data:
                    if not self._started:
                        return b""  # NOTE: an empty file: no records, as the reader says
                    raise EOFError(_ENDED)
            else:
                data = b""
            self._started = True
            try:
                out = self._obj.decompress(data, size)
            except (OSError, lzma.LZMAError) as e:
                if self._streams:
                    raise OSError(f"data after compressed stream {self._streams} is not a "
                                  f"whole stream ({e})") from None  # fmt: skip
                raise
            if out:
                return cast(bytes, out)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def decompressing(raw: BinaryIO, compression: str) -> BinaryIO:
    """`raw` (compressed bytes) read decompressed by `compression` (".gz", ".bz2", ".xz",
    ".zst" or "" for none). Truncated or corrupt streams and data after the last stream are
    read errors, never a short read. Closing the result closes `raw`, except for ".gz"."""
    if compression == ".gz":
        return cast(BinaryIO, gzip.GzipFile(fileobj=raw, mode="rb"))
    if compression in (".bz2", ".xz"):
        return cast(BinaryIO, io.BufferedReader(_Streams(raw, compression), BLOCK_SIZE))
    if compression == ".zst":
        return cast(BinaryIO, io.BufferedReader(ZstdReader(raw), BLOCK_SIZE))
    return raw


def open_binary(path: StrPath | RemoteFile) -> BinaryIO:
    """Open ``path`` for binary reading, decompressing .gz/.bz2/.xz/.zst on the fly."""
    if isinstance(path, RemoteFile) or is_url(path):
        return _remote_binary(path)
    p = Path(path)
    compression = split_compression(p.name)[1]
    raw = tee(p, open(p, "rb"))  # noqa: SIM115 - closed by the reader
    try:
        if compression == ".gz":
            return cast(BinaryIO, _OwningGzip(fileobj=raw, mode="rb"))
        return decompressing(raw, compression)
    except BaseException:
        raw.close()
        raise


def open_raw(path: StrPath | RemoteFile) -> BinaryIO:
    """The raw (still compressed) bytes of a file or a remote object, seekable: byte ranges."""
    if isinstance(path, RemoteFile) or is_url(path):
        return cast(BinaryIO, open_object(cast("RemoteFile | str", path)))
    return tee(path, open(path, "rb"))  # noqa: SIM115 - closed by the reader


class _OwningGzip(gzip.GzipFile):
    """A GzipFile that closes the stream it reads (one of a path does; of a stream, not)."""

    def close(self) -> None:
        raw = cast("BinaryIO | None", self.fileobj)
        try:
            super().close()
        finally:
            if raw is not None:
                raw.close()


def _remote_binary(path: StrPath | RemoteFile) -> BinaryIO:
    raw = open_raw(path)
    name = path.name if isinstance(path, RemoteFile) else str(path).rsplit("/", 1)[-1]
    compression = split_compression(name)[1]
    try:
        if compression == ".gz":
            return cast(BinaryIO, _OwningGzip(fileobj=raw, mode="rb"))
        return decompressing(raw, compression)
    except BaseException:
        raw.close()
        raise


def decompress_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)
    zstd = sys.modules.get("zstandard")
    return (*errors, zstd.ZstdError) if zstd is not None else errors


def read_whole(path: StrPath) -> bytes:
    """The whole (decompressed) content of `path`; a file that cannot be opened, or is truncated
    or corrupt, is an InputError naming it."""
    try:
        with open_binary(path) as fh:
            return fh.read()
    except decompress_errors() as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(path, f"cannot read file: {why}") from None


def read(fh: BinaryIO, size: int, path: str, line: int | None) -> bytes:
    try:
        return fh.read(size)
    except decompress_errors() as exc:
        raise InputError(path, f"cannot read file: {exc}", line) from None
