"""The streaming match engine: corpus chunks in, per-example matches and exact runs out.

Each chunk (about ``chunk_bytes`` of whole documents from one source) goes through:

1. token and n-gram hashes for the whole chunk (:class:`~contam_cli.ngrams.Tokenizer`);
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

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from contam_cli.index import EvalIndex
from contam_cli.model import Record
from contam_cli.ngrams import Tokenizer, WordLayout
from contam_cli.text import (
    DEFAULT_NORM,
    NormConfig,
    token_range,
    word_token_edge,
)

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
    runs = best_runs(index, uidx, doc, pos)
    if stream.words is not None:
        runs.words, runs.doc_first = stream.words, doc_first
    return hits, runs


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
        self._offer(batch, runs, tk.norm)

    def _offer(self, batch: DocBatch, runs: ChunkRuns, norm: NormConfig) -> None:
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
        picks = np.flatnonzero(better)
        offsets = None
        if runs.words is not None and len(picks):
            offsets = _RunOffsets(runs, picks, batch.raw, norm)
        for j, k in enumerate(picks.tolist()):
            e, d = int(runs.example[k]), int(runs.doc[k])
            self.best_len[s, e] = runs.length[k]
            self.best_order[s, e] = order[k]
            self.best_pos[s, e] = runs.doc_pos[k]
            rec = batch.record(d)
            ev = make_evidence(
                rec,
                self.source_names[s],
                int(runs.doc_pos[k]),
                int(runs.eval_pos[k]),
                int(runs.length[k]),
                self.redact,
                span=offsets.char_range(j, rec.text) if offsets is not None else None,
                norm=norm,
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
            out[s] = index.distinct_per_example(self.matched[s])
        return out

    def matched_any(self, index: EvalIndex) -> np.ndarray:
        """Matched distinct n-grams per example over all sources."""
        if self.n_sources == 1:
            return index.distinct_per_example(self.matched[0])
        return index.distinct_per_example(np.asarray(self.matched.any(axis=0)))


class _RunOffsets:
    """Character offsets of runs in their documents, from the words the tokenizer found.

    Equal to ``token_range(text, pos, pos + length - 1)`` for each run, without tokenizing the
    document again: a run's first and last tokens are located among the chunk's words
    (:meth:`WordLayout.locate`); an ASCII word is its own token, so its byte span is the
    token's, and only a boundary word holding non-ASCII bytes is looked at character by
    character (:func:`word_token_edge`, the rule token_range applies to one word). Byte
    offsets become character offsets by decoding the document's bytes up to them.
    """

    def __init__(
        self, runs: ChunkRuns, picks: np.ndarray, raw: list[bytes], norm: NormConfig
    ) -> None:
        """Offsets for runs ``picks`` (indices into `runs`) of the chunk of documents `raw`,
        tokenized under `norm`."""
        words = runs.words
        assert words is not None and runs.doc_first is not None
        self.norm = norm
        self.raw = raw
        doc = runs.doc[picks]
        first = runs.doc_first[doc] + runs.doc_pos[picks]
        last = first + runs.length[picks] - 1
        word, inner, count = words.locate(np.concatenate([first, last]))
        n_special = len(words.special)
        if n_special:
            at = np.minimum(np.searchsorted(words.special, word), n_special - 1)
            special = words.special[at] == word
        else:
            special = np.zeros(len(word), dtype=bool)
        base = words.doc_starts[doc]
        m = len(picks)
        self.doc = doc.tolist()
        # Per side (0: the run's first token, 1: its last): the token's word, as byte offsets
        # in the document, the token's index in the word, the word's token count, and whether
        # the word holds non-ASCII bytes.
        start = words.starts[word] - np.concatenate([base, base])
        end = words.ends[word] - np.concatenate([base, base])
        self.start = (start[:m].tolist(), start[m:].tolist())
        self.end = (end[:m].tolist(), end[m:].tolist())
        self.inner = (inner[:m].tolist(), inner[m:].tolist())
        self.count = (count[:m].tolist(), count[m:].tolist())
        self.special = (special[:m].tolist(), special[m:].tolist())

    def char_range(self, j: int, text: str) -> tuple[int, int] | None:
        """``(char_start, char_end)`` of picked run `j` in its document's `text`, or None when
        only :func:`token_range` can say (the text is not the one that was tokenized)."""
        raw = self.raw[self.doc[j]]
        # NOTE: the record is built apart from the bytes that were tokenized; offsets into one
        # only hold for the other when they are the same text (an encode and a compare: a few
        # microseconds, against the hundreds token_range takes).
        if text.encode("utf-8", "surrogatepass") != raw:
            return None
        if raw.isascii():  # every word is ASCII and every byte a character
            return self.start[0][j], self.end[1][j]
        out = []
        done = chars = 0  # `chars` characters in the first `done` bytes
        for side in (0, 1):
            a, b = self.start[side][j], self.end[side][j]
            chars += len(_chars(raw, done, a))
            done = a
            if not self.special[side][j]:  # an ASCII word: the token is the whole word
                out.append(chars if side == 0 else chars + b - a)
                continue
            word = _chars(raw, a, b)
            inner, count = self.inner[side][j], self.count[side][j]
            out.append(chars + word_token_edge(word, inner, count, side, self.norm))
        return out[0], out[1]


def _chars(raw: bytes, a: int, b: int) -> str:
    """Bytes ``[a, b)`` of a document's UTF-8 `raw` (on character boundaries), as text."""
    return raw[a:b].decode("utf-8", "surrogatepass")


def make_evidence(
    rec: Record | None,
    source: str,
    pos: int,
    eval_pos: int,
    length: int,
    redact: bool,
    span: tuple[int, int] | None = None,
    norm: NormConfig = DEFAULT_NORM,
) -> Evidence:
    """Evidence for a run of `length` tokens at token `pos` of document `rec` (None: the
    document could not be read again, so there are no offsets and no text).

    `span`: the run's character offsets in ``rec.text`` when the caller already knows them
    (they must equal what :func:`~contam_cli.text.token_range` gives); None: computed here.
    """
    if rec is None:
        return Evidence(source, None, None, None, None, None, -1, -1, pos, eval_pos, length, None)
    a, b = span if span is not None else token_range(rec.text, pos, pos + length - 1, norm)
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


ProgressFn = Callable[[int], None]
