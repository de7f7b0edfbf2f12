"""The streaming match engine: corpus chunks in, per-example matches and exact runs out.

Each chunk (about ``chunk_bytes`` of whole documents from one source) goes through:

1. token and n-gram hashes for the whole chunk (:class:`~contam_cli.text.Tokenizer`);
2. membership against the eval index (Bloom filter, then the exact search in one bucket);
3. every hit joined to every (example, position) where that n-gram occurs in the eval set;
4. exact runs: a hit at (example position i, document position c) continues a hit at
   (i - 1, c - 1) in the same document, so runs are maximal segments of consecutive i on one
   diagonal ``c - i`` of one document -- a verbatim copy, never chained across documents;
5. the longest run per example is offered to the :class:`Accumulator`, which keeps the best per
   (source, example) with a deterministic tie-break (earliest document, earliest position) and
   takes the evidence text from the document while it is still in memory (its character
   offsets come from the word spans the tokenizer found, see ``_RunOffsets``).

Documents never span chunks, so chunking cannot change results; accumulators merge in any order,
so shards can run in any process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from contam_cli.engine.eval_index import EvalIndex
from contam_cli.io.model import Record
from contam_cli.text import Tokenizer, TokenStream, WordLayout

__all__ = [
    "ChunkHits",
    "ChunkRuns",
    "DocBatch",
    "ORDER_FILE_SHIFT",
    "RangePlaces",
    "best_runs",
    "iter_batches",
    "match_chunk",
    "match_window",
]

#: Documents are ordered by (file ordinal, position in file); a file holds < 2**40 bytes of records.
ORDER_FILE_SHIFT = 40


class RangePlaces(NamedTuple):
    """Where the documents of a batch from one byte range of a file sit in that range."""

    key: tuple[str, int]
    """The range: (path, start offset)."""
    lines: Sequence[int]
    """Each document's line, counted from the range's first line (1-based)."""
    records: Sequence[int]
    """Each document's ordinal among the range's records (0-based)."""

    def subset(self, docs: list[int]) -> RangePlaces:
        return RangePlaces(self.key, [self.lines[d] for d in docs], [self.records[d] for d in docs])


@dataclass
class DocBatch:
    """Whole documents of one source, ready to tokenize as one chunk."""

    source: int
    raw: Sequence[bytes]
    """Each document's text, UTF-8 (a list, or :class:`~contam_cli.io.packed.PackedTexts`)."""
    order: np.ndarray
    """Each document's place in the source (file ordinal, then position): ties go to the lowest."""
    record: Callable[[int], Record]
    """Document d's full Record, built on demand (only documents that become evidence need it)."""
    ranged: RangePlaces | None = None
    """For a byte-range shard: each document's range-relative line and record ordinal."""

    def subset(self, docs: list[int]) -> DocBatch:
        """The batch of documents `docs` (indices) alone."""
        record = self.record
        return DocBatch(
            self.source,
            [self.raw[d] for d in docs],
            self.order[docs],
            lambda i: record(docs[i]),
            None if self.ranged is None else self.ranged.subset(docs),
        )

    def window(self, raw: bytes) -> DocBatch:
        """This batch of one document with `raw`, a window of it, as its text."""
        return DocBatch(self.source, [raw], self.order, self.record, self.ranged)


def iter_batches(
    records: Iterable[tuple[Record, int]], source: int, chunk_bytes: int
) -> Iterator[DocBatch]:
    """Group (record, order) pairs into batches of about `chunk_bytes` of text."""
    recs: list[Record] = []
    raws: list[bytes] = []
    orders: list[int] = []
    size = 0
    for rec, order in records:
        raw = rec.text.encode("utf-8", "surrogatepass")
        recs.append(rec)
        raws.append(raw)
        orders.append(order)
        size += len(raw) + 1
        if size >= chunk_bytes:
            yield DocBatch(source, raws, np.array(orders, dtype=np.int64), recs.__getitem__)
            recs, raws, orders, size = [], [], [], 0
    if recs:
        yield DocBatch(source, raws, np.array(orders, dtype=np.int64), recs.__getitem__)


@dataclass
class ChunkRuns:
    """The best run per example found in one chunk (parallel arrays)."""

    example: np.ndarray
    length: np.ndarray
    doc: np.ndarray
    doc_pos: np.ndarray
    eval_pos: np.ndarray
    words: WordLayout | None = None
    """The chunk's words, when evidence offsets can come from them (see :class:`_RunOffsets`)."""
    doc_first: np.ndarray | None = None
    """With `words`: each document's first token in the chunk's token stream."""


@dataclass
class ChunkHits:
    """Raw matches of one chunk: matched gram indices and the hit windows per document."""

    grams: np.ndarray
    doc: np.ndarray
    doc_pos: np.ndarray


def match_chunk(
    index: EvalIndex, tk: Tokenizer, raw: Sequence[bytes]
) -> tuple[ChunkHits, ChunkRuns] | None:
    """Find every eval n-gram in `raw` documents and the best exact run per example."""
    return match_window(index, tk, raw, tk.tokens(raw))


def match_window(
    index: EvalIndex, tk: Tokenizer, raw: Sequence[bytes] | bytes, stream: TokenStream
) -> tuple[ChunkHits, ChunkRuns] | None:
    """:func:`match_chunk` of documents `raw` (or one document's bytes) already tokenized."""
    if isinstance(raw, bytes):
        raw = [raw]
    grams, win = tk.ngrams(stream, index.n)
    hit, uidx = index.lookup(grams, accel=tk.kernels is not None)
    if len(hit) == 0:
        return None
    k = win[hit]
    # NOTE: tokens are in document order: each document's first token by binary search, not a
    # count over every token of the chunk.
    doc_first = np.searchsorted(stream.doc, np.arange(len(raw)))
    doc = stream.doc[k]
    pos = k - doc_first[doc]
    hits = ChunkHits(uidx, doc, pos)
    runs = best_runs(index, uidx, doc, pos)
    if stream.words is not None:
        runs.words, runs.doc_first = stream.words, doc_first
    return hits, runs


def best_runs(index: EvalIndex, uidx: np.ndarray, doc: np.ndarray, pos: np.ndarray) -> ChunkRuns:
    # Join each hit to every place its n-gram has in the eval set.
    j, rep = index.occurrences_of(uidx)
    d, c = (doc, pos) if rep is None else (doc[rep], pos[rep])
    e = index.occ_ex[j].astype(np.int64)
    i = index.occ_pos[j].astype(np.int64)
    # Runs: consecutive (e, d, diagonal c - i, i), one step of i (and c) at a time.
    start, e, d, c, i = run_starts(e, d, c, i)
    length = np.diff(np.append(start, len(e))) + index.n - 1
    se, sd, sc, si = e[start], d[start], c[start], i[start]
    # Best per example: longest, then earliest document, then earliest position.
    o2 = np.lexsort((sc, sd, -length, se))
    first = o2[np.flatnonzero(np.r_[True, se[o2][1:] != se[o2][:-1]])]
    return ChunkRuns(se[first], length[first], sd[first], sc[first], si[first])


def run_starts(
    e: np.ndarray, d: np.ndarray, c: np.ndarray, i: np.ndarray, keyed: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where each run starts among the places (example `e`, position `i`; document `d`,
    position `c`) sorted by (e, d, c - i, i), and the places so sorted (e, d, c, i); `keyed`
    False: always by lexsort (what the one-key sort must equal)."""
    diag = c - i
    low = int(diag.min(initial=0))
    spans = [
        int(e.max(initial=0)) + 1,
        int(d.max(initial=0)) + 1,
        int(diag.max(initial=0)) - low + 1,
    ]
    spans.append(int(i.max(initial=0)) + 2)  # NOTE: + 2: the largest i plus one never carries
    if keyed and float(np.prod(spans, dtype=np.float64)) < 2.0**62:
        # NOTE: the four as one int64 key (unique: no two places share all four), sorted once;
        # a run is then a run of consecutive keys (i's span leaves one value unused above the
        # largest, so i + 1 never carries into the diagonal).
        key = ((e * spans[1] + d) * spans[2] + (diag - low)) * spans[3] + i
        o = np.argsort(key)
        key = key[o]
        brk = np.ones(len(key), dtype=bool)
        brk[1:] = key[1:] != key[:-1] + 1
        return np.flatnonzero(brk), e[o], d[o], c[o], i[o]
    o = np.lexsort((i, diag, d, e))
    e, i, d, c, diag = e[o], i[o], d[o], c[o], diag[o]
    brk = np.ones(len(e), dtype=bool)
    brk[1:] = (
        (e[1:] != e[:-1]) | (d[1:] != d[:-1]) | (diag[1:] != diag[:-1]) | (i[1:] != i[:-1] + 1)
    )
    return np.flatnonzero(brk), e, d, c, i
