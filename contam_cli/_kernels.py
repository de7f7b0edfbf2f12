"""numba kernels; imported only through :func:`contam_cli._accel.kernels` (numba installed)."""

from __future__ import annotations

import numpy as np
from numba import njit

from contam_cli.ngrams import _F1, _F2, _K, _P, _Q, _Q_INV

_U = np.uint64
P, Q, QI, K, F1, F2 = _U(_P), _U(_Q), _U(_Q_INV), _U(_K), _U(_F1), _U(_F2)
S33, S8, SPACE = _U(33), _U(8), np.uint8(0x20)


@njit(cache=True, nogil=True)
def _fmix(x):  # noqa: ANN001, ANN202
    x ^= x >> S33
    x *= F1
    x ^= x >> S33
    x *= F2
    x ^= x >> S33
    return x


@njit(cache=True, nogil=True)
def scan_words(arr, a64):  # noqa: ANN001, ANN201
    """Word starts, ends and token hashes of a separator-mapped byte buffer (0x20 = separator).

    `a64` is `arr` viewed as little-endian uint64 (len(arr) a multiple of 8, ending in at least
    8 separators), so each 8-byte word of a token is at most two aligned loads.
    """
    n = arr.shape[0]
    cap = n // 2 + 1
    starts = np.empty(cap, np.int64)
    ends = np.empty(cap, np.int64)
    hashes = np.empty(cap, np.uint64)
    k = 0
    i = 0
    while i < n:
        if arr[i] == SPACE:
            i += 1
            continue
        s = i
        while arr[i] != SPACE:
            i += 1
        length = i - s
        acc = _U(0)
        power = _U(1)
        off = s
        rest = length
        while rest > 0:
            q = off >> 3
            r = _U(off & 7) * S8
            w = a64[q]
            if r != _U(0):
                w = (w >> r) | (a64[q + 1] << (_U(64) - r))
            if rest < 8:
                w &= (_U(1) << _U(8 * rest)) - _U(1)
            acc += w * power
            power *= P
            off += 8
            rest -= 8
        hashes[k] = _fmix(acc + _U(length) * K)
        starts[k] = s
        ends[k] = i
        k += 1
    return starts[:k], ends[:k], hashes[:k]


@njit(cache=True, nogil=True)
def ngrams(t, doc, n):  # noqa: ANN001, ANN201
    """N-gram hashes of token hashes `t` that lie inside one document, and their start index."""
    total = t.shape[0]
    m = total - n + 1
    if m <= 0:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    grams = np.empty(m, np.uint64)
    where = np.empty(m, np.int64)
    top = _U(1)
    for _ in range(n - 1):
        top *= Q
    s = _U(0)
    q = _U(1)
    for j in range(n):
        s += t[j] * q
        q *= Q
    salt = _U(n) * K
    c = 0
    for k in range(m):
        if doc[k] == doc[k + n - 1]:
            grams[c] = _fmix(s + salt)
            where[c] = k
            c += 1
        if k + n < total:
            s = (s - t[k]) * QI + t[k + n] * top
    return grams[:c], where[:c]


@njit(cache=True, nogil=True)
def lookup(hashes, bits, shift, grams):  # noqa: ANN001, ANN201
    """Positions in `hashes` that are in sorted `grams` (bitset first), and their gram index."""
    n = hashes.shape[0]
    pos = np.empty(n, np.int64)
    idx = np.empty(n, np.int64)
    size = grams.shape[0]
    c = 0
    sh = _U(shift)
    for i in range(n):
        h = hashes[i]
        top = h >> sh
        if (bits[top >> _U(3)] >> (top & _U(7))) & np.uint8(1):
            j = np.searchsorted(grams, h)
            if j < size and grams[j] == h:
                pos[c] = i
                idx[c] = j
                c += 1
    return pos[:c], idx[:c]
