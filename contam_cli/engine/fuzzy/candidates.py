"""Candidate generation: seeds of one chunk, gathered on bands of diagonals, become candidates.

Each seed hit joins a corpus pair to its places in the eval set: (example e, eval position i)
against (document d, document position c), on the diagonal ``c - i``. A verbatim copy keeps
every seed on one diagonal; substitutions remove seeds, swaps and small insertions move them by
a few diagonals. Seeds are counted per (e, d, bin of ``band`` diagonals); a window of two
adjacent bins holding at least the example's ``need`` seeds is a candidate, consecutive
candidate windows of one (e, d) merge, and the alignment band reaches ``slack`` diagonals past
the run's lowest and highest seed, clipped to the cells that exist, and cut along a fixed grid of
``max_band`` diagonals (overlapping by a quarter) so one document holding many copies cannot
make one huge band.

Every step only counts seeds that lie in one document, so documents are independent of each
other and of the chunking; and fewer seeds can only give fewer or narrower bands, never new
ones, so replacing corpus words cannot raise a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from contam_cli.engine.bloom import bloom_test
from contam_cli.engine.fuzzy.align import Candidates
from contam_cli.engine.fuzzy.index import FuzzyIndex
from contam_cli.engine.fuzzy.seeds import pair_hashes
from contam_cli.text.accel import load

__all__ = ["chunk_candidates", "fuzzy_kernels", "pair_hits"]


def fuzzy_kernels() -> ModuleType | None:
    """The fuzzy detector's compiled kernels, or None when numba is missing or disabled."""
    return load("contam_cli.engine.fuzzy._kernels")


def chunk_candidates(
    index: FuzzyIndex,
    tokens: np.ndarray,
    doc: np.ndarray,
    doc_first: np.ndarray,
    doc_len: np.ndarray,
    kernels: ModuleType | None = None,
) -> Candidates:
    """The candidates of one chunk (token hashes `tokens`, each token's document `doc`); the
    candidates of one document in (example, band) order."""
    if kernels is not None:
        ix = index
        seeds, starts = kernels.pair_hits(
            tokens,
            doc,
            ix.config.max_gap,
            ix.words,
            64 - ix.words_log2,
            ix.pairs,
            ix.directory,
            64 - ix.dir_log2,
        )
    else:
        seeds, starts = pair_hits(index, tokens, doc)
    parts = [
        _runs(index, _bins(index, *p, doc, doc_first)) for p in _slices(index, seeds, starts, doc)
    ]
    run_e, run_d, lo_seed, hi_seed = (np.concatenate(c) for c in zip(*parts))
    cfg = index.config
    m = index.n_tokens[run_e]
    lo = np.maximum(lo_seed - cfg.slack, 1 - m)
    hi = np.minimum(hi_seed + cfg.slack, doc_len[run_d] - 1)
    ok = lo <= hi
    run_e, run_d, lo, hi = _pieces(run_e[ok], run_d[ok], lo[ok], hi[ok], cfg.max_band)
    return Candidates(run_e, run_d, lo, hi, doc_first[run_d], doc_len[run_d])


@dataclass(frozen=True, slots=True)
class Bins:
    """Seeds counted per (example, document, bin of diagonals): parallel int64 arrays."""

    example: np.ndarray
    doc: np.ndarray
    bin: np.ndarray
    count: np.ndarray
    lowest: np.ndarray
    """The lowest diagonal of a seed in the bin."""
    highest: np.ndarray


def pair_hits(
    index: FuzzyIndex, tokens: np.ndarray, doc: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of a chunk that is an eval seed: (seed index, first token's chunk position).

    `tokens` are the chunk's token hashes and `doc` each token's document. The numpy
    definition; the compiled kernel ``pair_hits`` finds the same hits in another order.
    """
    seeds, starts = [], []
    for g in range(1, index.config.max_gap + 1):
        if len(tokens) <= g:
            break
        h = pair_hashes(tokens, g)
        ok = np.flatnonzero((doc[:-g] == doc[g:]) & bloom_test(index.words, index.words_log2, h))
        found = np.searchsorted(index.pairs, h[ok])
        found[found == len(index.pairs)] = 0
        exact = index.pairs[found] == h[ok]
        seeds.append(found[exact])
        starts.append(ok[exact])
    if not seeds:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(seeds).astype(np.int64), np.concatenate(starts).astype(np.int64)


#: Seed places joined at once (about 50 bytes each): more are joined a slice of whole
#: documents at a time, so a chunk full of seeds cannot take much memory.
MAX_PLACES = 1 << 22


def _slices(
    index: FuzzyIndex, seeds: np.ndarray, starts: np.ndarray, doc: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The hits in slices of whole documents holding at most MAX_PLACES places each (one
    document may hold more); documents are independent, so slicing changes no result."""
    places = index.occ_ptr[seeds + 1] - index.occ_ptr[seeds]
    total = int(places.sum())
    if total <= MAX_PLACES:
        return [(seeds, starts)]
    o = np.argsort(starts, kind="stable")
    seeds, starts, places = seeds[o], starts[o], places[o]
    hit_doc = doc[starts]
    cum = np.cumsum(places)
    # NOTE: cut where a document begins, after each multiple of MAX_PLACES.
    new_doc = np.flatnonzero(np.r_[True, hit_doc[1:] != hit_doc[:-1]])
    want = np.searchsorted(
        cum[new_doc] - places[new_doc], np.arange(1, total // MAX_PLACES + 1) * MAX_PLACES
    )
    cuts = np.unique(new_doc[np.clip(want, 0, len(new_doc) - 1)])
    bounds = [0, *cuts[cuts > 0].tolist(), len(seeds)]
    return [(seeds[a:b], starts[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if a < b]


def _bins(
    index: FuzzyIndex,
    seeds: np.ndarray,
    starts: np.ndarray,
    doc: np.ndarray,
    doc_first: np.ndarray,
) -> Bins:
    """Seeds per (example, document, bin of diagonals), sorted by those keys: the count and the
    lowest and highest diagonal in each bin."""
    lo = index.occ_ptr[seeds]
    cnt = index.occ_ptr[seeds + 1] - lo
    total = int(cnt.sum())
    rep = np.repeat(np.arange(len(seeds)), cnt)
    j = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)
    c = starts[rep]
    e = index.occ_ex[j].astype(np.int64)
    d = doc[c]
    diag = c - doc_first[d] - index.occ_pos[j]
    b = np.floor_divide(diag, index.config.band)
    o = _group_order(e, d, b, index.n_examples, len(doc_first))
    e, d, b, diag = e[o], d[o], b[o], diag[o]
    new = np.ones(len(e), dtype=bool)
    new[1:] = (e[1:] != e[:-1]) | (d[1:] != d[:-1]) | (b[1:] != b[:-1])
    first = np.flatnonzero(new)
    count = np.diff(np.append(first, len(e)))
    if len(first) == 0:
        return Bins(e, d, b, count, diag, diag)
    lowest = np.minimum.reduceat(diag, first)
    highest = np.maximum.reduceat(diag, first)
    return Bins(e[first], d[first], b[first], count, lowest, highest)


def _group_order(
    e: np.ndarray, d: np.ndarray, b: np.ndarray, n_examples: int, n_docs: int
) -> np.ndarray:
    """An order of the seeds that sorts them by (example, document, bin); seeds with the same
    keys come in any order (only their count and extremes are used)."""
    if len(b) == 0:
        return np.zeros(0, dtype=np.int64)
    b0 = int(b.min())
    span = int(b.max()) - b0 + 1
    if n_examples * n_docs * span >= 1 << 62:  # NOTE: one int64 key would overflow
        return np.lexsort((b, d, e))
    # NOTE: one int64 key sorts about ten times faster than lexsort over three keys.
    return np.argsort((e * n_docs + d) * span + (b - b0))


def _runs(index: FuzzyIndex, g: Bins) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Runs of candidate windows: (example, document, lowest and highest seed diagonal of the
    run's bins)."""
    e, d, b, n = g.example, g.doc, g.bin, g.count
    same = np.zeros(len(e), dtype=bool)  # the next bin of the same (e, d) follows this one
    same[:-1] = (e[1:] == e[:-1]) & (d[1:] == d[:-1]) & (b[1:] == b[:-1] + 1)
    window = n.copy()
    window[:-1] += np.where(same[:-1], n[1:], 0)
    q = np.flatnonzero(window >= index.need[e])
    start = np.ones(len(q), dtype=bool)
    # NOTE: windows that touch (the next starts at most two bins on) make one run.
    start[1:] = (e[q][1:] != e[q][:-1]) | (d[q][1:] != d[q][:-1]) | (b[q][1:] > b[q][:-1] + 2)
    first = q[start]
    last = q[np.append(np.flatnonzero(start)[1:], len(q))[: len(first)] - 1]
    last = last + same[last]  # a window's second bin
    # Lowest and highest diagonal over each run's bins [first, last] (disjoint ranges).
    bounds = np.stack([first, last + 1], axis=1).ravel()
    lo = np.minimum.reduceat(np.append(g.lowest, 0), bounds)[::2] if len(first) else first
    hi = np.maximum.reduceat(np.append(g.highest, 0), bounds)[::2] if len(first) else first
    return e[first], d[first], lo, hi


def _pieces(
    e: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bands cut along the fixed grid of `size` diagonals, each piece reaching a quarter of
    `size` into its neighbours (an alignment spread over fewer diagonals stays whole)."""
    over = size // 4
    q0 = np.floor_divide(lo, size)
    count = np.floor_divide(hi, size) - q0 + 1
    if (count == 1).all():
        return e, d, lo, hi
    rep = np.repeat(np.arange(len(e)), count)
    q = q0[rep] + np.arange(len(rep)) - np.repeat(np.cumsum(count) - count, count)
    lo2 = np.maximum(lo[rep], q * size - over)
    hi2 = np.minimum(hi[rep], (q + 1) * size - 1 + over)
    return e[rep], d[rep], lo2, hi2
