"""EvalIndex: every n-gram of the eval set, as sorted hashes with their (example, position) places.

The eval set is small and the corpus huge, so the eval side is indexed and the corpus streamed
past it: memory grows with the eval set, never with the corpus.

Layout (all numpy, CSR style):

* ``grams``   sorted distinct n-gram hashes (uint64, length M);
* ``occ_ptr`` / ``occ_ex`` / ``occ_pos``: gram ``u`` occurs in example ``occ_ex[j]`` at token
  position ``occ_pos[j]`` for ``j`` in ``occ_ptr[u]:occ_ptr[u+1]``;
* ``ex_ptr`` / ``ex_gram``: example ``e``'s distinct grams are ``ex_gram[ex_ptr[e]:ex_ptr[e+1]]``;
* a packed bitset over the top bits of every gram, a cache-resident prefilter that rejects almost
  every corpus n-gram before the exact binary search.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.ngrams import Tokenizer
from contam_cli.text import DEFAULT_NORM, NormConfig

__all__ = ["EvalIndex", "build_eval_index"]

_BATCH_BYTES = 1 << 20


@dataclass(frozen=True, eq=False)
class EvalIndex:
    """The n-grams of an eval set, ready for membership tests and run finding."""

    n: int
    norm: NormConfig
    n_tokens: np.ndarray
    """int64 token count of each example."""
    grams: np.ndarray
    occ_ptr: np.ndarray
    occ_ex: np.ndarray
    occ_pos: np.ndarray
    ex_ptr: np.ndarray
    ex_gram: np.ndarray
    bits: np.ndarray
    """Packed prefilter bitset (uint8) over the top `bits_log2` bits of each gram."""
    bits_log2: int
    digests: list[bytes]
    """Per example, a digest of its normalized tokens (for content fingerprints)."""
    directory: np.ndarray
    """Start in `grams` of each bucket of grams sharing their top `dir_log2` bits (+ the end)."""
    dir_log2: int

    @property
    def n_examples(self) -> int:
        return len(self.n_tokens)

    @property
    def total_ngrams(self) -> np.ndarray:
        """Distinct n-grams per example (0 for unscorable examples)."""
        return np.diff(self.ex_ptr)

    @property
    def scorable(self) -> np.ndarray:
        return self.n_tokens >= self.n

    def lookup(self, hashes: np.ndarray, kernels: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Positions in `hashes` that are eval n-grams, and the index into `grams` of each.

        `kernels`: the compiled kernels to use (see :mod:`contam_cli._accel`), or None for numpy.
        """
        if len(self.grams) == 0 or len(hashes) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        if kernels is not None:
            return kernels.lookup(
                hashes,
                self.bits,
                64 - self.bits_log2,
                self.grams,
                self.directory,
                64 - self.dir_log2,
            )
        top = hashes >> np.uint64(64 - self.bits_log2)
        maybe = (self.bits[top >> np.uint64(3)] >> (top & np.uint64(7)).astype(np.uint8)) & 1
        cand = np.flatnonzero(maybe)
        found = np.searchsorted(self.grams, hashes[cand])
        found[found == len(self.grams)] = 0
        exact = self.grams[found] == hashes[cand]
        return cand[exact], found[exact]


def build_eval_index(
    texts: Sequence[str],
    n: int,
    norm: NormConfig = DEFAULT_NORM,
    tokenizer: Tokenizer | None = None,
) -> EvalIndex:
    """Index the n-grams of every text in `texts` (example ``e`` is ``texts[e]``)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    tk = tokenizer or Tokenizer(norm)
    n_tokens, gram_parts, ex_parts, pos_parts = [], [], [], []
    digests: list[bytes] = []
    for first, batch in _batches(texts):
        stream = tk.tokens(batch)
        counts = np.bincount(stream.doc, minlength=len(batch))
        n_tokens.append(counts)
        digests.extend(_digests(stream.hashes, counts))
        grams, win = tk.ngrams(stream, n)
        doc = stream.doc[win]
        doc_first = np.cumsum(counts) - counts
        gram_parts.append(grams)
        ex_parts.append((doc + first).astype(np.int32))
        pos_parts.append((win - doc_first[doc]).astype(np.int32))
    grams = _cat(gram_parts, np.uint64)
    del gram_parts
    ex = _cat(ex_parts, np.int32)
    del ex_parts
    pos = _cat(pos_parts, np.int32)
    del pos_parts
    # NOTE: handed over in a list that _assemble empties, so that no caller variable keeps the
    # unsorted arrays alive while their sorted copies are built.
    arrays = [grams, ex, pos]
    del grams, ex, pos
    return _assemble(n, norm, _cat(n_tokens, np.int64), arrays, digests)


def _digests(hashes: np.ndarray, counts: np.ndarray) -> list[bytes]:
    """Per document, a digest of its normalized tokens (their hashes): identifies the text."""
    ends = np.cumsum(counts).tolist()
    data = hashes.astype("<u8").tobytes()
    return [
        hashlib.blake2b(data[8 * a : 8 * b], digest_size=16).digest()
        for a, b in zip([0, *ends[:-1]], ends)
    ]


def _batches(texts: Sequence[str]) -> list[tuple[int, list[str]]]:
    out: list[tuple[int, list[str]]] = []
    batch: list[str] = []
    first = size = 0
    for i, t in enumerate(texts):
        batch.append(t)
        size += len(t)
        if size >= _BATCH_BYTES:
            out.append((first, batch))
            batch, first, size = [], i + 1, 0
    if batch or not out:
        out.append((first, batch))
    return out


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def _assemble(
    n: int,
    norm: NormConfig,
    n_tokens: np.ndarray,
    arrays: list[np.ndarray],
    digests: list[bytes],
) -> EvalIndex:
    # NOTE: memory matters here (8M n-grams for 100k examples): 32-bit example/position arrays,
    # every temporary released as soon as it is used. The order of a gram's occurrences does not
    # matter (runs are found by sorting later), and sorted arrays need no hashing to find
    # distinct values.
    grams, ex, pos = arrays
    arrays.clear()
    order = np.argsort(grams)
    grams = grams[order]
    ex = ex[order]
    pos = pos[order]
    del order
    new = np.empty(len(grams), dtype=bool)
    new[:1] = True
    np.not_equal(grams[1:], grams[:-1], out=new[1:])
    first = np.flatnonzero(new)
    uniq = grams[first]
    del grams
    inverse = np.cumsum(new, dtype=np.int32)
    inverse -= 1
    del new
    occ_ptr = np.append(first, len(ex)).astype(np.int32)
    del first
    # Distinct (example, gram) pairs, grouped by example.
    m = max(1, len(uniq))
    pair = ex.astype(np.int64)
    pair *= m
    pair += inverse
    del inverse
    pair.sort()
    keep = np.empty(len(pair), dtype=bool)
    keep[:1] = True
    np.not_equal(pair[1:], pair[:-1], out=keep[1:])
    pair = pair[keep]
    del keep
    # Example e's keys lie in [e*m, (e+1)*m): its slice starts where e*m would go.
    ex_ptr = np.searchsorted(pair, np.arange(len(n_tokens) + 1, dtype=np.int64) * m)
    np.remainder(pair, m, out=pair)
    ex_gram = pair.astype(np.int32)
    del pair
    # About 16 bits per gram: ~6% of corpus n-grams pass the prefilter by chance.
    bits_log2 = int(min(30, max(20, np.ceil(np.log2(m * 16)))))
    return EvalIndex(
        n=n,
        norm=norm,
        n_tokens=n_tokens,
        grams=uniq,
        occ_ptr=occ_ptr,
        occ_ex=ex,
        occ_pos=pos,
        ex_ptr=ex_ptr,
        ex_gram=ex_gram,
        bits=_bitset(uniq, bits_log2),
        bits_log2=bits_log2,
        digests=digests,
        **_directory(uniq),
    )


def _directory(sorted_grams: np.ndarray) -> dict[str, Any]:
    """A radix directory over sorted grams: about four grams per bucket."""
    dir_log2 = int(min(26, max(4, np.ceil(np.log2(max(1, len(sorted_grams)) / 4)))))
    counts = np.bincount(
        (sorted_grams >> np.uint64(64 - dir_log2)).astype(np.int64), minlength=1 << dir_log2
    )
    directory = np.zeros(
        (1 << dir_log2) + 1, dtype=np.int32 if len(sorted_grams) < 2**31 else np.int64
    )
    np.cumsum(counts, out=directory[1:])
    return {"directory": directory, "dir_log2": dir_log2}


def _bitset(sorted_grams: np.ndarray, bits_log2: int) -> np.ndarray:
    """A packed bitset with the top `bits_log2` bits of every gram set."""
    bits = np.zeros(1 << (bits_log2 - 3), dtype=np.uint8)
    if len(sorted_grams) == 0:
        return bits
    top = sorted_grams >> np.uint64(64 - bits_log2)
    mask = np.left_shift(1, (top & np.uint64(7)).astype(np.uint8)).astype(np.uint8)
    top >>= np.uint64(3)
    byte = top.astype(np.int32)
    del top
    starts = np.flatnonzero(np.r_[True, byte[1:] != byte[:-1]])
    bits[byte[starts]] = np.bitwise_or.reduceat(mask, starts)
    return bits
