"""numba kernels; imported only through :func:`contam_cli.text.accel.kernels` (numba installed)."""

from __future__ import annotations

import numpy as np
from numba import njit

from contam_cli.io._intrinsics import load8
from contam_cli.text.hashing import _F1, _F2, _K, _P, _Q, _Q_INV
from contam_cli.text.tables import IGNORED, JOINING, SINGLE, SLOW

_U = np.uint64
P, Q, QI, K, F1, F2 = _U(_P), _U(_Q), _U(_Q_INV), _U(_K), _U(_F1), _U(_F2)
F1_INV, F2_INV = _U(pow(_F1, -1, 1 << 64)), _U(pow(_F2, -1, 1 << 64))
S33, S8, HIGH, ALL = _U(33), _U(8), _U(0x8080808080808080), _U(0xFFFFFFFFFFFFFFFF)
SPACE = np.uint8(0x20)
_BEYOND = np.int64(2**62)  # past any chunk's last byte


@njit(cache=True, nogil=True)
def _fmix(x):  # noqa: ANN001, ANN202
    x ^= x >> S33
    x *= F1
    x ^= x >> S33
    x *= F2
    x ^= x >> S33
    return x


@njit(cache=True, nogil=True)
def _unfmix(x):  # noqa: ANN001, ANN202
    """The inverse of :func:`_fmix` (each step undone in turn: ``x ^ x >> 33`` is its own)."""
    x ^= x >> S33
    x *= F2_INV
    x ^= x >> S33
    x *= F1_INV
    x ^= x >> S33
    return x


@njit(cache=True, nogil=True)
def _fast_word(buf, i, e, kinds, fold, fold_len, out, o):  # noqa: ANN001, ANN202
    """Write the token hashes of the word ``buf[i:e]`` (holding non-ASCII bytes) at ``out[o:]``,
    before the finalizer (``_fmix``, which :func:`word_tokens` applies to all at the end), and
    return where they end, or -1 when the tables cannot tokenize it (see
    :func:`contam_cli.text.tables.word_table`): the full normalizer's job.

    `buf` is the translated chunk (ASCII letters already case-folded as configured). In a word,
    ASCII letters and digits and JOINING characters (replaced by their normalized text) make up
    tokens; a SINGLE character is a token of its own, a SEPARATOR ends a token, an IGNORED one
    (a format character, removed before normalizing) is skipped; a SLOW character
    (or a 4-byte sequence) sends the whole word to the full normalizer. `out` has room for one
    hash more than the word has bytes of 0x80 and above.
    """
    # The token being built: its bytes so far, 8 at a time (as word_tokens reads them).
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
                return -1
            if i + size > e:  # NOTE: a cut sequence (not UTF-8): the full normalizer
                return -1
            kind = kinds[cp]
            if kind == SLOW:
                return -1
            if kind == IGNORED:  # a format character: as if it were not there
                i += size
                continue
            if kind == JOINING:
                piece = fold[cp]
                plen = np.int64(fold_len[cp])
                i += size
            else:
                if length:  # the token so far ends here
                    if shift != _U(0):
                        acc += w * power
                    out[o] = acc + _U(length) * K
                    o += 1
                    length = 0
                    acc, power, w, shift = _U(0), _U(1), _U(0), _U(0)
                if kind == SINGLE:  # a token of its own: its 3 bytes
                    x = _U(b0) | (_U(buf[i + 1]) << S8) | (_U(buf[i + 2]) << _U(16))
                    out[o] = x + _U(3) * K
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
    if length:
        if shift != _U(0):
            acc += w * power
        out[o] = acc + _U(length) * K
        o += 1
    return o


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
            grams[c] = s
            where[c] = k
            c += 1
        if k + n < total:
            s = (s - t[k]) * QI + t[k + n] * top
    # NOTE: the finalizer in a pass of its own, which the compiler turns into vector
    # instructions: inside the rolling loop above it cost a quarter more.
    for i in range(c):
        grams[i] = _fmix(grams[i] + salt)
    return grams[:c], where[:c]


@njit(cache=True, nogil=True)
def word_tokens(arr, edges, doc_starts, kinds, fold, fold_len, keys, values):  # noqa: ANN001, ANN201
    """The token hashes of the words between alternating `edges` (start, end, start, ...) and
    each token's document: every word tokenized in one pass, nothing written twice.

    `arr` is the translated chunk (ending in at least 8 separators), so each 8-byte word of a
    token is one unaligned load, masked to the token's length. An ASCII word is one token. A
    word holding non-ASCII bytes ("special") gives the tokens of :func:`_fast_word`; when the
    tables cannot tokenize it, the hash of its bytes is looked up in sorted `keys` (the words
    known to give one token, `values`), and when it is not there either it holds one slot,
    left for the caller to fill from the full normalizer ("unresolved").

    Returns the tokens, their documents (from sorted `doc_starts`), the special words, the
    words that did not give one token with their counts, and the unresolved words with their
    slots and their bytes' hashes.
    """
    m = edges.shape[0] // 2
    # NOTE: a special word gives at most one token more than it has SINGLE or SEPARATOR
    # characters, each two or three of the chunk's bytes of 0x80 and above.
    cap = m
    for i in range(arr.shape[0]):
        cap += np.int64(arr[i] >> 7)
    out = np.empty(cap, np.uint64)
    special = np.empty(m, np.int64)
    multi = np.empty(m, np.int64)
    multi_counts = np.empty(m, np.int64)
    unresolved = np.empty(m, np.int64)
    slots = np.empty(m, np.int64)
    raw = np.empty(m, np.uint64)
    doc = np.empty(cap, np.int64)
    o = ns = nm = nu = 0
    d = 0
    n_docs = doc_starts.shape[0]
    n_keys = keys.shape[0]
    # NOTE: the next document's start kept at hand: one compare per word, and no load
    upcoming = doc_starts[1] if n_docs > 1 else _BEYOND
    for k in range(m):
        s = edges[2 * k]
        e = edges[2 * k + 1]
        length = e - s
        while s >= upcoming:
            d += 1
            upcoming = doc_starts[d + 1] if d + 1 < n_docs else _BEYOND
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
        # NOTE: the hash before the finalizer; the finalizer runs over all tokens at the end, a
        # pass the compiler turns into vector instructions (a tenth of this kernel's time).
        pre = acc + _U(length) * K
        if (high & HIGH) == _U(0):
            out[o] = pre
            doc[o] = d
            o += 1
            continue
        h = _fmix(pre)
        special[ns] = k
        ns += 1
        end = _fast_word(arr, s, e, kinds, fold, fold_len, out, o)
        if end >= 0:
            for t in range(o, end):
                doc[t] = d
            if end - o != 1:
                multi[nm] = k
                multi_counts[nm] = end - o
                nm += 1
            o = end
            continue
        lo, hi = 0, n_keys  # the words seen before that gave one token
        while lo < hi:
            mid = (lo + hi) >> 1
            if keys[mid] < h:
                lo = mid + 1
            else:
                hi = mid
        if lo < n_keys and keys[lo] == h:
            out[o] = _unfmix(values[lo])
        else:
            out[o] = _U(0)
            unresolved[nu] = k
            slots[nu] = o
            raw[nu] = h
            nu += 1
        doc[o] = d
        o += 1
    for t in range(o):
        out[t] = _fmix(out[t])
    return (
        out[:o],
        doc[:o],
        special[:ns],
        multi[:nm],
        multi_counts[:nm],
        unresolved[:nu],
        slots[:nu],
        raw[:nu],
    )


@njit(cache=True, nogil=True, inline="always")
def _sep3(b1, b2):  # noqa: ANN001, ANN202
    """Whether 0xE2 `b1` `b2` is a separator above ASCII: General Punctuation less its format
    characters (0x80 and not 0x8B..0x8F or 0xAA..0xAE, or 0x81 and at most 0x9F)."""
    word = (np.uint8(b2 - np.uint8(0x8B)) >= np.uint8(5)) & (
        np.uint8(b2 - np.uint8(0xAA)) >= np.uint8(5)
    )
    return ((b1 == np.uint8(0x80)) & word) | ((b1 == np.uint8(0x81)) & (b2 <= np.uint8(0x9F)))


@njit(cache=True, nogil=True)
def _edge_byte(buf, i, n, fold):  # noqa: ANN001, ANN202
    """Byte `i` of `buf` (`n` bytes) translated as the vector loop of :func:`translate_edges`
    does, with bounds checks: for the first and last two bytes, whose neighbours may be
    missing (a separator sequence cut by either end of the chunk is not one)."""
    b = buf[i]
    alnum = (0x30 <= b <= 0x39) or (0x41 <= b <= 0x5A) or (0x61 <= b <= 0x7A) or b >= 0x80
    for lead in range(max(i - 2, 0), i + 1):
        if buf[lead] == 0xE2 and lead + 2 < n and _sep3(buf[lead + 1], buf[lead + 2]):
            alnum = False
    if (b == 0xC2 and i + 1 < n and buf[i + 1] == 0xA0) or (
        i >= 1 and buf[i - 1] == 0xC2 and b == 0xA0
    ):
        alnum = False
    if not alnum:
        return SPACE
    return b | fold if 0x41 <= b <= 0x5A else b


@njit(cache=True, nogil=True)
def translate_edges(buf, casefold):  # noqa: ANN001, ANN201
    """The chunk `buf` translated, and its word edges: what the numpy path gets from
    ``bytes.translate`` (the table of :func:`contam_cli.text.tokenizer._translate_table`),
    ``_blank_unicode_separators`` and the edge search.

    Every ASCII byte that is not a letter or digit becomes a space, letters are case-folded
    with `casefold`, other bytes stay, and the separators above ASCII (General Punctuation less
    its format characters, and U+00A0) become spaces too. Returns the translated chunk and the
    positions where a run of non-separator bytes starts or ends (alternating).

    Two passes. The first is arithmetic, with no table and no branch, which the compiler turns
    into vector instructions: each byte's translation, and whether it lies in a separator above
    ASCII, from the two bytes either side of it (every place such a sequence could start); the
    first and last two bytes, whose neighbours may be missing, are redone with bounds checks.
    The edges are one branch-free pass. The kernel took 0.71-0.72 ns a byte where the one before,
    with a separate search for the lead bytes 0xE2 and 0xC2, took 0.88 (1 MB chunks of the
    benchmark corpus, ``scripts/bench_translate.py`` at both commits).
    """
    n = buf.shape[0]
    out = np.empty(n, np.uint8)
    fold = np.uint8(0x20) if casefold else np.uint8(0)
    e2, c2, a0 = np.uint8(0xE2), np.uint8(0xC2), np.uint8(0xA0)
    for i in range(2, n - 2):
        b = buf[i]
        d = np.uint8(b - np.uint8(0x30))
        u = np.uint8(b - np.uint8(0x41))
        low = np.uint8(b - np.uint8(0x61))
        upper = u < np.uint8(26)
        keep = (d < np.uint8(10)) | upper | (low < np.uint8(26)) | (b >= np.uint8(0x80))
        p2, p1, n1, n2 = buf[i - 2], buf[i - 1], buf[i + 1], buf[i + 2]
        # NOTE: written out (and _sep3 inlined): a call here kept the compiler from vectorizing
        blank = (
            ((b == e2) & _sep3(n1, n2))
            | ((p1 == e2) & _sep3(b, n1))
            | ((p2 == e2) & _sep3(p1, b))
            | ((b == c2) & (n1 == a0))
            | ((p1 == c2) & (b == a0))
        )
        v = b | (fold if upper else np.uint8(0))
        out[i] = SPACE if blank else (v if keep else SPACE)
    for i in range(min(2, n)):
        out[i] = _edge_byte(buf, i, n, fold)
    for i in range(max(2, n - 2), n):
        out[i] = _edge_byte(buf, i, n, fold)
    edges = np.empty(n, np.int64)
    c = 0
    prev = 0
    for i in range(n):
        cur = 1 if out[i] != SPACE else 0
        edges[c] = i
        c += cur ^ prev
        prev = cur
    return out, edges[:c]
