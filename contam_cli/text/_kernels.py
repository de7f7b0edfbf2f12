"""numba kernels; imported only through :func:`contam_cli.text.accel.kernels` (numba installed)."""

from __future__ import annotations

import numpy as np
from numba import njit

from contam_cli.text.hashing import _F1, _F2, _K, _P, _Q, _Q_INV

_U = np.uint64
P, Q, QI, K, F1, F2 = _U(_P), _U(_Q), _U(_Q_INV), _U(_K), _U(_F1), _U(_F2)
S33, S8, HIGH = _U(33), _U(8), _U(0x8080808080808080)
SPACE = np.uint8(0x20)


@njit(cache=True, nogil=True)
def _fmix(x):  # noqa: ANN001, ANN202
    x ^= x >> S33
    x *= F1
    x ^= x >> S33
    x *= F2
    x ^= x >> S33
    return x


@njit(cache=True, nogil=True)
def hash_words(a64, edges, doc_starts):  # noqa: ANN001, ANN201
    """Token hashes of the words between alternating `edges` (start, end, start, ...).

    `a64` is the separator-mapped chunk viewed as little-endian uint64 (its length a multiple of
    8, ending in at least 8 separators), so each 8-byte word of a token is at most two aligned
    loads. Also returns each word's document (from sorted `doc_starts`) and the indices of words
    holding non-ASCII bytes, which need Unicode normalization.
    """
    m = edges.shape[0] // 2
    hashes = np.empty(m, np.uint64)
    doc = np.empty(m, np.int64)
    special = np.empty(m, np.int64)
    n_special = 0
    d = 0
    n_docs = doc_starts.shape[0]
    for k in range(m):
        s = edges[2 * k]
        length = edges[2 * k + 1] - s
        while d + 1 < n_docs and doc_starts[d + 1] <= s:
            d += 1
        acc = _U(0)
        power = _U(1)
        high = _U(0)
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
            high |= w
            acc += w * power
            power *= P
            off += 8
            rest -= 8
        hashes[k] = _fmix(acc + _U(length) * K)
        doc[k] = d
        if high & HIGH:
            special[n_special] = k
            n_special += 1
    return hashes, doc, special[:n_special]


@njit(cache=True, nogil=True)
def segmented_words(buf, starts, ends, words, table):  # noqa: ANN001, ANN201
    """Token hashes of words written only in fast-path characters (see ``_fast_table``).

    `table[cp]` is 0 for a separator, 1 for a one-character token, 2 for anything that needs
    the full normalizer. Returns a flag per word (all characters fast), the token count per
    word and the concatenated token hashes of the flagged words.
    """
    m = words.shape[0]
    fast = np.zeros(m, np.bool_)
    counts = np.zeros(m, np.int64)
    cap = 0
    for j in range(m):
        cap += ends[words[j]] - starts[words[j]]
    out = np.empty(cap, np.uint64)
    o = 0
    for j in range(m):
        i = starts[words[j]]
        e = ends[words[j]]
        o0 = o
        ok = True
        while i < e:
            b0 = np.int64(buf[i])
            if b0 < 0xE0 or b0 >= 0xF0:  # only 3-byte sequences (U+0800..U+FFFF) are fast
                ok = False
                break
            cp = ((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6)
            cp |= np.int64(buf[i + 2]) & 0x3F
            kind = table[cp]
            if kind == 2:
                ok = False
                break
            if kind == 1:
                w = _U(b0) | (_U(buf[i + 1]) << S8) | (_U(buf[i + 2]) << _U(16))
                out[o] = _fmix(w + _U(3) * K)
                o += 1
            i += 3
        if ok:
            fast[j] = True
            counts[j] = o - o0
        else:
            o = o0
    return fast, counts, out[:o]


@njit(cache=True, nogil=True)
def expand(hashes, doc, rest, counts, cat):  # noqa: ANN001, ANN201
    """Replace word ``rest[j]`` (sorted) by the ``counts[j]`` token hashes that follow in `cat`."""
    total = hashes.shape[0] - rest.shape[0] + counts.sum()
    out = np.empty(total, np.uint64)
    out_doc = np.empty(total, np.int64)
    src = o = c = 0
    for j in range(rest.shape[0]):
        k = rest[j]
        span = k - src  # untouched words before this one: block copies
        out[o : o + span] = hashes[src:k]
        out_doc[o : o + span] = doc[src:k]
        o += span
        for _ in range(counts[j]):
            out[o] = cat[c]
            out_doc[o] = doc[k]
            o += 1
            c += 1
        src = k + 1
    span = hashes.shape[0] - src
    out[o : o + span] = hashes[src:]
    out_doc[o : o + span] = doc[src:]
    return out, out_doc


@njit(cache=True, nogil=True)
def word_edges(arr):  # noqa: ANN001, ANN201
    """Positions where a run of non-separator bytes starts or ends (alternating), branch-free."""
    n = arr.shape[0]
    edges = np.empty(n, np.int64)
    c = 0
    prev = 0
    for i in range(n):
        cur = 1 if arr[i] != SPACE else 0
        edges[c] = i
        c += cur ^ prev
        prev = cur
    return edges[:c]


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
