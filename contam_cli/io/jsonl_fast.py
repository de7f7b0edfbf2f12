"""The compiled route for JSONL corpora: blocks of lines to packed batches, no object per line.

Where numba is installed (extra ``fast``) and no ``--field``/``--id-field`` is given, a JSONL
corpus is read a block of complete lines at a time: one kernel call
(:mod:`contam_cli.io._jsonl_kernels`) validates every line and decodes its ``"text"`` into one
buffer laid out as the tokenizer reads documents, and a batch is slices of that buffer
(:class:`~contam_cli.io.packed.PackedTexts`). A line the kernel declines goes through the full
record reader, exactly as on the line-by-line route, so the documents, their order, offsets, line
numbers, records and errors are those of that route (``tests/io/test_jsonl_fast.py`` holds the
two equal).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Generator, Iterator, Sequence
from types import ModuleType
from typing import BinaryIO

import numpy as np

from contam_cli.io.accel import load
from contam_cli.io.formats import read
from contam_cli.io.line_batch import BatchBuilder, TextBatch
from contam_cli.io.lines import BIG_LINE, is_blank
from contam_cli.io.model import Record
from contam_cli.io.packed import PackedTexts, packed_buffer
from contam_cli.io.source import FileSource

__all__ = ["kernel_batches", "kernels"]

#: Bytes read at a time. Each block is held about four times over while its lines are decoded
#: (as read, joined to the line it completes, decoded, cut into batches): 2 MiB rather than the
#: readers' 4 MiB took the peak RSS of the 100,000-example benchmark scan from 442-453 MB to
#: 420-432 (three runs each), at the same speed.
BLOCK_SIZE = 1 << 21


def kernels() -> ModuleType | None:
    """The line scanner's kernel module, or None (numba missing or CONTAM_ACCEL=0, the same
    switch as the tokenizer's kernels)."""
    return load("contam_cli.io._jsonl_kernels")


class PackedBatch(BatchBuilder):
    """A TextBatch being filled with runs of kernel-read lines (and the lines it declined)."""

    def __init__(self, src: FileSource, ranged: bool, first_ordinal: int) -> None:
        super().__init__(src, ranged, first_ordinal)
        # NOTE: a run's piece is a view of the kernel's output (no copy until packed_buffer).
        self.pieces: list[bytes | memoryview] = []
        self.lengths: list[np.ndarray] = []
        self.offset_parts: list[np.ndarray] = []
        self.line_parts: list[np.ndarray] = []
        # Per run of kernel-read lines: its first document, the block and the lines' spans in it.
        self.run_first: list[int] = []
        self.runs: list[tuple[bytes, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.count = 0

    def add(self, text: bytes, offset: int, line: int, rec: Record) -> None:
        """One document read by the full reader (`rec`), at file `offset` and `line`."""
        self.built[self.count] = rec
        offset = rec.locator.span[0] if rec.locator.span else offset  # after a BOM
        self._part(text, np.array([len(text)]), np.array([offset]), np.array([line]))

    def add_run(
        self,
        piece: bytes | memoryview,
        lengths: np.ndarray,
        data: bytes,
        spans: tuple[np.ndarray, np.ndarray],
        offsets: np.ndarray,
        lines: np.ndarray,
    ) -> None:
        """Consecutive kernel-read documents: their texts joined by newlines (`piece`), and the
        lines they came from (`spans` in `data`, for records built on demand)."""
        self.run_first.append(self.count)
        self.runs.append((data, spans[0], spans[1], offsets, lines))
        self._part(piece, lengths, offsets, lines)

    def _part(
        self, piece: bytes | memoryview, lengths: np.ndarray, offsets: np.ndarray, lines: np.ndarray
    ) -> None:
        self.pieces.append(piece)
        self.lengths.append(lengths)
        self.offset_parts.append(offsets)
        self.line_parts.append(lines)
        self.count += len(lengths)
        self.size += int(lengths.sum())

    def record(self, d: int) -> Record:
        if d not in self.built:
            r = bisect_right(self.run_first, d) - 1
            data, starts, ends, offsets, lines = self.runs[r]
            j = d - self.run_first[r]
            raw = data[int(starts[j]) : int(ends[j])]
            self.built[d] = self.full_record(int(offsets[j]), int(lines[j]), raw, d)
        return self.built[d]

    def done(self) -> TextBatch:
        lengths = np.concatenate(self.lengths)
        texts: Sequence[bytes]
        if max(map(len, self.pieces)) > BIG_LINE:
            # NOTE: a very long document is scanned in windows: a packed copy of it would
            # only add its size to the peak.
            texts = [t for piece, n in zip(self.pieces, self.lengths) for t in _split(piece, n)]
        else:
            texts = PackedTexts(packed_buffer(self.pieces, self.size, self.count), lengths)
        first = -1 if self.ranged else self.first
        lines = np.concatenate(self.line_parts).tolist()
        return TextBatch(texts, np.concatenate(self.offset_parts), first, self.record, lines)


def _split(piece: bytes | memoryview, lengths: np.ndarray) -> list[bytes]:
    """The documents of `piece` (texts of `lengths` bytes, joined by newlines)."""
    piece = bytes(piece)
    if len(lengths) == 1:
        return [piece]
    starts = np.cumsum(lengths + 1) - (lengths + 1)
    return [piece[a : a + n] for a, n in zip(starts.tolist(), lengths.tolist())]


def kernel_batches(
    k: ModuleType,
    src: FileSource,
    fh: BinaryIO,
    span: tuple[int, int, bool],
    chunk_bytes: int,
    line_count: list[int] | None,
) -> Generator[TextBatch, None, int]:
    """The batches of the lines of `fh`, as the line-by-line route cuts them; returns the number
    of documents. `span`: (where to start, the offset at or after which a line belongs to the
    next range, whether this is a byte range)."""
    start, limit, ranged = span
    state = _State(k, src, limit, ranged, chunk_bytes)
    pending: list[bytes] = []
    offset = start  # file offset of the first byte of `pending`
    while not state.finished:
        block = read(fh, BLOCK_SIZE, src.path, state.line_no + 1)
        if not block:
            data = b"".join(pending)
            if len(data) > BIG_LINE:
                yield from state.big_line(data, offset)
            elif data:
                yield from state.lines(data, offset)
            break
        cut = block.rfind(b"\n")
        if cut < 0:
            pending.append(block)
            continue
        if sum(map(len, pending)) > BIG_LINE:  # a very long line ends in this block
            nl = block.find(b"\n")
            head = b"".join([*pending, block[:nl]])
            pending, block = [], block[nl + 1 :]
            yield from state.big_line(head, offset)
            offset += len(head) + 1
            cut -= nl + 1
            if cut < 0 or state.finished:
                pending = [block]
                continue
        # NOTE: a view of the block, not a slice: the join is the one copy of its lines.
        data = b"".join([*pending, memoryview(block)[: cut + 1]])
        pending = [block[cut + 1 :]]
        yield from state.lines(data, offset)
        offset += len(data)
    if state.batch.count:
        yield state.batch.done()
    if line_count is not None:
        line_count.append(state.line_no)
    return state.count


class _State:
    def __init__(
        self, k: ModuleType, src: FileSource, limit: int, ranged: bool, chunk_bytes: int
    ) -> None:
        self.k, self.src, self.limit, self.chunk_bytes = k, src, limit, chunk_bytes
        self.ranged = ranged
        self.batch = PackedBatch(src, self.ranged, 0)
        self.count = self.line_no = 0
        self.finished = False

    def lines(self, data: bytes, offset: int) -> Iterator[TextBatch]:
        """The batches that fill up with the lines of `data` (complete lines from `offset`)."""
        k = self.k
        starts, ends, status, t0, t1, out = k.scan_lines(
            np.frombuffer(data, dtype=np.uint8), offset == 0
        )
        n = len(starts)
        over = np.flatnonzero(starts + offset >= self.limit)
        stop = int(over[0]) if len(over) else n
        kind = status[:stop]
        kept = np.flatnonzero(kind != k.BLANK)
        line_of = kept + self.line_no + 1  # 1-based line of each kept line
        self.line_no += stop
        text = memoryview(out)  # NOTE: its pieces are views, copied once, into a batch's buffer
        fallback = np.flatnonzero(kind[kept] == k.FALLBACK).tolist()
        begin = 0
        for j in [*fallback, len(kept)]:
            yield from self._run(kept[begin:j], line_of[begin:j], data, offset,
                                 (starts, ends), (t0, t1), text)  # fmt: skip
            if j == len(kept):
                break
            i = int(kept[j])
            yield from self._full(
                data[starts[i] : ends[i]], int(starts[i]) + offset, int(line_of[j])
            )
            begin = j + 1
        if stop < n:
            self.finished = True

    def big_line(self, raw: bytes, offset: int) -> Iterator[TextBatch]:
        """A line longer than BIG_LINE (without its newline): straight to the full reader, as
        on the line-by-line route (it parses such a line with less memory than orjson, and the
        kernel's buffers would double it)."""
        if offset >= self.limit:
            self.finished = True
            return
        self.line_no += 1
        if not raw.isspace():
            yield from self._full(raw, offset, self.line_no)

    def _full(self, raw: bytes, offset: int, line: int) -> Iterator[TextBatch]:
        """Line `raw` (at file `offset`, 1-based `line`) read by the full reader."""
        if is_blank(offset, raw):  # NOTE: a BOM alone on the first line (the kernel declines it)
            return
        rec = self.batch.full_record(offset, line, raw, self.batch.count)
        self.batch.add(rec.text.encode("utf-8", "surrogatepass"), offset, line, rec)
        self.count += 1
        if self.batch.size >= self.chunk_bytes:
            yield self._next()

    def _run(
        self,
        idx: np.ndarray,
        lines: np.ndarray,
        data: bytes,
        offset: int,
        spans: tuple[np.ndarray, np.ndarray],
        text_spans: tuple[np.ndarray, np.ndarray],
        text: memoryview,
    ) -> Iterator[TextBatch]:
        """Lines `idx` (all accepted by the kernel) into batches, a batch's worth at a time."""
        t0, t1 = text_spans
        while len(idx):
            sizes = t1[idx] - t0[idx]
            room = self.chunk_bytes - self.batch.size
            # NOTE: as line by line: a batch ends with the line that brings it to chunk_bytes.
            full = np.flatnonzero(np.cumsum(sizes) >= room)
            take = int(full[0]) + 1 if len(full) else len(idx)
            part = idx[:take]
            piece = text[int(t0[part[0]]) : int(t1[part[-1]])]
            line_spans = (spans[0][part], spans[1][part])
            self.batch.add_run(
                piece, sizes[:take], data, line_spans, spans[0][part] + offset, lines[:take]
            )
            self.count += take
            idx, lines = idx[take:], lines[take:]
            if self.batch.size >= self.chunk_bytes:
                yield self._next()

    def _next(self) -> TextBatch:
        done = self.batch.done()
        self.batch = PackedBatch(self.src, self.ranged, self.count)
        return done
