"""The eval index's prefilter: a blocked Bloom filter over sorted 64-bit hashes.

A hash's top bits pick one 64-bit word, its lowest 24 bits four bits in it. At 16 to 32 bits per
hash 0.1-0.4% of other hashes pass (with two bits, about 2%), and a probe touches one cache line;
each hash that passes costs the exact search two cache misses. The compiled kernels
(:func:`contam_cli.engine._kernels.bloom_mask`) set and test the same bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bloom_log2", "bloom_masks", "bloom_test", "bloom_words"]

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
    words = np.zeros(1 << log2, dtype=np.uint64)
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
