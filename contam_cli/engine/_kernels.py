"""numba kernels for the eval index: building it without sort temporaries, and probing it.

Imported only through :func:`contam_cli.engine.accel.index_kernels` (numba installed). The
numpy code in :mod:`contam_cli.engine.eval_index` computes the same arrays; tests hold both paths
to each other.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_U = np.uint64
_M6 = _U(63)
_S6 = _U(6)
_S12 = _U(12)
_S18 = _U(18)

#: Hashes looked ahead by the prefetch of :func:`lookup` (when the filter is not cache-sized):
#: enough misses in flight to cover a trip to memory (``scripts/bench_index.py --ahead`` times
#: several; 128 beat 48 by a third on the 16 MB and 134 MB filters of 100,000 and 1,000,000
#: examples).
PREFETCH_AHEAD = 128

#: How far ahead :func:`dedup` prefetches its per-example counts.
_DEDUP_AHEAD = 64

#: Buckets up to this size are sorted by insertion (stable, no allocation); larger ones (a gram
#: shared by many examples, like a benchmark's boilerplate) by a stable merge sort.
_SMALL = 32


@njit(cache=True, nogil=True)
def bloom_mask(h):  # noqa: ANN001, ANN201
    """The four bits of hash `h` in its Bloom filter word (as :mod:`contam_cli.engine.bloom`)."""
    one = _U(1)
    return (
        (one << (h & _M6))
        | (one << ((h >> _S6) & _M6))
        | (one << ((h >> _S12) & _M6))
        | (one << ((h >> _S18) & _M6))
    )


@njit(cache=True, nogil=True)
def bucket_counts(grams, shift, counts):  # noqa: ANN001, ANN201
    """Add to `counts` the number of `grams` in each bucket of their top bits."""
    sh = _U(shift)
    for i in range(grams.shape[0]):
        counts[np.int64(grams[i] >> sh)] += 1


@njit(cache=True, nogil=True)
def bucket_scatter(grams, per_doc, first_ex, shift, fill, out_g, out_e, out_p):  # noqa: ANN001, ANN201
    """Append each gram, with its example and position, to its bucket (`fill`: next slots).

    `grams` holds ``per_doc[d]`` n-grams of example ``first_ex + d`` in turn, at positions 0, 1,
    ... (every window inside a document is an n-gram). Called part after part in example order,
    so each bucket ends up in (example, position) order and a stable sort by gram then gives
    (gram, example, position) order.
    """
    sh = _U(shift)
    i = 0
    for d in range(per_doc.shape[0]):
        e = first_ex + d
        for q in range(per_doc[d]):
            h = grams[i]
            b = np.int64(h >> sh)
            k = fill[b]
            fill[b] = k + 1
            out_g[k] = h
            out_e[k] = e
            out_p[k] = q
            i += 1


@njit(cache=True, nogil=True)
def _sort_range(g, e, p, lo, hi):  # noqa: ANN001, ANN202
    """Stable sort of ``[lo, hi)`` of `g` by gram, moving `e` and `p` alike."""
    if hi - lo <= _SMALL:
        for i in range(lo + 1, hi):
            x, xe, xp = g[i], e[i], p[i]
            j = i
            while j > lo and g[j - 1] > x:
                g[j] = g[j - 1]
                e[j] = e[j - 1]
                p[j] = p[j - 1]
                j -= 1
            g[j], e[j], p[j] = x, xe, xp
    else:
        o = np.argsort(g[lo:hi], kind="mergesort")
        g[lo:hi] = g[lo:hi][o]
        e[lo:hi] = e[lo:hi][o]
        p[lo:hi] = p[lo:hi][o]


@njit(cache=True, nogil=True)
def sort_buckets(bounds, g, e, p):  # noqa: ANN001, ANN201
    """Stable sort of every bucket ``[bounds[b], bounds[b+1])`` of `g` by gram, moving `e`, `p`."""
    for b in range(bounds.shape[0] - 1):
        _sort_range(g, e, p, bounds[b], bounds[b + 1])


@njit(cache=True, nogil=True)
def refine_buckets(bounds, g, e, p, shift, bits, tg, te, tp):  # noqa: ANN001, ANN201
    """:func:`sort_buckets`, each bucket first split by the `bits` bits of its grams below bit
    `shift` (a stable counting scatter through `tg`, `te`, `tp`, which hold the largest bucket).

    NOTE: a bucket of the first split fits the caches, so this second scatter writes close
    together; one scatter into as many buckets over the whole array writes far apart.
    """
    nb = 1 << bits
    mask = _U(nb - 1)
    sh = _U(shift)
    starts = np.zeros(nb + 1, np.int64)
    for b in range(bounds.shape[0] - 1):
        lo = bounds[b]
        hi = bounds[b + 1]
        n = hi - lo
        if n <= _SMALL:
            _sort_range(g, e, p, lo, hi)
            continue
        starts[:] = 0
        for i in range(n):
            x = g[lo + i]
            tg[i] = x
            te[i] = e[lo + i]
            tp[i] = p[lo + i]
            starts[np.int64((x >> sh) & mask) + 1] += 1
        for d in range(nb):
            starts[d + 1] += starts[d]
        for i in range(n):
            d = np.int64((tg[i] >> sh) & mask)
            k = lo + starts[d]
            starts[d] += 1
            g[k] = tg[i]
            e[k] = te[i]
            p[k] = tp[i]
        first = lo  # NOTE: starts[d] is now where digit d ends
        for d in range(nb):
            last = lo + starts[d]
            if last - first > 1:
                _sort_range(g, e, p, first, last)
            first = last


@njit(cache=True, nogil=True)
def dedup(g, e, ptr, first, total):  # noqa: ANN001, ANN201
    """Compact the distinct grams of sorted `g` to its front; return their count ``m``.

    `ptr[:m + 1]` receives where each distinct gram's occurrences start (and the end), `first[i]`
    whether occurrence ``i`` is the first of its (gram, example) pair, and `total[x]` the
    number of distinct grams of example ``x``.
    """
    n = g.shape[0]
    m = 0
    for i in range(n):
        # NOTE: `total` is indexed in no order (examples, gram after gram): fetched ahead, its
        # cache misses overlap instead of coming one after another.
        if i + _DEDUP_AHEAD < n:
            _prefetch(total, np.int64(e[i + _DEDUP_AHEAD]))
        if i == 0 or g[i] != g[i - 1]:
            ptr[m] = i
            g[m] = g[i]
            m += 1
            first[i] = True
        else:
            first[i] = e[i] != e[i - 1]
        if first[i]:
            total[e[i]] += 1
    ptr[m] = n
    return m


@njit(cache=True, nogil=True)
def directory_fill(grams, shift, directory):  # noqa: ANN001, ANN201
    """``directory[b]``: where the sorted `grams` whose top bits are >= ``b`` begin (+ the end)."""
    sh = _U(shift)
    n = grams.shape[0]
    j = 0
    for b in range(directory.shape[0] - 1):
        while j < n and np.int64(grams[j] >> sh) < b:
            j += 1
        directory[b] = j
    directory[directory.shape[0] - 1] = n


@njit(cache=True, nogil=True)
def bloom_fill(grams, shift, words):  # noqa: ANN001, ANN201
    """Set each gram's four bits in the 64-bit word its top bits select (see :func:`lookup`)."""
    sh = _U(shift)
    for i in range(grams.shape[0]):
        h = grams[i]
        words[np.int64(h >> sh)] |= bloom_mask(h)


@intrinsic
def _prefetch(typingctx, arr, idx):  # noqa: ANN001, ANN202, ARG001
    """Ask the CPU to start loading ``arr[idx]`` into the cache (a hint: no effect on results)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        # read (0), keep in all cache levels (3), data cache (1)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True)
def lookup(hashes, words, shift, grams, directory, dir_shift, ahead):  # noqa: ANN001, ANN201
    """Positions in `hashes` that are in sorted `grams`, and their gram index.

    First pass: a blocked Bloom filter (four bits of one 64-bit word per gram) rejects almost
    every hash. When the filter is larger than the caches, each probe is a cache miss: with
    ``ahead > 0`` the word of the hash that many places on is prefetched, so that many misses
    are in flight at once (on a 16 MB filter, 18-22 ns per hash without, 3.3-3.5 with 128;
    on a cache-sized one the prefetch only costs, so pass 0). Second pass: each candidate goes
    to the few sorted `grams` of its `directory` bucket.
    """
    n = hashes.shape[0]
    cand = np.empty(n, np.int64)
    c = 0
    sh = _U(shift)
    for i in range(n):
        if ahead > 0 and i + ahead < n:
            _prefetch(words, np.int64(hashes[i + ahead] >> sh))
        h = hashes[i]
        mask = bloom_mask(h)
        cand[c] = i
        c += np.int64((words[np.int64(h >> sh)] & mask) == mask)
    pos = np.empty(c, np.int64)
    idx = np.empty(c, np.int64)
    k = 0
    dsh = _U(dir_shift)
    for t in range(c):
        i = cand[t]
        h = hashes[i]
        b = np.int64(h >> dsh)
        for j in range(directory[b], directory[b + 1]):
            gj = grams[j]
            if gj >= h:
                if gj == h:
                    pos[k] = i
                    idx[k] = j
                    k += 1
                break
    return pos[:k], idx[:k]
