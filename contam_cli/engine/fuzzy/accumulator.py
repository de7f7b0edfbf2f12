"""FuzzyAccumulator: mergeable per-(source, example) best alignments of the fuzzy detector.

Per chunk: candidates (:mod:`~contam_cli.engine.fuzzy.candidates`), each scored by its best
cell (:func:`~contam_cli.engine.fuzzy.align.align_candidates`); per example the best candidate,
by the exact Accumulator's rule: the highest score, then the earliest document
(``batch.order``), then the earliest position (here the alignment's last document token, known
before any traceback). Only a candidate that beats what the accumulator holds is traced back
and becomes evidence, while its document is in memory. Merging applies the same rule, so
shards may be merged in any order with identical results.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import ModuleType

import numpy as np

from contam_cli.engine.fuzzy.align import (
    Alignment,
    Candidates,
    align_candidates,
    band_matrix,
    best_cell,
    traceback,
)
from contam_cli.engine.fuzzy.candidates import chunk_candidates, fuzzy_kernels
from contam_cli.engine.fuzzy.config import FuzzyConfig
from contam_cli.engine.fuzzy.evidence import FuzzyEvidence, TokenChars, make_fuzzy_evidence
from contam_cli.engine.fuzzy.index import FuzzyIndex
from contam_cli.engine.fuzzy.results import FuzzyResults, build_results
from contam_cli.engine.match import DocBatch
from contam_cli.errors import UsageError
from contam_cli.text import Tokenizer, TokenStream, doc_lengths

__all__ = ["FuzzyAccumulator", "trace_candidate"]

_NO_ORDER = np.iinfo(np.int64).max


@dataclass
class FuzzyAccumulator:
    """Best fuzzy alignment per (source, example), mergeable in any order."""

    n_examples: int
    source_names: list[str]
    config: FuzzyConfig = field(default_factory=FuzzyConfig)
    redact: bool = False
    best_h: np.ndarray = field(init=False)
    """int64 (S, E) best alignment score in units (0: no candidate)."""
    best_order: np.ndarray = field(init=False)
    best_pos: np.ndarray = field(init=False)
    """int64 (S, E) document position of the best alignment's last matched token."""
    evidence: dict[tuple[int, int], FuzzyEvidence] = field(init=False, default_factory=dict)
    range_reads: dict[tuple[str, int], tuple[int, int]] = field(init=False, default_factory=dict)
    """Lines and records read from each byte range (path, start) of a sharded file (as in
    Accumulator)."""
    documents: np.ndarray = field(init=False)
    text_bytes: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        s, e = len(self.source_names), self.n_examples
        self.best_h = np.zeros((s, e), dtype=np.int64)
        self.best_order = np.full((s, e), _NO_ORDER, dtype=np.int64)
        self.best_pos = np.full((s, e), _NO_ORDER, dtype=np.int64)
        self.documents = np.zeros(s, dtype=np.int64)
        self.text_bytes = np.zeros(s, dtype=np.int64)

    def add_batch(
        self,
        index: FuzzyIndex,
        tokenizer: Tokenizer,
        batch: DocBatch,
        stream: TokenStream | None = None,
    ) -> None:
        """Align one batch of documents and keep what improves the results.

        `stream`: the batch's tokens when the caller already has them (``tokenizer.tokens`` of
        ``batch.raw``), so that a scan running both detectors tokenizes once.
        """
        if tokenizer.norm != index.norm:
            raise UsageError("the fuzzy index was built under another normalization")
        s = batch.source
        self.documents[s] += len(batch.raw)
        self.text_bytes[s] += int(doc_lengths(batch.raw).sum())
        stream = stream if stream is not None else tokenizer.tokens(batch.raw)
        kernels = fuzzy_kernels() if tokenizer.kernels is not None else None
        counts = np.bincount(stream.doc, minlength=len(batch.raw))
        first = np.cumsum(counts) - counts
        cands = chunk_candidates(index, stream.hashes, stream.doc, first, counts, kernels)
        if len(cands) == 0:
            return
        pen = self.config.penalties()
        h, _, j = align_candidates(
            cands, index.tokens, index.weights, index.tok_ptr, stream.hashes, pen, kernels
        )
        picks = self._improving(s, cands.example, h, batch.order[cands.doc], j - 1)
        if len(picks):
            chars = TokenChars(stream.words, first, batch.raw, tokenizer.norm)
            self._evidence(index, batch, cands, picks, stream.hashes, chars, kernels)

    def _improving(
        self, s: int, ex: np.ndarray, h: np.ndarray, order: np.ndarray, end: np.ndarray
    ) -> np.ndarray:
        """The candidates that become their example's best in source `s` (at most one per
        example: the highest score, then the earliest document, then the earliest end), with
        the arrays updated to them."""
        o = np.lexsort((end, order, -h, ex))
        o = o[h[o] > 0]
        o = o[np.r_[True, ex[o][1:] != ex[o][:-1]]] if len(o) else o
        e = ex[o]
        cur_h, cur_o, cur_p = self.best_h[s, e], self.best_order[s, e], self.best_pos[s, e]
        better = (h[o] > cur_h) | (
            (h[o] == cur_h) & ((order[o] < cur_o) | ((order[o] == cur_o) & (end[o] < cur_p)))
        )
        picks = o[better]
        self.best_h[s, ex[picks]] = h[picks]
        self.best_order[s, ex[picks]] = order[picks]
        self.best_pos[s, ex[picks]] = end[picks]
        return picks

    def _evidence(
        self,
        index: FuzzyIndex,
        batch: DocBatch,
        cands: Candidates,
        picks: np.ndarray,
        y: np.ndarray,
        chars: TokenChars,
        kernels: ModuleType | None,
    ) -> None:
        """Trace back the picked candidates and keep their evidence."""
        pen = self.config.penalties()
        found = {k: trace_candidate(index, cands, k, y, pen, kernels) for k in picks.tolist()}
        # NOTE: one pass over each document for the offsets of all of its picks' tokens.
        by_doc = picks[np.argsort(cands.doc[picks], kind="stable")]
        docs = cands.doc[by_doc]
        bounds = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1], True])
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            d, mine = int(docs[lo]), by_doc[lo:hi].tolist()
            rec = batch.record(d)
            tokens = np.concatenate([found[k].pairs[:, 1] for k in mine])
            # NOTE: as in the exact scan, a document that cannot be read again (no record) still
            # gets its evidence, without offsets or text.
            spans = (
                chars.spans(d, rec.text, tokens)
                if rec is not None
                else -np.ones((len(tokens), 2), np.int64)
            )
            at = 0
            for k in mine:
                found_k, e = found[k], int(cands.example[k])
                ev = make_fuzzy_evidence(
                    rec,
                    self.source_names[batch.source],
                    found_k,
                    int(index.total_weight[e]),
                    int(index.n_tokens[e]),
                    self.redact,
                    spans[at : at + found_k.matched],
                    index.norm,
                )
                at += found_k.matched
                if batch.ranged is not None:
                    key, lines, records = batch.ranged
                    ev = replace(ev, line=lines[d], record=records[d], line_base=key)
                self.evidence[(batch.source, e)] = ev

    def merge(self, other: FuzzyAccumulator) -> None:
        """Fold `other` (same index, same sources) into this accumulator; order-independent."""
        self.range_reads.update(other.range_reads)
        self.documents += other.documents
        self.text_bytes += other.text_bytes
        better = (other.best_h > self.best_h) | (
            (other.best_h == self.best_h)
            & (other.best_h > 0)
            & (
                (other.best_order < self.best_order)
                | ((other.best_order == self.best_order) & (other.best_pos < self.best_pos))
            )
        )
        for s, e in zip(*np.nonzero(better)):
            key = (int(s), int(e))
            self.best_h[key] = other.best_h[key]
            self.best_order[key] = other.best_order[key]
            self.best_pos[key] = other.best_pos[key]
            self.evidence[key] = other.evidence[key]

    def results(self, index: FuzzyIndex) -> FuzzyResults:
        """Per-example results (the best source of each example), as numpy columns."""
        return build_results(index, self.best_h, self.best_order, self.evidence)


def trace_candidate(
    index: FuzzyIndex,
    cands: Candidates,
    k: int,
    y: np.ndarray,
    pen: tuple[int, int, int],
    kernels: ModuleType | None,
) -> Alignment:
    """The alignment of candidate `k` with its matched pairs (document-relative positions)."""
    e, lo, hi = int(cands.example[k]), int(cands.lo[k]), int(cands.hi[k])
    base, length = int(cands.base[k]), int(cands.length[k])
    x, w = index.example(e)
    # NOTE: only document tokens the band can reach, j - 1 in [lo, len(x) + hi): a band of a
    # long document is traced back without touching the rest of it.
    off = max(0, lo)
    window = y[base + off : base + min(length, len(x) + hi)]
    rows = band_matrix(x, w, window, lo - off, hi - off, pen, kernels)
    h, i, j = best_cell(rows, lo - off)
    pairs, columns = traceback(rows, x, w, window, lo - off, pen, (i, j), kernels)
    pairs[:, 1] += off
    return Alignment(h, pairs, columns)
