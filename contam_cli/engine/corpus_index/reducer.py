"""The reduce side of a corpus index build: buckets sorted into parts, parts into the index.

Each reduce task takes a range of consecutive buckets of one source, reads that range's slice of
every segment of every map task's run file (adding each map task's first global document number
with positions), sorts it as the serial build sorts a bucket (distinct grams without positions;
by gram, document, position with them) and writes its part to ``reduce/``. Buckets are
ordered by their hashes' top bits, so sorting a range of them at once is sorting each in turn;
the parts, concatenated in bucket order, are the serial build's arrays.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from contam_cli.engine.corpus_index.mapper import (
    REC,
    MapResult,
    check_staging,
    distinct_sorted,
    task_dir,
)
from contam_cli.errors import ContamError, OutputError

__all__ = [
    "ReduceContext",
    "ReduceTask",
    "append_parts",
    "doc_bases",
    "plan_groups",
    "reduce_group",
]


@dataclass(frozen=True)
class ReduceContext:
    """What every reduce task of one build needs."""

    root: str
    token: str
    positions: bool


@dataclass(frozen=True)
class ReduceTask:
    """Buckets ``[first, stop)`` of source `source`, from the run files of its map tasks."""

    source: int
    group: int
    first: int
    stop: int
    buckets: int
    """The source's bucket count (a row of a run file's cuts has ``buckets + 1`` entries)."""
    maps: tuple[tuple[int, int], ...]
    """(map task number, its first global document number), in document order."""

    @property
    def key(self) -> str:
        """A name in messages."""
        return f"s{self.source}:buckets {self.first}-{self.stop - 1}"


def plan_groups(counts: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive bucket ranges holding at most `budget` records each (a bigger bucket alone),
    empty ranges left out; the plan depends on the data, never on the workers.

    >>> plan_groups(np.array([2, 2, 5, 0, 1]), 4)
    [(0, 2), (2, 3), (3, 5)]
    """
    groups: list[tuple[int, int]] = []
    first, total = 0, 0
    for b, c in enumerate(counts.tolist()):
        if total and total + c > budget:
            groups.append((first, b))
            first, total = b, 0
        total += c
    if total:
        groups.append((first, len(counts)))
    return groups


def part_path(root: str | Path, task: ReduceTask, column: str) -> Path:
    """Where reduce task `task` writes `column` (gram, doc, pos)."""
    return Path(root) / "reduce" / f"s{task.source}.g{task.group:05d}.{column}"


def reduce_group(ctx: ReduceContext, task: ReduceTask) -> int:
    """Sort buckets ``[first, stop)`` of every map task into this group's part; its length."""
    try:
        return _reduce(ctx, task)
    except (ContamError, OSError):
        raise
    except Exception as e:  # noqa: BLE001 - named by its buckets, exit 2
        raise ContamError(f"index part {task.key} failed: {type(e).__name__}: {e}") from e


def _reduce(ctx: ReduceContext, task: ReduceTask) -> int:
    check_staging(ctx.root, ctx.token)
    dtype = REC if ctx.positions else np.dtype("<u8")
    pieces = [
        piece
        for number, doc_base in task.maps
        for piece in _slices(ctx.root, number, task, dtype, doc_base)
    ]
    data: np.ndarray = np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)
    if not ctx.positions:
        grams = distinct_sorted(data)
        grams.tofile(part_path(ctx.root, task, "gram"))
        return len(grams)
    columns = {c: np.ascontiguousarray(data[c]) for c in ("gram", "doc", "pos")}
    del data
    ordered = _sorted_records(columns["gram"], columns["doc"], columns["pos"])
    for name, values in zip(columns, ordered):
        values.tofile(part_path(ctx.root, task, name))
    return len(ordered[0])


def _slices(
    root: str, number: int, task: ReduceTask, dtype: np.dtype, doc_base: int
) -> list[np.ndarray]:
    """The records of buckets ``[first, stop)`` in every segment of map task `number`'s file."""
    where = task_dir(root, number)
    try:
        cuts = np.fromfile(where / "cuts.i64", dtype=np.int64).reshape(-1, task.buckets + 1)
        fh = open(where / "records.bin", "rb")  # NOTE: closed below
    except (OSError, ValueError) as e:
        raise OutputError(
            f"{where}: a map task's output cannot be read here ({e}); on a Ray cluster the "
            "index's output directory must be on storage every node shares"
        ) from None
    out = []
    with fh:
        for a, b in cuts[:, [task.first, task.stop]].tolist():
            if b <= a:
                continue
            fh.seek(a * dtype.itemsize)
            part: np.ndarray = np.fromfile(fh, dtype=dtype, count=b - a)
            if len(part) != b - a:
                raise OutputError(f"{where / 'records.bin'}: truncated while the index was built")
            if doc_base and dtype.names:
                part["doc"] += np.uint64(doc_base)
            out.append(part)
    return out


def _sorted_records(
    gram: np.ndarray, doc: np.ndarray, pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records sorted by (gram, doc, pos), as ``np.sort(order=...)`` sorts them.

    NOTE: equal grams share a bucket, and each map task keeps a bucket's records by document and
    position (segments and tasks in document order), so a stable sort by gram is enough. The
    result is checked, with the full sort as a fallback, so a wrong assumption costs time only.
    """
    order = stable_order(gram)
    out = gram[order], doc[order], pos[order]
    g, d, p = out
    tie = g[1:] == g[:-1]
    if (tie & ((d[1:] < d[:-1]) | ((d[1:] == d[:-1]) & (p[1:] <= p[:-1])))).any():
        order = np.lexsort((pos, doc, gram))
        out = gram[order], doc[order], pos[order]
    return out


def stable_order(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` of uint64 values, faster: an unstable argsort, then
    each run of equal values put back in index order by one sort of (run, index) keys.

    >>> stable_order(np.array([5, 1, 5, 1, 0], dtype=np.uint64)).tolist()
    [4, 1, 3, 0, 2]
    """
    n = len(values)
    if n >= 1 << 32:
        return np.argsort(values, kind="stable")
    order = np.argsort(values)
    ranked = values[order]
    new_run = np.empty(n, dtype=bool)
    new_run[:1] = True
    np.not_equal(ranked[1:], ranked[:-1], out=new_run[1:])
    keys = np.cumsum(new_run, dtype=np.uint64)
    keys <<= np.uint64(32)
    keys |= order.astype(np.uint64)
    keys.sort()
    keys &= np.uint64(0xFFFFFFFF)
    return keys.astype(np.int64)


def append_parts(
    root: str | Path, stem: Path, tasks: Sequence[ReduceTask], positions: bool
) -> None:
    """Concatenate the parts of `tasks` (one source's, in bucket order) into ``stem.grams.u64``
    (and ``.doc.u64``, ``.pos.u64`` with positions), removing each part once appended."""
    columns = [("gram", "grams"), ("doc", "doc"), ("pos", "pos")]
    for column, name in columns if positions else columns[:1]:
        with open(f"{stem}.{name}.u64", "wb", buffering=0) as out:
            for task in tasks:
                part = part_path(root, task, column)
                with open(part, "rb") as fh:
                    _append(fh, out)
                part.unlink()


def _append(src: BinaryIO, dst: BinaryIO) -> None:
    """All of `src` at the end of `dst` (unbuffered files): copied in the kernel where it can be
    (Linux's copy_file_range), else through this process."""
    size = os.fstat(src.fileno()).st_size
    done = 0
    copy_range = getattr(os, "copy_file_range", None)
    while copy_range is not None and done < size:
        try:
            step = copy_range(src.fileno(), dst.fileno(), size - done)
        except OSError as e:
            if done or e.errno not in _NO_COPY_RANGE:
                raise
            break  # NOTE: not across these filesystems, or not at all here
        if step == 0:
            break
        done += step
    while block := src.read(8 << 20):  # NOTE: from where the kernel copy stopped, if it did
        view = memoryview(block)
        while view:
            view = view[dst.write(view) or 0 :]


_NO_COPY_RANGE = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}


def doc_bases(results: Sequence[MapResult]) -> list[int]:
    """Each map task's first document number within its source: the serial build's numbering
    (documents in file order), a prefix sum over the source's shards in plan order.

    >>> from contam_cli.engine.corpus_index.mapper import MapResult
    >>> r = [MapResult(d, 0, np.zeros(1), (), None) for d in (3, 0, 2)]
    >>> doc_bases(r)
    [0, 3, 3]
    """
    bases, total = [], 0
    for r in results:
        bases.append(total)
        total += r.documents
    return bases
