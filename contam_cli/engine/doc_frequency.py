"""Document frequency of eval n-grams: in how many distinct corpus documents each one occurs.

A pass of the corpus like the scan's, with less work per chunk: token and n-gram hashes, the
membership test against the eval index, then the distinct (gram, document) pairs of the chunk
counted per gram. No runs, no evidence. Documents never span chunks or shards, so per-shard
counts add up to exact corpus-wide counts, in any order: the result does not depend on the
executor or the number of workers. A document is counted once per source it is read in.

This is the first pass of boilerplate suppression (``--ignore-common K``: eval n-grams found in
more than K documents are left out of the scan) and what ``contam calibrate --common-out`` ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from contam_cli.engine.corpus_pass import CorpusContext, _numbered, tokenizer
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.executor import Executor
from contam_cli.engine.match import iter_batches
from contam_cli.engine.options import ScanOptions
from contam_cli.engine.shards import Shard, Source, plan_shards, shard_batches
from contam_cli.engine.windows import LONG_DOC_BYTES, window_ngrams
from contam_cli.io.model import ReadNotes
from contam_cli.text import Tokenizer, doc_lengths

__all__ = ["DocFrequency", "count_shard", "document_frequency", "rereadable"]

ProgressFn = Callable[[int], None]


@dataclass
class DocFrequency:
    """Per eval gram, the distinct corpus documents seen holding it (mergeable by addition)."""

    n_grams: int
    counts: np.ndarray = field(init=False)
    """int64 per gram of the eval index."""

    def __post_init__(self) -> None:
        self.counts = np.zeros(self.n_grams, dtype=np.int64)

    def add_chunk(self, index: EvalIndex, tk: Tokenizer, raw: Sequence[bytes]) -> None:
        """Count the eval grams of `raw` (whole documents), once per document holding them (a
        document longer than LONG_DOC_BYTES window by window: :mod:`contam_cli.engine.windows`)."""
        is_long = doc_lengths(raw) > LONG_DOC_BYTES
        if not is_long.any():
            self._add_docs(index, tk, raw)
            return
        short = [raw[d] for d in np.flatnonzero(~is_long).tolist()]
        if short:
            self._add_docs(index, tk, short)
        accel = tk.kernels is not None
        for d in np.flatnonzero(is_long).tolist():
            found = [index.lookup(g, accel=accel)[1] for g, _ in window_ngrams(raw[d], tk, index.n)]
            self.counts[np.unique(np.concatenate(found))] += 1

    def _add_docs(self, index: EvalIndex, tk: Tokenizer, raw: Sequence[bytes]) -> None:
        stream = tk.tokens(raw)
        grams, win = tk.ngrams(stream, index.n)
        hit, uidx = index.lookup(grams, accel=tk.kernels is not None)
        if len(hit) == 0:
            return
        docs = max(1, len(raw))
        pairs = np.unique(uidx.astype(np.int64) * docs + stream.doc[win[hit]])
        holders = pairs // docs  # sorted: the gram of each distinct (gram, document) pair
        starts = np.flatnonzero(np.r_[True, holders[1:] != holders[:-1]])
        self.counts[holders[starts]] += np.diff(np.append(starts, len(holders)))

    def merge(self, other: DocFrequency) -> None:
        self.counts += other.counts

    def __getstate__(self) -> dict[str, object]:
        # NOTE: most eval grams occur in no document of a shard: send only the others.
        nz = np.flatnonzero(self.counts)
        return {"n_grams": self.n_grams, "sparse": (nz, self.counts[nz])}

    def __setstate__(self, state: dict[str, object]) -> None:
        nz, values = cast("tuple[np.ndarray, np.ndarray]", state["sparse"])
        self.n_grams = cast(int, state["n_grams"])
        self.counts = np.zeros(self.n_grams, dtype=np.int64)
        self.counts[nz] = values


def count_shard(ctx: CorpusContext, shard: Shard) -> DocFrequency:
    """The document frequencies of one shard (the work function of the first pass)."""
    opts = ctx.opts
    tk = tokenizer(opts.norm, opts.accel)
    out = DocFrequency(len(ctx.index.grams))
    reads: dict[tuple[str, int], tuple[int, int]] = {}
    for batch in shard_batches(shard, opts.corpus_spec, opts.chunk_bytes, reads, accel=opts.accel):
        out.add_chunk(ctx.index, tk, batch.raw)
    return out


def document_frequency(
    index: EvalIndex,
    sources: list[Source],
    opts: ScanOptions,
    executor: Executor,
    *,
    progress: ProgressFn | None = None,
) -> np.ndarray:
    """Per gram of `index`, the distinct documents of all `sources` holding it (int64).

    Sources on disk go through `executor` shard by shard; sources in memory are read here (a
    stream is read once: callers that scan afterwards need one they can read again).

    >>> from contam_cli.engine.eval_index import build_eval_index
    >>> from contam_cli.engine.executor import InProcess
    >>> ix = build_eval_index(["a b c"], 2)
    >>> src = Source("c", stream=["a b c", "x a b", "a b a b"])
    >>> sorted(document_frequency(ix, [src], ScanOptions(n=2), InProcess()).tolist())
    [1, 3]
    """
    total = DocFrequency(len(index.grams))
    shards = [sh for s, src in enumerate(sources) for sh in plan_shards(s, src)]
    ctx = CorpusContext(index, tuple(s.name for s in sources), opts)
    on_done = (lambda i: progress(shards[i].size)) if progress else None
    for part in executor.map(count_shard, ctx, shards, on_done=on_done):
        total.merge(part)
    tk = tokenizer(opts.norm, opts.accel)
    for s, src in enumerate(sources):
        if src.stream is not None:
            # NOTE: the scan pass notes what the records held; this pass only counts.
            stream = _numbered(src.stream, opts, ReadNotes())
            for batch in iter_batches(stream, s, opts.chunk_bytes):
                total.add_chunk(index, tk, batch.raw)
                if progress:
                    progress(int(doc_lengths(batch.raw).sum()))
    return total.counts


def rereadable(stream: Iterable[object]) -> bool:
    """Whether an in-memory source can be read twice (a list can, a generator cannot)."""
    return iter(stream) is not stream
