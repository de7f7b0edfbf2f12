"""The Accumulator: mergeable per-(source, example) results of a scan."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.evidence import Evidence, RunOffsets, make_evidence
from contam_cli.engine.match import ChunkRuns, DocBatch, match_chunk
from contam_cli.text import NormConfig, Tokenizer

__all__ = ["Accumulator"]

_NO_ORDER = np.iinfo(np.int64).max


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
            offsets = RunOffsets(runs, picks, batch.raw, norm)
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
