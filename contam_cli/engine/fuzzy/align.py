"""The banded weighted local alignment that verifies a candidate, and its traceback.

An eval example ``x`` (token hashes, weights ``w``) is aligned to a corpus document ``y`` inside a
band of diagonals ``lo <= j - i <= hi``, cells ``(i, j)`` counting consumed tokens (1-based):

    H(i, j) = max( 0,
                   H(i-1, j-1) + (w[i-1] if x[i-1] == y[j-1] else -mismatch),
                   H(i-1, j) - gap,                        # an eval token left out
                   H(i, j-1) - gap,                        # a corpus token inserted
                   H(i-2, j-2) + w[i-2] + w[i-1] - swap )  # neighbours in the other order:
                                                           # x[i-2] == y[j-1], x[i-1] == y[j-2],
                                                           # x[i-2] != x[i-1]

with H = 0 outside the band, on row or column 0, and past the document's end. The best cell is
the largest H, ties to the smallest i, then the smallest j. All values are integers (units of
1/SCALE of the heaviest weight), so the numpy path and the compiled kernel give the same H, the
same best cell and the same traceback, which follows a fixed order of preference: match, swap,
mismatch, eval gap, corpus gap.

:func:`reference_matrix` is the definition, cell by cell; :func:`align_candidates` scores many
candidates at once (numpy, rows vectorized over candidates, or the kernel); :func:`band_matrix`
and :func:`traceback` give the matched pairs of the few candidates that become evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

__all__ = [
    "Alignment",
    "Candidates",
    "align",
    "align_candidates",
    "band_matrix",
    "best_cell",
    "reference_matrix",
    "traceback",
]

Penalties = tuple[int, int, int]
"""(mismatch, gap, swap) in alignment units."""

#: Candidates aligned together by the numpy path (rows vectorized over them).
_GROUP = 256


@dataclass(frozen=True, slots=True)
class Candidates:
    """Candidate alignments of one chunk (parallel int64 arrays)."""

    example: np.ndarray
    doc: np.ndarray
    """Document (index in the chunk) of each candidate."""
    lo: np.ndarray
    hi: np.ndarray
    """The band: diagonals ``lo <= j - i <= hi`` (document position minus eval position)."""
    base: np.ndarray
    """Chunk position of the document's first token."""
    length: np.ndarray
    """Token count of the document."""

    def __len__(self) -> int:
        return len(self.example)


@dataclass(frozen=True, slots=True)
class Alignment:
    """The best local alignment of one candidate."""

    score: int
    """H of the best cell (units); 0: nothing aligned."""
    pairs: np.ndarray
    """int64 (k, 2): (eval position, document position) of each matched token, in eval order."""
    columns: int
    """Alignment columns: matched tokens, mismatches and gaps (a swap is two matched columns)."""

    @property
    def matched(self) -> int:
        return len(self.pairs)


def reference_matrix(
    x: list[int], w: list[int], y: list[int], lo: int, hi: int, pen: Penalties
) -> list[list[int]]:
    """H as rows ``0..len(x)`` of band cells ``b = j - i - lo`` (the definition, plain Python)."""
    sub, gap, swap = pen
    width = hi - lo + 1
    rows = [[0] * width for _ in range(len(x) + 1)]

    def at(i: int, j: int) -> int:
        b = j - i - lo
        return rows[i][b] if i >= 1 and 1 <= j <= len(y) and 0 <= b < width else 0

    for i in range(1, len(x) + 1):
        for b in range(width):
            j = i + lo + b
            if not 1 <= j <= len(y):
                continue
            s = w[i - 1] if x[i - 1] == y[j - 1] else -sub
            best = max(0, at(i - 1, j - 1) + s, at(i - 1, j) - gap, at(i, j - 1) - gap)
            if i >= 2 and j >= 2 and x[i - 2] == y[j - 1] and x[i - 1] == y[j - 2] != y[j - 1]:
                best = max(best, at(i - 2, j - 2) + w[i - 2] + w[i - 1] - swap)
            rows[i][b] = best
    return rows


def best_cell(rows: np.ndarray | list[list[int]], lo: int) -> tuple[int, int, int]:
    """(H, i, j) of the best cell: the largest H, ties to the smallest i, then smallest j."""
    h = np.asarray(rows, dtype=np.int64)
    if h.size == 0 or int(h.max()) == 0:
        return 0, 0, 0
    i, b = np.unravel_index(int(np.argmax(h)), h.shape)
    return int(h[i, b]), int(i), int(i + lo + b)


def traceback(
    rows: np.ndarray,
    x: np.ndarray,
    w: np.ndarray,
    y: np.ndarray,
    lo: int,
    pen: Penalties,
    end: tuple[int, int],
    kernels: ModuleType | None = None,
) -> tuple[np.ndarray, int]:
    """Matched (eval, document) positions of the alignment ending at cell `end`, and its
    column count, from the filled band `rows`."""
    sub, gap, swap = pen
    if kernels is not None:
        found, cols = kernels.trace(rows, x, w.astype(np.int64), y, lo, sub, gap, swap, *end)
        if cols < 0:  # pragma: no cover - H was not filled by the recurrence
            raise ValueError("band matrix does not follow the alignment recurrence")
        return found, int(cols)
    width = rows.shape[1]
    xs, ws, ys = x.tolist(), w.tolist(), y.tolist()
    flat = rows.tolist()

    def at(i: int, j: int) -> int:
        b = j - i - lo
        return flat[i][b] if i >= 1 and 1 <= j <= len(ys) and 0 <= b < width else 0

    i, j = end
    h = at(i, j)
    pairs: list[tuple[int, int]] = []
    columns = 0
    while h > 0:
        same = xs[i - 1] == ys[j - 1]
        if same and h == at(i - 1, j - 1) + ws[i - 1]:
            pairs.append((i - 1, j - 1))
            i, j, columns = i - 1, j - 1, columns + 1
        elif (
            i >= 2
            and j >= 2
            and xs[i - 2] == ys[j - 1]
            and xs[i - 1] == ys[j - 2] != ys[j - 1]
            and h == at(i - 2, j - 2) + ws[i - 2] + ws[i - 1] - swap
        ):
            pairs += [(i - 1, j - 2), (i - 2, j - 1)]
            i, j, columns = i - 2, j - 2, columns + 2
        elif not same and h == at(i - 1, j - 1) - sub:
            i, j, columns = i - 1, j - 1, columns + 1
        elif h == at(i - 1, j) - gap:
            i, columns = i - 1, columns + 1
        elif h == at(i, j - 1) - gap:
            j, columns = j - 1, columns + 1
        else:  # pragma: no cover - H was not filled by the recurrence
            raise ValueError("band matrix does not follow the alignment recurrence")
        h = at(i, j)
    out = np.array(pairs[::-1], dtype=np.int64).reshape(-1, 2)
    return out, columns


def band_matrix(
    x: np.ndarray,
    w: np.ndarray,
    y: np.ndarray,
    lo: int,
    hi: int,
    pen: Penalties,
    kernels: ModuleType | None = None,
) -> np.ndarray:
    """The filled band, int64 of shape (len(x) + 1, hi - lo + 1) (row 0 is zeros)."""
    if kernels is not None:
        return kernels.band_matrix(x, w.astype(np.int64), y, lo, hi, *pen)  # type: ignore[no-any-return]
    rows = np.zeros((len(x) + 1, hi - lo + 1), dtype=np.int64)
    one = _one(len(x), len(y), lo, hi)
    _dp(one, x, w.astype(np.int64), y, pen, rows)
    return rows


def align(
    x: np.ndarray,
    w: np.ndarray,
    y: np.ndarray,
    lo: int,
    hi: int,
    pen: Penalties,
    kernels: ModuleType | None = None,
) -> Alignment:
    """The best alignment of `x` (weights `w`) to `y` within the band, with its pairs."""
    rows = band_matrix(x, w, y, lo, hi, pen, kernels)
    h, i, j = best_cell(rows, lo)
    if h == 0:
        return Alignment(0, np.zeros((0, 2), dtype=np.int64), 0)
    pairs, columns = traceback(rows, x, w, y, lo, pen, (i, j), kernels)
    return Alignment(h, pairs, columns)


def align_candidates(
    cands: Candidates,
    ev_tokens: np.ndarray,
    ev_weights: np.ndarray,
    ev_ptr: np.ndarray,
    y: np.ndarray,
    pen: Penalties,
    kernels: ModuleType | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best cell (H, i, j) of every candidate (int64 arrays); `y` is the chunk's tokens."""
    if kernels is not None:
        args = (cands.example, cands.lo, cands.hi, cands.base, cands.length)
        return kernels.align_all(*args, ev_tokens, ev_weights, ev_ptr, y, *pen)  # type: ignore[no-any-return]
    n = len(cands)
    out = np.zeros((3, n), dtype=np.int64)
    m = ev_ptr[cands.example + 1] - ev_ptr[cands.example]
    # NOTE: groups of similar shape, so that padding to the group's largest band and example
    # wastes little.
    order = np.lexsort((m, cands.hi - cands.lo))
    for a in range(0, n, _GROUP):
        idx = order[a : a + _GROUP]
        sub = _Group(m[idx], cands.length[idx], cands.lo[idx], cands.hi[idx], cands.base[idx])
        starts = ev_ptr[cands.example[idx]]
        x, wt = _gather(ev_tokens, ev_weights, starts, m[idx])
        out[:, idx] = _dp(sub, x, wt, y, pen, None)
    return out[0], out[1], out[2]


@dataclass(frozen=True, slots=True)
class _Group:
    """Candidates aligned together: example lengths, document lengths, bands, chunk bases."""

    m: np.ndarray
    length: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    base: np.ndarray


def _one(m: int, length: int, lo: int, hi: int) -> _Group:
    def a(v: int) -> np.ndarray:
        return np.array([v], dtype=np.int64)

    return _Group(a(m), a(length), a(lo), a(hi), a(0))


def _gather(
    tokens: np.ndarray, weights: np.ndarray, starts: np.ndarray, m: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Examples as rows, padded to the longest by repeating their last token (rows past an
    example's end are outside its band)."""
    width = int(m.max(initial=1))
    k = np.minimum(np.arange(width)[None, :], np.maximum(m[:, None] - 1, 0))
    at = np.minimum(starts[:, None] + k, max(len(tokens) - 1, 0))
    return tokens[at], weights[at].astype(np.int64)


def _dp(
    g: _Group,
    x: np.ndarray,
    w: np.ndarray,
    y: np.ndarray,
    pen: Penalties,
    rows: np.ndarray | None,
) -> np.ndarray:
    """Fill the bands of group `g` row by row (vectorized over candidates); record every row in
    `rows` (a single candidate) when given. Returns (H, i, j) of each candidate's best cell."""
    if x.ndim == 1:
        x, w = x[None, :], w[None, :]
    c = len(g.m)
    width = int((g.hi - g.lo).max(initial=0)) + 1
    h1 = np.zeros((c, width + 1), dtype=np.int64)  # row i - 1, and a zero past the band
    h2 = np.zeros((c, width + 1), dtype=np.int64)  # row i - 2
    best = np.zeros((3, c), dtype=np.int64)
    for i in range(1, int(g.m.max(initial=0)) + 1):
        row = _dp_row(g, i, x, w, y, pen, h1, h2)
        if rows is not None:
            rows[i] = row[0]
        top = row.max(axis=1)
        up = top > best[0]
        best[0, up] = top[up]
        best[1, up] = i
        best[2, up] = i + g.lo[up] + row.argmax(axis=1)[up]
        h2, h1 = h1, h2
        h1[:, :width] = row
        h1[:, width] = 0
    return best


def _dp_row(
    g: _Group,
    i: int,
    x: np.ndarray,
    w: np.ndarray,
    y: np.ndarray,
    pen: Penalties,
    h1: np.ndarray,
    h2: np.ndarray,
) -> np.ndarray:
    """Row `i` of every band of the group, from rows i - 1 (`h1`) and i - 2 (`h2`)."""
    sub, gap, swap = pen
    width = h1.shape[1] - 1
    b = np.arange(width, dtype=np.int64)
    j = i + g.lo[:, None] + b[None, :]
    valid = (b[None, :] <= (g.hi - g.lo)[:, None]) & (j >= 1) & (j <= g.length[:, None])
    valid &= (i <= g.m)[:, None]
    last = max(len(y) - 1, 0)
    yv = y[np.clip(g.base[:, None] + j - 1, 0, last)]
    xi, wi = x[:, i - 1 : i], w[:, i - 1 : i]
    d = h1[:, :width] + np.where(valid & (yv == xi), wi, -sub)
    np.maximum(d, h1[:, 1:] - gap, out=d)
    if i >= 2:
        yp = y[np.clip(g.base[:, None] + j - 2, 0, last)]
        sw = valid & (j >= 2) & (x[:, i - 2 : i - 1] == yv) & (xi == yp) & (yp != yv)
        d = np.where(sw, np.maximum(d, h2[:, :width] + w[:, i - 2 : i - 1] + wi - swap), d)
    p = np.where(valid, np.maximum(d, 0), 0)
    # NOTE: the corpus-gap chain H(i, j-1) - gap, unrolled: max over b' < b of
    # p[b'] - gap * (b - b'), a running maximum (exact in integers).
    gb = gap * b
    run = np.maximum.accumulate(p + gb, axis=1)
    left = np.full_like(p, np.iinfo(np.int64).min // 2)
    left[:, 1:] = run[:, :-1] - gb[1:]
    return np.where(valid, np.maximum(p, left), 0)
