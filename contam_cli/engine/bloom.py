"""The eval index's prefilter: a blocked Bloom filter over sorted 64-bit hashes.

A hash's top bits pick one 64-bit word, its lowest 24 bits four bits in it. At 16 to 32 bits per
hash 0.1-0.4% of other hashes pass (with two bits, about 2%), and a probe touches one cache line;
each hash that passes costs the exact search two cache misses. The compiled kernels
(:func:`contam_cli.engine._kernels.bloom_mask`) set and test the same bits.
"""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np

__all__ = ["bloom_log2", "bloom_masks", "bloom_test", "bloom_words", "probed_zeros"]

#: Huge pages are 2 MB on x86-64 and most arm64 kernels; a filter smaller than a few of them
#: fits the TLB without them.
_HUGE = 2 << 20

_LOW6 = np.uint64(63)
_SHIFTS = tuple(np.uint64(s) for s in (0, 6, 12, 18))


def bloom_log2(m: int) -> int:
    """log2 of the number of 64-bit words for `m` hashes: about 16 bits each, at least 2**14
    words."""
    return int(min(32, max(14, np.ceil(np.log2(max(1, m) * 16 / 64)))))


def bloom_masks(hashes: np.ndarray) -> np.ndarray:
    """Each hash's four bits in its word."""
    one = np.uint64(1)
    out = np.left_shift(one, hashes & _LOW6)
    for s in _SHIFTS[1:]:
        out |= np.left_shift(one, (hashes >> s) & _LOW6)
    return out


def bloom_words(sorted_hashes: np.ndarray, log2: int, kernels: Any = None) -> np.ndarray:
    """The filter (``2**log2`` uint64 words) over `sorted_hashes`; `kernels`: the compiled
    kernels of :mod:`contam_cli.engine.accel`, when they are used."""
    words = probed_zeros(1 << log2, np.uint64)
    if len(sorted_hashes) == 0:
        return words
    shift = 64 - log2
    if kernels is not None:
        kernels.bloom_fill(sorted_hashes, shift, words)
        return words
    for a in range(0, len(sorted_hashes), 1 << 22):  # bounded temporaries
        g = sorted_hashes[a : a + (1 << 22)]
        np.bitwise_or.at(words, (g >> np.uint64(shift)).astype(np.int64), bloom_masks(g))
    return words


def bloom_test(words: np.ndarray, log2: int, hashes: np.ndarray) -> np.ndarray:
    """Whether each hash may be in the filter (no false negatives)."""
    mask = bloom_masks(hashes)
    return (words[(hashes >> np.uint64(64 - log2)).astype(np.int64)] & mask) == mask


def probed_zeros(n: int, dtype: Any) -> np.ndarray:
    """`n` zeros of `dtype` for an array probed at random (the filter: one word per corpus
    n-gram), in memory the kernel is asked to back with huge pages (Linux; elsewhere, or when
    small, ``np.zeros``).

    NOTE: with 4 KB pages nearly every probe of a filter larger than the TLB covers also misses
    the TLB. The command line asks numpy for no huge pages (see :mod:`contam_cli.entry`), since
    most large arrays are written once and first writes to huge pages can stall; this one array
    is read far more often than written.
    """
    nbytes = n * np.dtype(dtype).itemsize
    advise = getattr(mmap, "MADV_HUGEPAGE", None)
    if advise is None or nbytes < 4 * _HUGE:
        return np.zeros(n, dtype=dtype)
    # NOTE: a private anonymous mapping is zero-filled (a shared one is shared memory, which
    # gets no huge pages); one huge page more, so that the array can start on a boundary.
    buf = mmap.mmap(-1, nbytes + _HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        buf.madvise(advise)
    except OSError:  # NOTE: a kernel without transparent huge pages
        pass
    raw = np.frombuffer(buf, dtype=np.uint8)
    start = -raw.ctypes.data % _HUGE
    return raw[start : start + nbytes].view(dtype)
