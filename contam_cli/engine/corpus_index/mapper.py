"""The map side of a corpus index build: one shard's n-grams, spilled to its own run file.

A map task reads the documents of one shard (files, or one byte range of a JSONL file), numbers
them from 0 within the shard and writes its n-gram records into ``map/t{task}/records.bin`` of
the build's staging directory, in segments: each segment (at most ``spill_bytes`` of records
held in memory) is grouped by bucket (the hash's top bits), so a reduce task reads one contiguous
slice per segment for a range of buckets; ``cuts.i64`` holds every segment's bucket offsets. It
returns small metadata: counts, records per bucket, and per document (with positions) its file
ordinal, byte offset, record and line, which the driver turns into the serial build's numbers.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from contam_cli.engine.corpus_pass import tokenizer
from contam_cli.engine.shards import Shard, whole_read_error
from contam_cli.engine.windows import LONG_DOC_BYTES, window_ngrams
from contam_cli.errors import ContamError, InputError, OutputError
from contam_cli.io.batches import iter_text_batches
from contam_cli.io.extract import TextSpec
from contam_cli.io.model import ReadNotes
from contam_cli.text import NormConfig, doc_lengths

__all__ = [
    "DOC_COLUMNS",
    "MARKER",
    "REC",
    "ItemInfo",
    "MapContext",
    "MapResult",
    "MapTask",
    "check_staging",
    "map_shard",
    "task_dir",
]

REC = np.dtype([("gram", "<u8"), ("doc", "<u8"), ("pos", "<u8")])
"""One n-gram occurrence with positions (doc: within the shard in a run file)."""

MARKER = ".contam-staging"
"""The file a build's staging directory holds, with a token that workers check."""


@dataclass(frozen=True)
class MapContext:
    """What every map task of one build needs (sent to each worker once)."""

    n: int
    norm: NormConfig
    positions: bool
    spec: TextSpec
    chunk_bytes: int
    root: str
    """The staging directory (on storage every worker shares)."""
    token: str
    """The content of its MARKER file: proof that a worker sees the driver's directory."""
    spill_bytes: int = 64 << 20
    """Records held in memory before a segment is written."""
    accel: bool | None = None
    """Whether the tokenizers use the compiled kernels (None: when installed)."""


@dataclass(frozen=True)
class MapTask:
    """One shard, the task number of its run file and its source's bucket bits."""

    number: int
    shard: Shard
    bits: int

    @property
    def key(self) -> str:
        """The shard's name (in messages)."""
        return self.shard.key


@dataclass(frozen=True)
class ItemInfo:
    """What one item (a file, or a byte range of one) of a shard read."""

    path: str
    range_start: int | None
    """The byte range's start; None for a whole file."""
    documents: int
    lines: int
    """Lines read (JSONL; of a range: the lines starting inside it), else 0."""
    unread_turn: tuple[int, str, str] | None = None
    """Its first chat turn without a text key but another string (ReadNotes.unread_turns)."""


@dataclass(frozen=True)
class MapResult:
    """A map task's metadata (its records are in its run file)."""

    documents: int
    ngrams: int
    bucket_counts: np.ndarray
    """Records per bucket in the run file (distinct per segment without positions)."""
    items: tuple[ItemInfo, ...]
    docs: dict[str, np.ndarray] | None
    """With positions: file_ord, offset, record, line of each document, in order (record and
    line counted from the range's start for a byte range)."""


def task_dir(root: str | Path, number: int) -> Path:
    """Where map task `number` writes."""
    return Path(root) / "map" / f"t{number:05d}"


def check_staging(root: str | Path, token: str) -> None:
    """Raise OutputError unless `root` is the driver's staging directory (seen from here)."""
    marker = Path(root) / MARKER
    try:
        seen = marker.read_text(encoding="utf-8")
    except OSError:
        seen = None
    if seen != token:
        raise OutputError(
            f"{root}: the index's staging directory is not visible from this worker (host "
            f"{socket.gethostname()}); on a Ray cluster, -o must be on storage every node "
            "shares (NFS, a mounted bucket) at the same path; nothing was written"
        )


def map_shard(ctx: MapContext, task: MapTask) -> MapResult:
    """Tokenize every document of the shard and spill its n-gram records (the map's work)."""
    try:
        return _map(ctx, task)
    except (ContamError, OSError):
        raise
    except Exception as e:  # noqa: BLE001 - named by its shard, exit 2 (as a scan's task)
        raise ContamError(f"shard {task.key} failed: {type(e).__name__}: {e}") from e


def _map(ctx: MapContext, task: MapTask) -> MapResult:
    check_staging(ctx.root, ctx.token)
    where = task_dir(ctx.root, task.number)
    try:
        where.mkdir(exist_ok=True)  # NOTE: exist_ok: Ray may run a task again
        fh = open(where / "records.bin", "wb")  # NOTE: closed below
    except OSError as e:
        raise OutputError(
            f"{where}: a worker on {socket.gethostname()} cannot write the index's staging "
            f"directory ({e.strerror or e}); on a Ray cluster it must be on shared storage"
        ) from None
    with fh:
        spill = _Spill(fh, task.bits, ctx.positions, ctx.spill_bytes)
        docs = _Docs() if ctx.positions else None
        items = []
        n_docs = n_grams = 0
        for ordinal, path, rng in task.shard.items:
            try:
                info, grams = _read_item(ctx, ordinal, path, rng, n_docs, spill, docs)
            except InputError as e:
                if rng is None or e.line is not None:
                    raise
                raise whole_read_error(path, ctx.spec, ctx.chunk_bytes) or e from None
            items.append(info)
            n_docs += info.documents
            n_grams += grams
        cuts = spill.finish()
    cuts.tofile(where / "cuts.i64")
    counts = np.diff(cuts, axis=1).sum(axis=0) if len(cuts) else np.zeros(1 << task.bits)
    return MapResult(
        n_docs, n_grams, counts.astype(np.int64), tuple(items), docs.arrays() if docs else None
    )


def _read_item(
    ctx: MapContext,
    ordinal: int,
    path: Any,
    rng: tuple[int, int] | None,
    first_doc: int,
    spill: _Spill,
    docs: _Docs | None,
) -> tuple[ItemInfo, int]:
    """One file (or byte range) of the shard: its documents numbered from `first_doc`."""
    tk = tokenizer(ctx.norm, ctx.accel)
    lines: list[int] = []
    n_docs = n_grams = 0
    notes = ReadNotes()
    batches = iter_text_batches(
        path,
        spec=ctx.spec,
        byte_range=rng,
        chunk_bytes=ctx.chunk_bytes,
        line_count=lines,
        notes=notes,
    )
    for batch in batches:
        first = first_doc + n_docs
        for a, b, whole in _runs(doc_lengths(batch.texts) <= LONG_DOC_BYTES):
            if not whole:  # NOTE: one long document, window by window
                for grams, pos in window_ngrams(batch.texts[a], tk, ctx.n):
                    doc = np.full(len(grams), first + a, dtype=np.uint64)
                    spill.add(grams, doc, pos.astype(np.uint64))
                    n_grams += len(grams)
                continue
            whole_batch = (a, b) == (0, len(batch.texts))
            texts = batch.texts if whole_batch else [batch.texts[d] for d in range(a, b)]
            stream = tk.tokens(texts)
            grams, win = tk.ngrams(stream, ctx.n)
            counts = np.bincount(stream.doc, minlength=b - a)
            doc = stream.doc[win]
            pos = win - (np.cumsum(counts) - counts)[doc]
            spill.add(grams, (doc + first + a).astype(np.uint64), pos.astype(np.uint64))
            n_grams += len(grams)
        if docs is not None:
            # NOTE: in a byte range first_ordinal is -1: records count from the range's start.
            first = batch.first_ordinal if batch.first_ordinal >= 0 else n_docs
            docs.add(ordinal, batch.offsets, first, batch.lines)
        n_docs += len(batch.texts)
    start = None if rng is None else rng[0]
    unread = min(notes.unread_turns.values(), default=None)
    return ItemInfo(str(path), start, n_docs, lines[0] if lines else 0, unread), n_grams


def _runs(short: np.ndarray) -> list[tuple[int, int, bool]]:
    """The batch's documents in order as (start, stop, whole): runs of short documents, read
    as one chunk, and each long one (`short` False) on its own.

    >>> _runs(np.array([True, True, False, True]))
    [(0, 2, True), (2, 3, False), (3, 4, True)]
    """
    out: list[tuple[int, int, bool]] = []
    a = 0
    for d in np.flatnonzero(~short).tolist():
        if d > a:
            out.append((a, d, True))
        out.append((d, d + 1, False))
        a = d + 1
    if a < len(short) or not out:
        out.append((a, len(short), True))
    return out


class _Docs:
    """The per-document table of a shard, gathered batch by batch."""

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in DOC_COLUMNS}

    def add(
        self, ordinal: int, offsets: Sequence[int] | np.ndarray, first: int, lines: list[int]
    ) -> None:
        m = len(offsets)
        self.parts["file_ord"].append(np.full(m, ordinal, dtype=np.int64))
        self.parts["offset"].append(np.array(offsets, dtype=np.int64))
        self.parts["record"].append(np.arange(first, first + m, dtype=np.int64))
        self.parts["line"].append(np.array(lines, dtype=np.int64))

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            k: np.concatenate(v) if v else np.zeros(0, dtype=np.int64)
            for k, v in self.parts.items()
        }


DOC_COLUMNS = ("file_ord", "offset", "record", "line")


class _Spill:
    """Records written in segments, each grouped by bucket; the segments' bucket offsets kept.

    NOTE: with positions a segment keeps the records of a bucket in the order they came (by
    document, then position: a stable sort on the bucket), so a reduce needs one stable sort by
    gram; without, a segment holds each gram once, sorted. Columns wait apart (gathering them is
    several times faster than gathering 24-byte records) and are interleaved when written.
    """

    def __init__(self, fh: IO[bytes], bits: int, positions: bool, buffer_bytes: int) -> None:
        self.fh, self.bits, self.positions, self.buffer_bytes = fh, bits, positions, buffer_bytes
        self.pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.pending_bytes = 0
        self.written = 0
        self.cuts: list[np.ndarray] = []

    def add(self, grams: np.ndarray, doc: np.ndarray, pos: np.ndarray) -> None:
        if not len(grams):
            return
        self.pending.append((grams, doc, pos) if self.positions else (grams, grams, grams))
        self.pending_bytes += grams.nbytes * (3 if self.positions else 1)
        if self.pending_bytes >= self.buffer_bytes:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        grams = np.concatenate([p[0] for p in self.pending])
        shift = np.uint64(64 - self.bits)
        if self.positions:
            key = (grams >> shift).astype(np.uint16)  # NOTE: bits <= 12: a radix sort
            order = np.argsort(key, kind="stable")
            recs = np.empty(len(grams), dtype=REC)
            recs["gram"] = grams[order]
            for i, name in ((1, "doc"), (2, "pos")):
                recs[name] = np.concatenate([p[i] for p in self.pending])[order]
            key = key[order]
        else:
            grams = distinct_sorted(grams)
            key = (grams >> shift).astype(np.uint16)
            recs = grams
        self.pending, self.pending_bytes = [], 0
        cuts = np.searchsorted(key, np.arange((1 << self.bits) + 1)).astype(np.int64)
        self.fh.write(recs.tobytes())
        self.cuts.append(cuts + self.written)
        self.written += len(recs)

    def finish(self) -> np.ndarray:
        """Every segment's bucket offsets (records from the file's start), one row each."""
        self.flush()
        if not self.cuts:
            return np.zeros((0, (1 << self.bits) + 1), dtype=np.int64)
        return np.stack(self.cuts)


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: what np.unique gives, by one sort and a mask (np.unique of
    numpy 2.4 is far slower on uint64).

    >>> distinct_sorted(np.array([3, 1, 3, 2], dtype=np.uint64)).tolist()
    [1, 2, 3]
    """
    out = np.sort(values)
    if len(out) < 2:
        return out
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]
