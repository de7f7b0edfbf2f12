"""Corpus sources and their shards: the independent work units of a corpus pass.

A source is a named corpus: files on disk, or an iterable of texts/records in memory (streamed
once, in this process). Files are cut into shards: whole files grouped up to a target size, and
byte ranges of large uncompressed JSONL files split at line boundaries. The plan depends on the
data alone, never on the number of workers, so every executor reads the same records with the
same locators.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.engine.match import ORDER_FILE_SHIFT, DocBatch, RangePlaces
from contam_cli.errors import InputError
from contam_cli.io.batches import iter_text_batches
from contam_cli.io.extract import TextSpec
from contam_cli.io.model import ReadNotes, Record
from contam_cli.io.remote import RemoteFile

__all__ = [
    "MIN_SHARD_BYTES",
    "SHARD_BYTES",
    "Shard",
    "Source",
    "plan_shards",
    "shard_batches",
    "whole_read_error",
]

#: Shards are about this size: 1/32 of a source, within these bounds, so that work spreads
#: evenly over processes without many tiny shards.
SHARD_BYTES = 64 << 20
MIN_SHARD_BYTES = 8 << 20


@dataclass(frozen=True)
class Source:
    """A named corpus: files on disk (or remote objects), or any iterable of texts/records
    (streamed once)."""

    name: str
    paths: tuple[Path | RemoteFile, ...] = ()
    stream: Iterable[str | Record | dict[str, Any]] | None = None

    def on_disk(self) -> Source:
        """The files of this source alone (what worker processes get)."""
        return Source(self.name, self.paths)


@dataclass(frozen=True)
class Shard:
    """Files, or one byte range of a file, of one source."""

    source: int
    items: tuple[tuple[int, str | RemoteFile, tuple[int, int] | None], ...]
    """(file ordinal within the source, path or remote object, byte range or None for the whole
    file)."""
    size: int
    """Bytes on disk it covers (for progress)."""

    @property
    def key(self) -> str:
        """A stable name for this shard (checkpoints, error messages)."""
        first = self.items[0]
        rng = "" if first[2] is None else f"@{first[2][0]}-{first[2][1]}"
        more = f"+{len(self.items) - 1}" if len(self.items) > 1 else ""
        return f"s{self.source}:{first[1]}{rng}{more}"


def plan_shards(s: int, src: Source) -> list[Shard]:
    """The shards of source number `s`."""
    sizes = [f.stat().st_size for f in src.paths]
    target = min(SHARD_BYTES, max(MIN_SHARD_BYTES, sum(sizes) // 32))
    items: list[tuple[int, str | RemoteFile, tuple[int, int] | None, int]] = []
    for ordinal, (f, size) in enumerate(zip(src.paths, sizes)):
        # NOTE: a remote object travels as itself: workers check it against its listing.
        ref = f if isinstance(f, RemoteFile) else str(f)
        if size > target and f.suffix in (".jsonl", ".ndjson"):
            pieces = -(-size // target)
            step = -(-size // pieces)
            items.extend(
                (ordinal, ref, (a, min(a + step, size)), min(step, size - a))
                for a in range(0, size, step)
            )
        else:
            items.append((ordinal, ref, None, size))
    shards: list[Shard] = []
    group: list[tuple[int, str | RemoteFile, tuple[int, int] | None]] = []
    size_sum = 0
    for ordinal, path, rng, size in items:
        group.append((ordinal, path, rng))
        size_sum += size
        if size_sum >= target or rng is not None:
            shards.append(Shard(s, tuple(group), size_sum))
            group, size_sum = [], 0
    if group:
        shards.append(Shard(s, tuple(group), size_sum))
    return shards


def shard_batches(
    sh: Shard,
    spec: TextSpec,
    chunk_bytes: int,
    range_reads: dict[tuple[str, int], tuple[int, int]],
    notes: ReadNotes | None = None,
    accel: bool | None = None,
) -> Iterator[DocBatch]:
    """The documents of shard `sh` in batches; the lines and records each byte range read go
    into `range_reads` (keyed by (path, range start)), to turn range-relative lines and record
    ordinals into file ones; `notes` receives what the readers replaced (lone surrogates);
    `accel`: read JSONL with the compiled kernels (None: when installed)."""
    for ordinal, path, rng in sh.items:
        batches = _item_batches(
            sh.source, ordinal, path, rng, spec, chunk_bytes, range_reads, notes, accel
        )
        yield from _with_file_lines(batches, path, rng, spec, chunk_bytes)


def _with_file_lines(
    batches: Iterator[DocBatch],
    path: Any,
    rng: tuple[int, int] | None,
    spec: TextSpec,
    chunk_bytes: int,
) -> Iterator[DocBatch]:
    """`batches`, with a read error in a byte range given its file line."""
    try:
        yield from batches
    except InputError as e:
        if rng is None or e.line is not None:
            raise
        # NOTE: a byte range cannot know its file's line numbers: the whole file is read up to
        # the error (only on this error path) for the message a whole read gives.
        raise whole_read_error(path, spec, chunk_bytes) or e from None


def whole_read_error(path: Any, spec: TextSpec, chunk_bytes: int) -> InputError | None:
    """The first InputError a whole read of `path` meets (None: it meets none): the message,
    with its file line, that a byte range of `path` cannot give (read only on an error path)."""
    try:
        for _ in iter_text_batches(path, spec=spec, chunk_bytes=chunk_bytes):
            pass
    except InputError as e:
        return e
    return None


def _item_batches(
    source: int,
    ordinal: int,
    path: Any,
    rng: tuple[int, int] | None,
    spec: TextSpec,
    chunk_bytes: int,
    range_reads: dict[tuple[str, int], tuple[int, int]],
    notes: ReadNotes | None,
    accel: bool | None,
) -> Iterator[DocBatch]:
    """The batches of one item of a shard (a file, or a byte range of one)."""
    base = ordinal << ORDER_FILE_SHIFT
    lines_read: list[int] = []
    records = 0  # documents of this item so far (every record is one document)
    for tb in iter_text_batches(
        path,
        spec=spec,
        byte_range=rng,
        chunk_bytes=chunk_bytes,
        line_count=lines_read,
        notes=notes,
        accel=accel,
    ):
        order = np.array(tb.offsets, dtype=np.int64)
        n = len(order)
        if tb.first_ordinal >= 0 and (order < 0).any():  # no byte offsets: record ordinals
            order = np.arange(n, dtype=np.int64) + tb.first_ordinal
        ranged = None
        if rng is not None:
            ranged = RangePlaces((str(path), rng[0]), tb.lines, range(records, records + n))
        records += n
        yield DocBatch(source, tb.texts, order + base, tb.record, ranged)
    if rng is not None:
        range_reads[(str(path), rng[0])] = (lines_read[0] if lines_read else 0, records)
