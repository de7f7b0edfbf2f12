"""EvalIndex: every n-gram of the eval set, as sorted hashes with their (example, position) places.

The eval set is small and the corpus huge, so the eval side is indexed and the corpus streamed
past it: memory grows with the eval set, never with the corpus.

Layout (all numpy, CSR style):

* ``grams``   sorted distinct n-gram hashes (uint64, length M);
* ``occ_ex`` / ``occ_pos``: gram ``u`` occurs in example ``occ_ex[j]`` at token position
  ``occ_pos[j]`` for the ``j`` of :meth:`EvalIndex.occ_range` (its occurrences, gram after gram,
  in (example, position) order; ``occ_multi`` / ``occ_extra`` say where each gram's begin, see
  :mod:`contam_cli.engine.occurrence_runs`);
  ``occ_first_bits`` marks (a bit per occurrence) the first of each (gram, example) pair;
* a blocked Bloom filter over every gram, a prefilter that rejects almost every corpus n-gram
  with one memory access, and a radix directory into ``grams`` for the exact test.

Built with the compiled kernels, the sort is a counting sort by top bits straight from the
per-batch arrays, so the build needs about twice the final arrays' memory at its peak.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from contam_cli.engine import occurrence_sort
from contam_cli.engine.accel import index_kernels
from contam_cli.engine.bloom import bloom_log2, bloom_test, bloom_words
from contam_cli.engine.occurrence_runs import compact, counts, from_counts, ranges
from contam_cli.engine.occurrence_sort import cat, ptr_dtype
from contam_cli.text import DEFAULT_NORM, NormConfig, Tokenizer
from contam_cli.text.fingerprint import content_digests

__all__ = ["COMPILED_SORT_MIN", "EvalIndex", "build_eval_index"]

_BATCH_BYTES = 1 << 20

COMPILED_SORT_MIN = 1 << 19
"""Eval n-grams from which the index's sort, filter and directory use the compiled kernels
(when the tokenizer does); below that numpy's sort costs less than loading those kernels from
their cache (about 60 ms in a fresh process). ``scripts/bench_index_sort.py EVAL`` (fresh
processes, two runs each way, alternating), built with the kernels against numpy: 1,000 examples
(63,427 n-grams) 78-81 ms against 12-14, 3,000 (192,543) 97-112 against 43-44, 10,000 (645,869)
148-171 against 140-175, 30,000 (1,946,562) 290-313 against 456-473."""


@dataclass(frozen=True, eq=False)
class EvalIndex:
    """The n-grams of an eval set, ready for membership tests and run finding."""

    n: int
    norm: NormConfig
    n_tokens: np.ndarray
    """int64 token count of each example."""
    grams: np.ndarray
    occ_multi: np.ndarray
    """Sorted int64 indices of the grams that occur more than once."""
    occ_extra: np.ndarray
    """int64, one longer: occurrences beyond one per gram, of the grams before each multi one."""
    occ_ex: np.ndarray
    occ_pos: np.ndarray
    """uint16 when no example has more than 65,536 n-grams, else int32."""
    occ_first_bits: np.ndarray
    """Per occurrence, one bit (``np.packbits``): whether it is the first of its (gram, example)
    pair (occurrences of a gram are in example order), so distinct n-grams are counted once."""
    total_ngrams: np.ndarray
    """int64 distinct n-grams of each example (0 for unscorable examples)."""
    words: np.ndarray
    """Blocked Bloom filter (uint64 words, four bits per gram) over the grams."""
    words_log2: int
    digests: list[bytes]
    """Per example, a digest of its normalized tokens (for content fingerprints)."""
    directory: np.ndarray
    """Start in `grams` of each bucket of grams sharing their top `dir_log2` bits (+ the end)."""
    dir_log2: int
    ignored_count: np.ndarray | None = None
    """int64 distinct n-grams of each example left out as boilerplate (None: none are); they are
    already taken out of `total_ngrams`."""

    @property
    def n_examples(self) -> int:
        return len(self.n_tokens)

    @property
    def ignored_ngrams(self) -> np.ndarray:
        """Per example, its distinct n-grams left out as boilerplate."""
        if self.ignored_count is None:
            return np.zeros(self.n_examples, dtype=np.int64)
        return self.ignored_count

    @property
    def scorable(self) -> np.ndarray:
        return self.n_tokens >= self.n

    @property
    def occ_first(self) -> np.ndarray:
        """`occ_first_bits` as one bool per occurrence."""
        return np.unpackbits(self.occ_first_bits, count=len(self.occ_ex)).astype(bool)

    def is_first(self, j: np.ndarray) -> np.ndarray:
        """Whether occurrences `j` are the first of their (gram, example) pair."""
        bits = self.occ_first_bits[j >> 3] >> (7 - (j & 7)).astype(np.uint8)
        return (bits & 1).astype(bool)

    def occ_range(self, uidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The index into the ``occ_*`` arrays of the first occurrence of each gram `uidx`, and
        how many occurrences it has (int64 arrays)."""
        return ranges(self.occ_multi, self.occ_extra, uidx)

    def occurrences(self, uidx: np.ndarray) -> np.ndarray:
        """Indices into the ``occ_*`` arrays of every occurrence of grams `uidx`, gram by gram."""
        return self.occurrences_of(uidx)[0]

    def occurrences_of(self, uidx: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`occurrences`, and for each occurrence its gram's place in `uidx` (None when
        every gram has one occurrence, the common case: then the two are aligned)."""
        lo, cnt = self.occ_range(uidx)
        if len(cnt) == 0 or int(cnt.max()) == 1:
            return lo, None
        rep = np.repeat(np.arange(len(uidx)), cnt)
        return np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum())), rep

    def distinct_per_example(self, gram_mask: np.ndarray) -> np.ndarray:
        """Per example, how many of its distinct grams are set in `gram_mask` (bool per gram)."""
        out = np.zeros(self.n_examples, dtype=np.int64)
        step = 1 << 18  # NOTE: bounded temporaries, however many grams matched
        for a in range(0, len(gram_mask), step):
            hits = np.flatnonzero(gram_mask[a : a + step]) + a
            if len(hits):
                j = self.occurrences(hits)
                j = j[self.is_first(j)]
                out += np.bincount(self.occ_ex[j], minlength=self.n_examples)
        return out

    def without(self, drop: np.ndarray, kernels: Any = None) -> EvalIndex:
        """This index with the grams set in `drop` (bool per gram) left out as boilerplate.

        A corpus never matches a dropped gram, so it counts neither toward overlap nor toward
        runs: the places of the kept grams keep their positions, and a run (consecutive eval
        positions on one diagonal) breaks where a dropped window was. Each example's dropped
        distinct grams move from `total_ngrams` to `ignored_count`. `kernels`: the compiled
        index kernels, to rebuild the filter faster (same result).

        >>> ix = build_eval_index(["a b c d e", "c d e f"], 3)
        >>> out = ix.without(ix.grams == ix.grams[0])
        >>> int(out.total_ngrams.sum() + out.ignored_ngrams.sum()) == int(ix.total_ngrams.sum())
        True
        """
        drop = np.asarray(drop, dtype=bool)
        if drop.shape != self.grams.shape:
            raise ValueError(f"drop has shape {drop.shape}, the index {self.grams.shape} grams")
        if not drop.any():
            return replace(self, ignored_count=self.ignored_ngrams)
        ignored = self.distinct_per_example(drop)
        keep = ~drop
        per_gram = counts(self.occ_multi, self.occ_extra, len(self.grams))
        kept_places = np.repeat(keep, per_gram)
        grams = self.grams[keep]
        multi, extra = from_counts(per_gram[keep])
        words_log2 = bloom_log2(len(grams))
        return replace(
            self,
            grams=grams,
            occ_multi=multi,
            occ_extra=extra,
            occ_ex=self.occ_ex[kept_places],
            occ_pos=self.occ_pos[kept_places],
            occ_first_bits=np.packbits(self.occ_first[kept_places]),
            total_ngrams=self.total_ngrams - ignored,
            words=bloom_words(grams, words_log2, kernels),
            words_log2=words_log2,
            ignored_count=self.ignored_ngrams + ignored,
            **_directory(grams, kernels),
        )

    def lookup(self, hashes: np.ndarray, accel: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Positions in `hashes` that are eval n-grams, and the index into `grams` of each.

        `accel`: use the compiled kernels (see :mod:`contam_cli.engine.accel`) when installed.
        """
        if len(self.grams) == 0 or len(hashes) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        kernels = index_kernels() if accel else None
        if kernels is not None:
            # NOTE: a filter within the L2 cache (a few thousand examples) gains nothing from
            # prefetching; a larger one (16 MB for 100,000 examples) probes 5x faster with it.
            ahead = kernels.PREFETCH_AHEAD if self.words.nbytes > 1 << 20 else 0
            bloom, radix = (self.words, 64 - self.words_log2), (self.directory, 64 - self.dir_log2)
            return kernels.lookup(hashes, *bloom, self.grams, *radix, ahead)
        cand = np.flatnonzero(bloom_test(self.words, self.words_log2, hashes))
        found = np.searchsorted(self.grams, hashes[cand])
        found[found == len(self.grams)] = 0
        exact = self.grams[found] == hashes[cand]
        return cand[exact], found[exact]


def build_eval_index(
    texts: Iterable[str | bytes],
    n: int,
    norm: NormConfig = DEFAULT_NORM,
    tokenizer: Tokenizer | None = None,
) -> EvalIndex:
    """Index the n-grams of every text in `texts` (example ``e`` is the ``e``-th text; str or
    UTF-8).

    `texts` is consumed once, a batch at a time: only the n-gram hashes are kept, so a generator
    can feed it without the eval texts ever being in memory together.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    tk = tokenizer or Tokenizer(norm)
    n_tokens: list[np.ndarray] = []
    parts: occurrence_sort.Parts = []
    spool: list[Any] = []
    digests: list[bytes] = []
    first = 0
    for batch in _batches(texts):
        stream = tk.tokens(batch)
        counts = np.bincount(stream.doc, minlength=len(batch))
        n_tokens.append(counts)
        digests.extend(content_digests(stream.hashes, counts))
        grams, _ = tk.ngrams(stream, n)
        # NOTE: every window inside a document is an n-gram, in order: a document of t tokens
        # has n-grams at positions 0 .. t-n, so (example, position) need not be stored.
        per_doc = np.maximum(counts - (n - 1), 0)
        parts.append((_spooled(grams, spool), per_doc, first))
        first += len(batch)
    spool.clear()
    n_tok = cat(n_tokens, np.int64)
    # NOTE: `parts` is handed over and emptied as it is used, so that no caller variable keeps
    # the unsorted arrays alive while the sorted ones are built.
    total = np.zeros(len(n_tok), dtype=np.int64)
    occurrences = sum(len(g) for g, _, _ in parts)
    compiled = tk.kernels is not None and occurrences >= COMPILED_SORT_MIN
    k = index_kernels() if compiled else None
    if k is not None:
        grams, ex, pos, ptr, occ_first = occurrence_sort.sort_compiled(parts, k, total)
    else:
        grams, ex, pos, ptr, occ_first = occurrence_sort.sort_numpy(parts, total)
    multi, extra = compact(ptr)
    del ptr
    words_log2 = bloom_log2(len(grams))
    return EvalIndex(
        n=n,
        norm=norm,
        n_tokens=n_tok,
        grams=grams,
        occ_multi=multi,
        occ_extra=extra,
        occ_ex=ex,
        occ_pos=pos,
        occ_first_bits=np.packbits(occ_first),
        total_ngrams=total,
        words=bloom_words(grams, words_log2, k),
        words_log2=words_log2,
        digests=digests,
        **_directory(grams, k),
    )


#: Grams per spool block: 32 MB, above the allocator's threshold for separate mappings.
_SPOOL_GRAMS = 1 << 22


def _spooled(grams: np.ndarray, spool: list[Any]) -> np.ndarray:
    """`grams` copied into the current large block of `spool` ([block, used]).

    NOTE: a batch's grams are about a megabyte, so kept as they are they would fill the heap
    with holes once freed, which a process never gives back (with the command line's allocator
    settings). Large blocks are separate mappings: freed after the sort, they return to the OS.
    """
    if len(grams) > _SPOOL_GRAMS // 4:
        return grams
    if not spool or spool[1] + len(grams) > _SPOOL_GRAMS:
        spool[:] = [occurrence_sort.scratch(_SPOOL_GRAMS, np.uint64), 0]
    block, used = spool
    view: np.ndarray = block[used : used + len(grams)]
    view[:] = grams
    spool[1] = used + len(grams)
    return view


def _batches(texts: Iterable[str | bytes]) -> Iterator[list[str | bytes]]:
    """`texts` in lists of about _BATCH_BYTES of text (at least one list, maybe empty)."""
    batch: list[str | bytes] = []
    size = 0
    empty = True
    for t in texts:
        batch.append(t)
        size += len(t)
        if size >= _BATCH_BYTES:
            yield batch
            batch, size, empty = [], 0, False
    if batch or empty:
        yield batch


def _directory(sorted_grams: np.ndarray, kernels: Any = None) -> dict[str, Any]:
    """A radix directory over sorted grams: about 16 grams (two cache lines) per bucket (NOTE:
    few probes pass the Bloom filter; 3 bytes a gram fewer, 50 MB for a million examples)."""
    dir_log2 = int(min(26, max(4, np.ceil(np.log2(max(1, len(sorted_grams)) / 16)))))
    directory: np.ndarray = np.zeros((1 << dir_log2) + 1, dtype=ptr_dtype(len(sorted_grams)))
    if kernels is not None:
        kernels.directory_fill(sorted_grams, 64 - dir_log2, directory)
    else:
        top = (sorted_grams >> np.uint64(64 - dir_log2)).astype(np.int64)
        directory[:] = np.searchsorted(top, np.arange(len(directory)))
    return {"directory": directory, "dir_log2": dir_log2}
