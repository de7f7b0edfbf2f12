"""The streaming match engine: corpus chunks in, per-example matches and exact runs out.

Each chunk (about ``chunk_bytes`` of whole documents from one source) goes through:

1. token and n-gram hashes for the whole chunk (:class:`~contam_cli.ngrams.Tokenizer`);
2. membership against the eval index (bitset prefilter, then exact binary search);
3. every hit joined to every (example, position) where that n-gram occurs in the eval set;
4. exact runs: a hit at (example position i, document position c) continues a hit at
   (i - 1, c - 1) in the same document, so runs are maximal segments of consecutive i on one
   diagonal ``c - i`` of one document -- a verbatim copy, never chained across documents;
5. the longest run per example is offered to the :class:`Accumulator`, which keeps the best per
   (source, example) with a deterministic tie-break (earliest document, earliest position) and
   takes the evidence text from the document while it is still in memory.

Documents never span chunks, so chunking cannot change results; accumulators merge in any order,
so shards can run in any process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from contam_cli.index import EvalIndex
from contam_cli.model import Record
from contam_cli.ngrams import Tokenizer
from contam_cli.text import token_range

__all__ = ["Evidence", "Accumulator", "DocBatch", "match_chunk", "iter_batches", "make_evidence"]

_NO_ORDER = np.iinfo(np.int64).max
#: Documents are ordered by (file ordinal, position in file); a file holds < 2**40 bytes of records.
ORDER_FILE_SHIFT = 40


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where an example's longest run sits in the corpus, and the text it matched."""

    source: str
    path: str | None
    line: int | None
    record: int | None
    doc_id: str | None
    byte_offset: int | None
    """Start of the document's record in its (decompressed) file, for lines found later."""
    char_start: int
    """Character offsets of the run in the corpus document's text."""
    char_end: int
    doc_token: int
    """Token position of the run in the corpus document."""
    eval_token: int
    """Token position of the run in the eval example."""
    length: int
    """Run length in tokens."""
    text: str | None
    line_base: tuple[str, int] | None = None
    """Set while `line` counts from the first line of the byte range of `path` that starts at
    this offset (a shard of a large file); the scan makes it a file line when all shards are in."""


@dataclass
class DocBatch:
    """Whole documents of one source, ready to tokenize as one chunk."""

    source: int
    raw: list[bytes]
    """Each document's text, UTF-8."""
    order: np.ndarray
    """Each document's place in the source (file ordinal, then position): ties go to the lowest."""
    record: Callable[[int], Record]
    """Document d's full Record, built on demand (only documents that become evidence need it)."""
    range_lines: tuple[tuple[str, int], list[int]] | None = None
    """For a byte-range shard: the range (path, start) and each document's range-relative line."""


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


@dataclass
class ChunkHits:
    """Raw matches of one chunk: matched gram indices and the hit windows per document."""

    grams: np.ndarray
    doc: np.ndarray
    doc_pos: np.ndarray


def match_chunk(
    index: EvalIndex, tk: Tokenizer, raw: list[bytes]
) -> tuple[ChunkHits, ChunkRuns] | None:
    """Find every eval n-gram in `raw` documents and the best exact run per example."""
    stream = tk.tokens(raw)
    grams, win = tk.ngrams(stream, index.n)
    hit, uidx = index.lookup(grams, tk.kernels)
    if len(hit) == 0:
        return None
    k = win[hit]
    counts = np.bincount(stream.doc, minlength=len(raw))
    doc_first = np.cumsum(counts) - counts
    doc = stream.doc[k]
    pos = k - doc_first[doc]
    hits = ChunkHits(uidx, doc, pos)
    return hits, best_runs(index, uidx, doc, pos)


def best_runs(index: EvalIndex, uidx: np.ndarray, doc: np.ndarray, pos: np.ndarray) -> ChunkRuns:
    # Join each hit to every place its n-gram has in the eval set.
    lo = index.occ_ptr[uidx]
    cnt = index.occ_ptr[uidx + 1] - lo
    rep = np.repeat(np.arange(len(uidx)), cnt)
    j = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum()))
    e = index.occ_ex[j].astype(np.int64)
    i = index.occ_pos[j].astype(np.int64)
    d = doc[rep]
    c = pos[rep]
    diag = c - i
    o = np.lexsort((i, diag, d, e))
    e, i, d, c, diag = e[o], i[o], d[o], c[o], diag[o]
    brk = np.ones(len(e), dtype=bool)
    brk[1:] = (
        (e[1:] != e[:-1]) | (d[1:] != d[:-1]) | (diag[1:] != diag[:-1]) | (i[1:] != i[:-1] + 1)
    )
    start = np.flatnonzero(brk)
    length = np.diff(np.append(start, len(e))) + index.n - 1
    se, sd, sc, si = e[start], d[start], c[start], i[start]
    # Best per example: longest, then earliest document, then earliest position.
    o2 = np.lexsort((sc, sd, -length, se))
    first = o2[np.flatnonzero(np.r_[True, se[o2][1:] != se[o2][:-1]])]
    return ChunkRuns(se[first], length[first], sd[first], sc[first], si[first])


@dataclass
class Accumulator:
    """Mergeable per-(source, example) results of a scan: matched n-grams and best runs."""

    n_sources: int
    n_grams: int
    n_examples: int
    source_names: list[str]
    redact: bool = False
    matched: np.ndarray = field(init=False)
    best_len: np.ndarray = field(init=False)
    best_order: np.ndarray = field(init=False)
    best_pos: np.ndarray = field(init=False)
    evidence: dict[tuple[int, int], Evidence] = field(init=False, default_factory=dict)
    range_lines: dict[tuple[str, int], int] = field(init=False, default_factory=dict)
    """Lines read from each byte range (path, start) of a sharded file."""
    documents: np.ndarray = field(init=False)
    text_bytes: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        s, e = self.n_sources, self.n_examples
        self.matched = np.zeros((s, self.n_grams), dtype=bool)
        self.best_len = np.zeros((s, e), dtype=np.int64)
        self.best_order = np.full((s, e), _NO_ORDER, dtype=np.int64)
        self.best_pos = np.full((s, e), _NO_ORDER, dtype=np.int64)
        self.documents = np.zeros(s, dtype=np.int64)
        self.text_bytes = np.zeros(s, dtype=np.int64)

    def add_batch(self, index: EvalIndex, tk: Tokenizer, batch: DocBatch) -> None:
        """Match one batch of documents and keep what improves the results."""
        self.documents[batch.source] += len(batch.raw)
        self.text_bytes[batch.source] += sum(len(r) for r in batch.raw)
        found = match_chunk(index, tk, batch.raw)
        if found is None:
            return
        hits, runs = found
        self.matched[batch.source, hits.grams] = True
        self._offer(batch, runs)

    def _offer(self, batch: DocBatch, runs: ChunkRuns) -> None:
        s = batch.source
        order = batch.order[runs.doc]
        cur_len, cur_ord, cur_pos = (
            self.best_len[s, runs.example],
            self.best_order[s, runs.example],
            self.best_pos[s, runs.example],
        )
        better = (runs.length > cur_len) | (
            (runs.length == cur_len)
            & ((order < cur_ord) | ((order == cur_ord) & (runs.doc_pos < cur_pos)))
        )
        for k in np.flatnonzero(better).tolist():
            e, d = int(runs.example[k]), int(runs.doc[k])
            self.best_len[s, e] = runs.length[k]
            self.best_order[s, e] = order[k]
            self.best_pos[s, e] = runs.doc_pos[k]
            ev = make_evidence(
                batch.record(d),
                self.source_names[s],
                int(runs.doc_pos[k]),
                int(runs.eval_pos[k]),
                int(runs.length[k]),
                self.redact,
            )
            if batch.range_lines is not None:
                key, lines = batch.range_lines
                ev = replace(ev, line=lines[d], line_base=key)
            self.evidence[(s, e)] = ev

    def __getstate__(self) -> dict[str, object]:
        # NOTE: shards travel between processes; the matched bitmap is the bulk of it, so pack it.
        state = dict(self.__dict__)
        state["matched"] = (np.packbits(self.matched, axis=1), self.matched.shape)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        packed, shape = cast("tuple[np.ndarray, tuple[int, int]]", state["matched"])
        state["matched"] = np.unpackbits(packed, axis=1, count=shape[1]).astype(bool)
        self.__dict__.update(state)

    def merge(self, other: Accumulator) -> None:
        """Fold `other` (same index, same sources) into this accumulator; order-independent."""
        self.matched |= other.matched
        self.range_lines.update(other.range_lines)
        self.documents += other.documents
        self.text_bytes += other.text_bytes
        better = (other.best_len > self.best_len) | (
            (other.best_len == self.best_len)
            & (other.best_len > 0)
            & (
                (other.best_order < self.best_order)
                | ((other.best_order == self.best_order) & (other.best_pos < self.best_pos))
            )
        )
        for s, e in zip(*np.nonzero(better)):
            key = (int(s), int(e))
            self.best_len[key] = other.best_len[key]
            self.best_order[key] = other.best_order[key]
            self.best_pos[key] = other.best_pos[key]
            self.evidence[key] = other.evidence[key]

    def matched_counts(self, index: EvalIndex) -> np.ndarray:
        """Matched distinct n-grams per (source, example), shape (S, E)."""
        out = np.zeros((self.n_sources, self.n_examples), dtype=np.int64)
        for s in range(self.n_sources):
            out[s] = _segment_sums(self.matched[s][index.ex_gram], index.ex_ptr)
        return out

    def matched_any(self, index: EvalIndex) -> np.ndarray:
        """Matched distinct n-grams per example over all sources."""
        any_source = np.asarray(self.matched.any(axis=0))
        return _segment_sums(any_source[index.ex_gram], index.ex_ptr)


def make_evidence(
    rec: Record | None,
    source: str,
    pos: int,
    eval_pos: int,
    length: int,
    redact: bool,
) -> Evidence:
    """Evidence for a run of `length` tokens at token `pos` of document `rec` (None: the
    document could not be read again, so there are no offsets and no text)."""
    if rec is None:
        return Evidence(source, None, None, None, None, None, -1, -1, pos, eval_pos, length, None)
    a, b = token_range(rec.text, pos, pos + length - 1)
    loc = rec.locator
    line = loc.line
    if line is not None and _is_text_file(loc.path):
        line += rec.text.count("\n", 0, a)  # a .txt document spans lines: point at the run's
    return Evidence(
        source=source,
        path=loc.path or None,
        line=line,
        record=loc.record,
        doc_id=rec.id or None,
        byte_offset=loc.span[0] if loc.span else None,
        char_start=a,
        char_end=b,
        doc_token=pos,
        eval_token=eval_pos,
        length=length,
        text=None if redact else rec.text[a:b],
    )


def _is_text_file(path: str) -> bool:
    stem = path
    for ext in (".gz", ".bz2", ".xz", ".zst"):
        stem = stem.removesuffix(ext)
    return stem.endswith(".txt")


def _segment_sums(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    cs = np.concatenate(([0], np.cumsum(values, dtype=np.int64)))
    return cs[ptr[1:]] - cs[ptr[:-1]]


ProgressFn = Callable[[int], None]
