"""numba kernels; imported only through :func:`contam_cli.text.accel.kernels` (numba installed)."""

from __future__ import annotations

import numpy as np
from numba import njit

from contam_cli.io._intrinsics import load8
from contam_cli.text.hashing import _F1, _F2, _K, _P, _Q, _Q_INV
from contam_cli.text.tables import JOINING, SINGLE, SLOW

_U = np.uint64
P, Q, QI, K, F1, F2 = _U(_P), _U(_Q), _U(_Q_INV), _U(_K), _U(_F1), _U(_F2)
S33, S8, HIGH, ALL = _U(33), _U(8), _U(0x8080808080808080), _U(0xFFFFFFFFFFFFFFFF)
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
def fast_words(buf, starts, ends, words, kinds, fold, fold_len):  # noqa: ANN001, ANN201
    """Token hashes of the words written only in characters the tables let through (see
    :func:`contam_cli.text.tables.word_table`), without the full normalizer.

    `buf` is the translated chunk (ASCII letters already case-folded as configured). In a word,
    ASCII letters and digits and JOINING characters (replaced by their normalized text) make up
    tokens; a SINGLE character is a token of its own, a SEPARATOR ends a token; a SLOW character
    (or a 4-byte sequence) sends the whole word to the full normalizer. Returns a flag per word
    (handled here), the token count per word and the concatenated token hashes of the flagged
    words.
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
        # The token being built: its bytes so far, 8 at a time (as hash_words reads them).
        length = 0
        acc = _U(0)
        power = _U(1)
        w = _U(0)
        shift = _U(0)
        while i < e:
            b0 = np.int64(buf[i])
            if b0 < 0x80:  # an ASCII letter or digit (words hold no ASCII separator)
                piece = _U(b0)
                plen = 1
                i += 1
            else:
                if 0xC2 <= b0 < 0xE0:
                    cp = ((b0 & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F)
                    size = 2
                elif 0xE0 <= b0 < 0xF0:
                    cp = ((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6)
                    cp |= np.int64(buf[i + 2]) & 0x3F
                    size = 3
                else:
                    ok = False
                    break
                if i + size > e:  # NOTE: a cut sequence (not UTF-8): the full normalizer
                    ok = False
                    break
                kind = kinds[cp]
                if kind == SLOW:
                    ok = False
                    break
                if kind == JOINING:
                    piece = fold[cp]
                    plen = np.int64(fold_len[cp])
                    i += size
                else:
                    if length:  # the token so far ends here
                        if shift != _U(0):
                            acc += w * power
                        out[o] = _fmix(acc + _U(length) * K)
                        o += 1
                        length = 0
                        acc, power, w, shift = _U(0), _U(1), _U(0), _U(0)
                    if kind == SINGLE:  # a token of its own: its 3 bytes
                        x = _U(b0) | (_U(buf[i + 1]) << S8) | (_U(buf[i + 2]) << _U(16))
                        out[o] = _fmix(x + _U(3) * K)
                        o += 1
                    i += size
                    continue
            for _ in range(plen):  # append the piece's bytes to the token
                w |= (piece & _U(0xFF)) << shift
                piece >>= S8
                shift += S8
                length += 1
                if shift == _U(64):
                    acc += w * power
                    power *= P
                    w = _U(0)
                    shift = _U(0)
        if not ok:
            o = o0
            continue
        if length:
            if shift != _U(0):
                acc += w * power
            out[o] = _fmix(acc + _U(length) * K)
            o += 1
        fast[j] = True
        counts[j] = o - o0
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
def hash_words(arr, edges, doc_starts):  # noqa: ANN001, ANN201
    """Token hashes of the words between alternating `edges` (start, end, start, ...).

    `arr` is the separator-mapped chunk (ending in at least 8 separators), so each 8-byte word
    of a token is one unaligned load, masked to the token's length. Also returns each word's
    document (from sorted `doc_starts`) and the indices of words holding non-ASCII bytes, which
    need Unicode normalization.
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
        w = load8(arr, s) & (ALL >> _U(64 - 8 * min(length, 8)))
        high = w
        acc = w
        if length > 8:  # long tokens: the following 8-byte words
            power = P
            off = s + 8
            rest = length - 8
            while rest > 0:
                w = load8(arr, off) & (ALL >> _U(64 - 8 * min(rest, 8)))
                high |= w
                acc += w * power
                power *= P
                off += 8
                rest -= 8
        hashes[k] = _fmix(acc + _U(length) * K)
        doc[k] = d
        special[n_special] = k
        n_special += np.int64((high & HIGH) != _U(0))
    return hashes, doc, special[:n_special]


@njit(cache=True, nogil=True)
def translate_edges(buf, table):  # noqa: ANN001, ANN201
    """The chunk `buf` translated, and its word edges: what the numpy path gets from
    ``bytes.translate``, ``_blank_unicode_separators`` and the edge search.

    `table` maps every byte as the tokenizer's translation does (ASCII separators to a space,
    letters case-folded when configured, other bytes to themselves); General Punctuation
    (U+2000..U+206F: the lead byte 0xE2, then 0x80, or 0x81 and at most 0xAF) and U+00A0
    become spaces too. Returns the translated chunk and the positions where a run of
    non-separator bytes starts or ends (alternating). Three branch-free passes (translate and
    note possible separators' lead bytes; blank the real ones; edges) beat one with branches.
    """
    n = buf.shape[0]
    out = np.empty(n, np.uint8)
    lead = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        b = buf[i]
        out[i] = table[b]
        lead[k] = i
        k += np.int64((b == 0xE2) | (b == 0xC2))
    for j in range(k):
        i = lead[j]
        if buf[i] == 0xE2 and i + 2 < n:
            b1 = buf[i + 1]
            if b1 == 0x80 or (b1 == 0x81 and buf[i + 2] <= 0xAF):
                out[i] = out[i + 1] = out[i + 2] = SPACE
        elif buf[i] == 0xC2 and i + 1 < n and buf[i + 1] == 0xA0:
            out[i] = out[i + 1] = SPACE
    edges = lead  # reused: the lead bytes are read
    c = 0
    prev = 0
    for i in range(n):
        cur = 1 if out[i] != SPACE else 0
        edges[c] = i
        c += cur ^ prev
        prev = cur
    return out, edges[:c]
