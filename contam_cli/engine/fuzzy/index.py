"""FuzzyIndex: the eval side of the fuzzy detector (tokens, rarity weights, seeds), built once.

Like the exact :class:`~contam_cli.engine.eval_index.EvalIndex`, it holds only the eval set, so
memory grows with the eval set and never with the corpus:

* every example's token hashes and each token's weight (its rarity among the eval examples);
* the seeds: sorted distinct pair hashes (see :mod:`~contam_cli.engine.fuzzy.seeds`), with CSR
  places (example, position of the pair's first token), a blocked Bloom filter and a radix
  directory, the same membership structure the exact index uses for n-grams.

Weights come from document frequency among the eval examples, the only text that is known
before the corpus is streamed (a corpus-side statistic would make results depend on the order
and chunking of the corpus): ``w = clip(ln((N+1)/(df+0.5)) / ln((N+1)/1.5), floor, 1)``, so a
token found in one example weighs 1 and one found in every example weighs about the floor.
With very few examples every token weighs about the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.engine.accel import index_kernels
from contam_cli.engine.bloom import bloom_log2, bloom_words
from contam_cli.engine.eval_index import _batches, _directory
from contam_cli.engine.fuzzy.config import SCALE, FuzzyConfig
from contam_cli.engine.fuzzy.seeds import pair_hashes
from contam_cli.errors import UsageError
from contam_cli.text import DEFAULT_NORM, NormConfig, Tokenizer

__all__ = ["FuzzyIndex", "build_fuzzy_index", "index_size"]


@dataclass(frozen=True, eq=False)
class FuzzyIndex:
    """An eval set ready for the fuzzy detector: tokens, weights and seeds."""

    config: FuzzyConfig
    norm: NormConfig
    n_tokens: np.ndarray
    """int64 token count of each example."""
    tok_ptr: np.ndarray
    """Example e's tokens are ``tokens[tok_ptr[e]:tok_ptr[e + 1]]`` (int64, E + 1)."""
    tokens: np.ndarray
    """uint64 token hashes of every example, one after the other."""
    weights: np.ndarray
    """int32 weight of each token of `tokens`, in units of 1/SCALE."""
    total_weight: np.ndarray
    """int64 sum of each example's weights: an alignment of the whole example scores this."""
    need: np.ndarray
    """int64 seeds a candidate of each example needs (in two adjacent bins of diagonals)."""
    n_seeds: np.ndarray
    """int64 seed places of each example (0 for unscorable examples)."""
    pairs: np.ndarray
    """Sorted distinct uint64 seed hashes."""
    occ_ptr: np.ndarray
    """Seed u occurs at places ``occ_ptr[u]:occ_ptr[u + 1]`` of occ_ex / occ_pos (int64)."""
    occ_ex: np.ndarray
    """int32 example of each place."""
    occ_pos: np.ndarray
    """int32 position, in its example, of the place's first token."""
    words: np.ndarray
    """Blocked Bloom filter over `pairs` (as in the exact index)."""
    words_log2: int
    directory: np.ndarray
    dir_log2: int

    @property
    def n_examples(self) -> int:
        return len(self.n_tokens)

    @property
    def scorable(self) -> np.ndarray:
        """Examples long enough to score (``config.min_tokens``)."""
        return self.n_tokens >= self.config.min_tokens

    def example(self, e: int) -> tuple[np.ndarray, np.ndarray]:
        """Example `e`'s token hashes and their weights."""
        a, b = int(self.tok_ptr[e]), int(self.tok_ptr[e + 1])
        return self.tokens[a:b], self.weights[a:b]


def build_fuzzy_index(
    texts: Iterable[str],
    n_examples: int | None = None,
    norm: NormConfig = DEFAULT_NORM,
    tokenizer: Tokenizer | None = None,
    config: FuzzyConfig | None = None,
) -> FuzzyIndex:
    """Index the eval texts (example ``e`` is the ``e``-th text) for the fuzzy detector.

    `texts` is consumed once, a batch at a time. `n_examples`, when given, is checked against
    the number of texts read (a generator's length is known to the caller, not here). `norm`
    applies when no `tokenizer` is given (else the tokenizer's own).
    """
    cfg = config or FuzzyConfig()
    tk = tokenizer or Tokenizer(norm)
    tokens, n_tok = _tokenize(texts, tk)
    if n_examples is not None and n_examples != len(n_tok):
        raise UsageError(f"expected {n_examples} eval texts, read {len(n_tok)}")
    ptr = np.zeros(len(n_tok) + 1, dtype=np.int64)
    np.cumsum(n_tok, out=ptr[1:])
    blocks = _blocks(ptr)
    weights = _weights(tokens, ptr, blocks, cfg.weight_floor)
    cum = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(weights, out=cum[1:])
    total = cum[ptr[1:]] - cum[ptr[:-1]]
    scorable = n_tok >= cfg.min_tokens
    seeds = [_seeds(tokens, weights, ptr, block, scorable, cfg) for block in blocks]
    h, s_ex, s_pos = (np.concatenate(c) for c in zip(*seeds)) if seeds else (_EMPTY,) * 3
    pairs, occ_ptr, occ_ex, occ_pos = _places(h.astype(np.uint64), s_ex, s_pos, cfg.max_places)
    n_seeds = np.bincount(occ_ex, minlength=len(n_tok)).astype(np.int64)
    need = np.clip(np.ceil(cfg.seed_fraction * n_seeds), cfg.min_seeds, cfg.max_need)
    k = index_kernels() if tk.kernels is not None else None
    log2 = bloom_log2(len(pairs))
    return FuzzyIndex(
        config=cfg,
        norm=tk.norm,
        n_tokens=n_tok,
        tok_ptr=ptr,
        tokens=tokens,
        weights=weights,
        total_weight=total,
        need=need.astype(np.int64),
        n_seeds=n_seeds,
        pairs=pairs,
        occ_ptr=occ_ptr,
        occ_ex=occ_ex,
        occ_pos=occ_pos,
        words=bloom_words(pairs, log2, k),
        words_log2=log2,
        **_directory(pairs, k),
    )


def _tokenize(texts: Iterable[str], tk: Tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Every text's token hashes, one after the other, and each text's token count."""
    parts, counts = [], []
    for batch in _batches(texts):
        stream = tk.tokens(batch)
        parts.append(stream.hashes)
        counts.append(np.bincount(stream.doc, minlength=len(batch)))
    n_tok = np.concatenate(counts).astype(np.int64) if counts else np.zeros(0, np.int64)
    tokens = np.concatenate(parts).astype(np.uint64) if parts else np.zeros(0, np.uint64)
    return tokens, n_tok


#: Tokens of the examples treated together while indexing: bounded temporaries.
_BLOCK_TOKENS = 1 << 20
_EMPTY = np.zeros(0, dtype=np.int64)


def _blocks(ptr: np.ndarray) -> list[tuple[int, int]]:
    """Ranges of whole examples [e0, e1) holding about _BLOCK_TOKENS tokens each."""
    cuts = np.searchsorted(ptr, np.arange(_BLOCK_TOKENS, int(ptr[-1]), _BLOCK_TOKENS))
    bounds = np.unique(np.r_[0, cuts, len(ptr) - 1]).tolist()
    return list(zip(bounds[:-1], bounds[1:]))


def _weights(
    tokens: np.ndarray, ptr: np.ndarray, blocks: list[tuple[int, int]], floor: float
) -> np.ndarray:
    """Each token's weight from its document frequency among the examples (int32 units)."""
    n = len(ptr) - 1
    if len(tokens) == 0:
        return np.zeros(0, dtype=np.int32)
    distinct = []  # each example's distinct tokens, block by block
    for e0, e1 in blocks:
        t = tokens[ptr[e0] : ptr[e1]]
        ex = np.repeat(np.arange(e0, e1), np.diff(ptr[e0 : e1 + 1]))
        o = np.lexsort((t, ex))
        st, se = t[o], ex[o]
        first = np.ones(len(o), dtype=bool)
        first[1:] = (st[1:] != st[:-1]) | (se[1:] != se[:-1])
        distinct.append(st[first])
    vocab, df = np.unique(np.concatenate(distinct), return_counts=True)
    df_tok = df[np.searchsorted(vocab, tokens)]
    # NOTE: rounded to 1e-9 before scaling, so that a last-bit difference in `log` between
    # machines cannot move a weight to the next unit.
    idf = np.round(np.log((n + 1) / (df_tok + 0.5)) / np.log((n + 1) / 1.5), 9)
    return np.rint(np.clip(idf, floor, 1.0) * SCALE).astype(np.int32)


def _seeds(
    tokens: np.ndarray,
    weights: np.ndarray,
    ptr: np.ndarray,
    block: tuple[int, int],
    scorable: np.ndarray,
    cfg: FuzzyConfig,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair hash, example, position) of every seed of the scorable examples of `block`."""
    e0, e1 = block
    base = int(ptr[e0])
    t, wt = tokens[base : ptr[e1]], weights[base : ptr[e1]]
    ex = np.repeat(np.arange(e0, e1), np.diff(ptr[e0 : e1 + 1]))
    cols: list[list[np.ndarray]] = [[], [], [], []]
    for g in range(1, cfg.max_gap + 1):
        if len(t) <= g:
            break
        i = np.flatnonzero((ex[:-g] == ex[g:]) & scorable[ex[:-g]])
        wa, wb = wt[i].astype(np.int64), wt[i + g].astype(np.int64)
        for col, value in zip(cols, (pair_hashes(t, g)[i], i, wa + wb)):
            col.append(value)
        cols[3].append(np.full(len(i), g, dtype=np.int64))
    if not cols[0]:
        return _EMPTY.astype(np.uint64), _EMPTY, _EMPTY
    h, i, both, gap = (np.concatenate(c) for c in cols)
    e = ex[i]
    keep = both >= int(round(cfg.seed_weight * SCALE))
    keep |= _heaviest(e - e0, i, both, gap, keep, cfg.min_pairs, e1 - e0)
    pos = i[keep] + base - ptr[e[keep]]
    return h[keep], e[keep].astype(np.int32), pos.astype(np.int32)


def _heaviest(
    e: np.ndarray,
    i: np.ndarray,
    both: np.ndarray,
    gap: np.ndarray,
    keep: np.ndarray,
    min_pairs: int,
    n: int,
) -> np.ndarray:
    """The pairs, not kept yet, that bring each example up to `min_pairs` seeds: its heaviest
    (sum of both weights), ties to the earliest position and the smallest gap."""
    deficit = np.maximum(min_pairs - np.bincount(e[keep], minlength=n), 0)
    rest = np.flatnonzero(~keep & (deficit[e] > 0))
    out = np.zeros(len(e), dtype=bool)
    if len(rest) == 0:
        return out
    o = rest[np.lexsort((gap[rest], i[rest], -both[rest], e[rest]))]
    eo = e[o]
    group_start = np.flatnonzero(np.r_[True, eo[1:] != eo[:-1]])
    rank = np.arange(len(o)) - np.repeat(group_start, np.diff(np.r_[group_start, len(o)]))
    out[o[rank < deficit[eo]]] = True
    return out


def _places(
    h: np.ndarray, ex: np.ndarray, pos: np.ndarray, max_places: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct seeds and their CSR places in (example, position) order, duplicates and hot
    seeds (more than `max_places` places) left out."""
    o = np.lexsort((pos, ex, h))
    h, ex, pos = h[o], ex[o], pos[o]
    new = np.ones(len(h), dtype=bool)
    new[1:] = (h[1:] != h[:-1]) | (ex[1:] != ex[:-1]) | (pos[1:] != pos[:-1])
    h, ex, pos = h[new], ex[new], pos[new]
    starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]]) if len(h) else np.zeros(0, np.int64)
    counts = np.diff(np.r_[starts, len(h)])
    cold = counts <= max_places
    keep = np.repeat(cold, counts)
    h, ex, pos = h[keep], ex[keep], pos[keep]
    ptr = np.zeros(int(cold.sum()) + 1, dtype=np.int64)
    np.cumsum(counts[cold], out=ptr[1:])
    return h[ptr[:-1]], ptr, ex.astype(np.int32), pos.astype(np.int32)


def index_size(index: FuzzyIndex) -> int:
    """Bytes held by the index's arrays (for reports and memory checks)."""
    arrays: list[Any] = [v for v in vars(index).values() if isinstance(v, np.ndarray)]
    return int(sum(a.nbytes for a in arrays))
