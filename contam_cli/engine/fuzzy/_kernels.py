# mypy: disallow-untyped-defs=False
"""numba kernels of the fuzzy detector: seed hits and the banded alignment, fused loops.

Imported only through :func:`contam_cli.engine.fuzzy.accel.fuzzy_kernels` (numba installed). They
compute exactly what the numpy code of :mod:`~contam_cli.engine.fuzzy.seeds` and
:mod:`~contam_cli.engine.fuzzy.align` computes (integer arithmetic, the same tie-breaks); tests
hold the two paths to each other and to the definitions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from contam_cli.engine._kernels import bloom_mask
from contam_cli.engine.fuzzy.seeds import PAIR_SALT
from contam_cli.text._kernels import _fmix

_U = np.uint64
SALT = _U(PAIR_SALT)


@njit(cache=True, nogil=True)
def pair_hits(tokens, doc, max_gap, words, shift, pairs, directory, dir_shift):  # noqa: ANN001, ANN201
    """(seed index, chunk position) of every pair of the chunk that is a seed.

    Pairs (c, c + g), g = 1 .. max_gap, inside one document, hashed as in
    :func:`~contam_cli.engine.fuzzy.seeds.pair_hash`; the Bloom filter first, then the seeds of
    the hash's directory bucket. Hits come in (position, gap) order.
    """
    n = tokens.shape[0]
    seeds = np.empty(n * max_gap, np.int64)
    starts = np.empty(n * max_gap, np.int64)
    k = 0
    sh = _U(shift)
    dsh = _U(dir_shift)
    for c in range(n):
        a = tokens[c]
        for g in range(1, max_gap + 1):
            if c + g >= n or doc[c + g] != doc[c]:
                break
            h = _fmix(a + tokens[c + g] + SALT)
            mask = bloom_mask(h)
            if (words[np.int64(h >> sh)] & mask) != mask:
                continue
            bucket = np.int64(h >> dsh)
            for j in range(directory[bucket], directory[bucket + 1]):
                pj = pairs[j]
                if pj >= h:
                    if pj == h:
                        seeds[k] = j
                        starts[k] = c
                        k += 1
                    break
    return seeds[:k], starts[:k]


@njit(cache=True, nogil=True)
def _row(i, x, w, a, y, base, length, lo, width, h1, h2, h0, sub, gap, swap):  # noqa: ANN001, ANN202
    """Fill band row `i` into `h0` from rows i-1 (`h1`) and i-2 (`h2`), each with a zero past
    the band; the example's tokens are ``x[a:]``. Returns (row max, its first band index)."""
    xi = x[a + i - 1]
    wi = w[a + i - 1]
    xp = x[a + i - 2] if i >= 2 else xi
    wp = w[a + i - 2] if i >= 2 else 0
    left = 0
    top = 0
    arg = 0
    for b in range(width):
        j = i + lo + b
        if j < 1 or j > length:
            h0[b] = 0
            left = 0
            continue
        yv = y[base + j - 1]
        d = h1[b] + wi if yv == xi else h1[b] - sub
        u = h1[b + 1] - gap
        if u > d:
            d = u
        if i >= 2 and j >= 2:
            yp = y[base + j - 2]
            if xp == yv and xi == yp and yp != yv:
                s = h2[b] + wp + wi - swap
                if s > d:
                    d = s
        lf = left - gap
        if lf > d:
            d = lf
        if d < 0:
            d = 0
        h0[b] = d
        left = d
        if d > top:
            top = d
            arg = b
    h0[width] = 0
    return top, arg


@njit(cache=True, nogil=True)
def align_all(ex, lo, hi, base, length, ev_tok, ev_w, ev_ptr, y, sub, gap, swap):  # noqa: ANN001, ANN201
    """Best cell (H, i, j) of each candidate's band, with three rolling rows."""
    n = ex.shape[0]
    out_h = np.zeros(n, np.int64)
    out_i = np.zeros(n, np.int64)
    out_j = np.zeros(n, np.int64)
    most = 1
    for k in range(n):
        most = max(most, hi[k] - lo[k] + 2)
    r0 = np.zeros(most, np.int64)
    r1 = np.zeros(most, np.int64)
    r2 = np.zeros(most, np.int64)
    for k in range(n):
        e = ex[k]
        a = ev_ptr[e]
        m = ev_ptr[e + 1] - a
        width = hi[k] - lo[k] + 1
        r1[: width + 1] = 0
        r2[: width + 1] = 0
        best = 0
        bi = 0
        bj = 0
        for i in range(1, m + 1):
            top, arg = _row(
                i, ev_tok, ev_w, a, y, base[k], length[k], lo[k], width, r1, r2, r0, sub, gap, swap
            )
            if top > best:
                best = top
                bi = i
                bj = i + lo[k] + arg
            r0, r1, r2 = r2, r0, r1
        out_h[k] = best
        out_i[k] = bi
        out_j[k] = bj
    return out_h, out_i, out_j


@njit(cache=True, nogil=True)
def band_matrix(x, w, y, lo, hi, sub, gap, swap):  # noqa: ANN001, ANN201
    """The whole filled band of one alignment: (len(x) + 1, hi - lo + 1), row 0 zeros."""
    m = x.shape[0]
    width = hi - lo + 1
    rows = np.zeros((m + 1, width + 1), np.int64)
    for i in range(1, m + 1):
        h2 = rows[i - 2] if i >= 2 else rows[0]
        _row(i, x, w, 0, y, 0, y.shape[0], lo, width, rows[i - 1], h2, rows[i], sub, gap, swap)
    return rows[:, :width].copy()


@njit(cache=True, nogil=True)
def _at(rows, i, j, lo, n):  # noqa: ANN001, ANN202
    """H(i, j) of a filled band (0 outside it, on row 0 and past the document's `n` tokens)."""
    b = j - i - lo
    if i >= 1 and 1 <= j <= n and 0 <= b < rows.shape[1]:
        return rows[i, b]
    return 0


@njit(cache=True, nogil=True)
def trace(rows, x, w, y, lo, sub, gap, swap, i, j):  # noqa: ANN001, ANN201
    """:func:`~contam_cli.engine.fuzzy.align.traceback` compiled: (pairs, columns), or
    columns -1 when `rows` does not follow the recurrence."""
    n = y.shape[0]
    out = np.empty((i + 1, 2), np.int64)
    k = 0
    columns = 0
    h = _at(rows, i, j, lo, n)
    while h > 0:
        same = x[i - 1] == y[j - 1]
        if same and h == _at(rows, i - 1, j - 1, lo, n) + w[i - 1]:
            out[k, 0], out[k, 1] = i - 1, j - 1
            k += 1
            i, j = i - 1, j - 1
        elif (
            i >= 2
            and j >= 2
            and x[i - 2] == y[j - 1]
            and x[i - 1] == y[j - 2]
            and y[j - 2] != y[j - 1]
            and h == _at(rows, i - 2, j - 2, lo, n) + w[i - 2] + w[i - 1] - swap
        ):
            out[k, 0], out[k, 1] = i - 1, j - 2
            out[k + 1, 0], out[k + 1, 1] = i - 2, j - 1
            k += 2
            columns += 1
            i, j = i - 2, j - 2
        elif not same and h == _at(rows, i - 1, j - 1, lo, n) - sub:
            i, j = i - 1, j - 1
        elif h == _at(rows, i - 1, j, lo, n) - gap:
            i -= 1
        elif h == _at(rows, i, j - 1, lo, n) - gap:
            j -= 1
        else:
            return out[:0], -1
        columns += 1
        h = _at(rows, i, j, lo, n)
    return out[:k][::-1].copy(), columns
