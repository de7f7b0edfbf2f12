"""The eval index's occurrences in (gram, example, position) order: the sort of its build.

Each batch of eval texts gives its n-gram hashes (a "part"); :func:`sort_numpy` sorts them all by
numpy's stable argsort, :func:`sort_compiled` by counting sorts in the compiled kernels
(:mod:`contam_cli.engine._kernels`), and both give the same arrays: the distinct grams, each
occurrence's example and position, where each gram's occurrences start, whether an occurrence is
its example's first of that gram, and each example's count of distinct grams.
"""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np

__all__ = ["COARSE_BITS", "SPLIT_BITS", "Parts", "Sorted", "cat", "pos_dtype", "ptr_dtype"]
__all__ += ["scratch", "sort_compiled", "sort_numpy"]


Parts = list[tuple[np.ndarray, np.ndarray, int]]
"""Per batch: its n-gram hashes, the count per document, and the batch's first example."""
Sorted = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def sort_numpy(parts: Parts, total: np.ndarray) -> Sorted:
    """(distinct grams, occ_ex, occ_pos, occurrence offsets, occ_first), occurrences in (gram,
    example, position) order (the parts come in example order and the sort is stable); adds
    each example's distinct grams to `total`."""
    grams = cat([g for g, _, _ in parts], np.uint64)
    per_doc = cat([c for _, c, _ in parts], np.int64)
    parts.clear()
    ex = np.repeat(np.arange(len(per_doc), dtype=np.int32), per_doc)
    pos = (np.arange(len(grams)) - np.repeat(np.cumsum(per_doc) - per_doc, per_doc)).astype(
        pos_dtype(int(per_doc.max(initial=0)))
    )
    order = np.argsort(grams, kind="stable")
    grams.sort()  # NOTE: in place, equal to grams[order] without a second copy
    ex = ex[order]
    pos = pos[order]
    del order
    new = np.empty(len(grams), dtype=bool)
    new[:1] = True
    np.not_equal(grams[1:], grams[:-1], out=new[1:])
    occ_first = new.copy()
    occ_first[1:] |= ex[1:] != ex[:-1]
    total += np.bincount(ex[occ_first], minlength=len(total))
    starts = np.flatnonzero(new)
    uniq = grams[starts]
    ptr: np.ndarray = np.append(starts, len(grams)).astype(ptr_dtype(len(grams)))
    return uniq, ex, pos, ptr, occ_first


#: Bits of the first split of :func:`sort_compiled` at most (its buckets' write positions fit
#: the caches), and of both splits together (about four grams per final bucket, at most).
COARSE_BITS = 10
SPLIT_BITS = 26


def sort_compiled(parts: Parts, k: Any, total: np.ndarray) -> Sorted:
    """What :func:`sort_numpy` returns, by a counting sort on the top bits (one scatter of
    every part into its bucket, freeing the part; then, for a large eval set, each bucket
    split again by the next bits, a scatter within the bucket) and a stable sort inside each
    small bucket: no argsort, no permutation arrays, no sorted copy of the whole.

    NOTE: one scatter into 2**20 buckets writes far apart: the sort of a 1,000,000-example
    build took 4.55 s so, and 3.47 with 2**10 buckets split again; 0.21 and 0.17 s with 100,000
    (``scripts/bench_index.py DATA --splits 10/26,20/20``, best of two and of three)."""
    size = sum(len(g) for g, _, _ in parts)
    split = int(min(SPLIT_BITS, max(4, np.ceil(np.log2(max(1, size) / 4)))))
    log2 = min(split, max(1, COARSE_BITS))
    shift = 64 - log2
    idx = ptr_dtype(size)
    counts: np.ndarray = np.zeros(1 << log2, dtype=idx)
    for g, _, _ in parts:
        k.bucket_counts(g, shift, counts)
    bounds: np.ndarray = np.zeros(len(counts) + 1, dtype=idx)
    np.cumsum(counts, out=bounds[1:])
    del counts
    fill = bounds[:-1].copy()
    grams = scratch(size, np.uint64)
    ex = scratch(size, np.int32)
    most = max((int(c.max(initial=0)) for _, c, _ in parts), default=0)
    pos: np.ndarray = scratch(size, pos_dtype(most))
    while parts:
        g, per_doc, first = parts.pop(0)
        k.bucket_scatter(g, per_doc, first, shift, fill, grams, ex, pos)
        del g, per_doc
    del fill
    if split > log2:
        most_in = int(np.diff(bounds).max(initial=0))
        temps = (
            np.empty(most_in, grams.dtype),
            np.empty(most_in, ex.dtype),
            np.empty(most_in, pos.dtype),
        )
        k.refine_buckets(bounds, grams, ex, pos, shift - (split - log2), split - log2, *temps)
        del temps
    else:
        k.sort_buckets(bounds, grams, ex, pos)
    del bounds
    ptr: np.ndarray = scratch(size + 1, idx)
    occ_first = scratch(size, bool)
    m = int(k.dedup(grams, ex, ptr, occ_first, total))
    # NOTE: eval n-grams are nearly all distinct, so views of the compacted arrays waste little;
    # copy only when duplicates freed a good share.
    if m < 0.75 * size:
        return grams[:m].copy(), ex, pos, ptr[: m + 1].copy(), occ_first
    return grams[:m], ex, pos, ptr[: m + 1], occ_first


def pos_dtype(most: int) -> type:
    """Positions fit 16 bits unless an example has more than 65,536 n-grams."""
    return np.uint16 if most <= 1 << 16 else np.int32


def ptr_dtype(total: int) -> type:
    return np.int32 if total < 2**31 else np.int64


def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def scratch(n: int, dtype: Any) -> np.ndarray:
    """`n` zeros of `dtype` in a mapping of their own that asks for no huge pages (Linux; else
    ``np.zeros``): for the build's large arrays, each written once, in turn.

    NOTE: numpy asks the kernel for huge pages for every array of 4 MB or more. Where the kernel
    compacts memory to find them (``defrag`` "madvise", a common setting) and memory is mostly
    page cache, as it is once a corpus has been read, the first write to each stalls; these
    arrays are written once and gain little from them. ``scripts/profile_eval_side.py`` shows
    the eval side's time in the kernel.
    """
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes < 4 << 20 or not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return np.zeros(n, dtype=dtype)
    # NOTE: a private anonymous mapping is zero-filled, and freed with the array. Said in so
    # many words, so that a system that gives huge pages unasked (THP "always") gives none.
    buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(buf, dtype=dtype, count=n)
