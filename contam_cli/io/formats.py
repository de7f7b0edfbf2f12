"""File formats and compression: which reader a file needs, and its bytes decompressed."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import sys
import zlib
from pathlib import Path
from typing import BinaryIO, Literal, cast

from contam_cli.errors import InputError
from contam_cli.io.model import StrPath
from contam_cli.io.output import split_compression
from contam_cli.io.zstd import ZstdReader

__all__ = ["BLOCK_SIZE", "Format", "StrPath", "detect_format", "format_of", "open_binary", "read"]

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


def detect_format(path: StrPath) -> Format:
    """The format of ``path`` from its suffix, after stripping a compression suffix.

    >>> detect_format("train.ndjson.zst")
    'jsonl'
    """
    fmt = format_of(Path(path).name)
    if fmt is None:
        raise InputError(
            path,
            "unknown file format (expected .jsonl, .ndjson, .json, .txt, .parquet or "
            ".arrow, the text formats optionally compressed with .gz, .bz2, .xz or .zst)",
        )
    return fmt


def _open_zstd(path: Path) -> BinaryIO:
    raw = open(path, "rb")  # noqa: SIM115 - closed by the reader
    try:
        reader = ZstdReader(raw)
    except BaseException:
        raw.close()
        raise
    return cast(BinaryIO, io.BufferedReader(reader, BLOCK_SIZE))


def open_binary(path: StrPath) -> BinaryIO:
    """Open ``path`` for binary reading, decompressing .gz/.bz2/.xz/.zst on the fly."""
    p = Path(path)
    compression = split_compression(p.name)[1]
    if compression == ".gz":
        return cast(BinaryIO, gzip.open(p, "rb"))
    if compression == ".bz2":
        return cast(BinaryIO, bz2.open(p, "rb"))
    if compression == ".xz":
        return cast(BinaryIO, lzma.open(p, "rb"))
    if compression == ".zst":
        return _open_zstd(p)
    return open(p, "rb")


def decompress_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)
    zstd = sys.modules.get("zstandard")
    return (*errors, zstd.ZstdError) if zstd is not None else errors


def read(fh: BinaryIO, size: int, path: str, line: int | None) -> bytes:
    try:
        return fh.read(size)
    except decompress_errors() as exc:
        raise InputError(path, f"cannot read file: {exc}", line) from None
