"""The Accumulator: mergeable per-(source, example) results of a scan."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.evidence import Evidence, RunOffsets, make_evidence
from contam_cli.engine.match import ChunkRuns, DocBatch, match_chunk, match_window
from contam_cli.engine.windows import LONG_DOC_BYTES, Window, iter_windows
from contam_cli.io.model import Record
from contam_cli.text import NormConfig, Tokenizer, doc_lengths

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
    replaced: dict[str, int] = field(init=False, default_factory=dict)
    """Per corpus file, the records whose lone surrogate escapes were read as U+FFFD."""
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
        """Match one batch of documents and keep what improves the results (documents longer
        than LONG_DOC_BYTES window by window, see :mod:`contam_cli.engine.windows`)."""
        lengths = doc_lengths(batch.raw)
        self.documents[batch.source] += len(lengths)
        self.text_bytes[batch.source] += int(lengths.sum())
        # NOTE: only a real tokenizer: a shared stream (both detectors) is already whole.
        is_long = lengths > LONG_DOC_BYTES
        if not is_long.any() or not isinstance(tk, Tokenizer):
            self._add(index, tk, batch)
            return
        short = np.flatnonzero(~is_long).tolist()
        if short:
            self._add(index, tk, batch.subset(short))
        for d in np.flatnonzero(is_long).tolist():
            self._add_windows(index, tk, batch.subset([d]))

    def _add(self, index: EvalIndex, tk: Tokenizer, batch: DocBatch) -> None:
        found = match_chunk(index, tk, batch.raw)
        if found is None:
            return
        hits, runs = found
        self.matched[batch.source, hits.grams] = True
        self._offer(batch, runs, tk.norm)

    def _add_windows(self, index: EvalIndex, tk: Tokenizer, batch: DocBatch) -> None:
        """Batch `batch` of one long document, window by window."""
        overlap = int(index.n_tokens.max(initial=0)) + index.n
        doc = _LongDoc(batch)
        for win in iter_windows(batch.raw[0], tk, overlap):
            found = match_window(index, tk, win.raw, win.stream)
            if found is None:
                continue
            hits, runs = found
            self.matched[batch.source, hits.grams] = True
            self._offer(batch.window(win.raw), runs, tk.norm, win, doc)

    def _offer(
        self,
        batch: DocBatch,
        runs: ChunkRuns,
        norm: NormConfig,
        win: Window | None = None,
        doc: _LongDoc | None = None,
    ) -> None:
        """Keep the runs that improve the results (`win`: the batch is that window of the one
        long document `doc`; positions and offsets are shifted to the document's)."""
        s = batch.source
        local = runs
        if win is not None:
            runs = replace(runs, doc_pos=runs.doc_pos + win.token_base)
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
            offsets = RunOffsets(local, picks, batch.raw, norm)
        for j, k in enumerate(picks.tolist()):
            e, d = int(runs.example[k]), int(runs.doc[k])
            self.best_len[s, e] = runs.length[k]
            self.best_order[s, e] = order[k]
            self.best_pos[s, e] = runs.doc_pos[k]
            rec = batch.record(d) if doc is None else doc.record()
            span = None
            if offsets is not None and win is None:
                span = offsets.char_range(j, rec.text)
            elif offsets is not None and win is not None and doc is not None and doc.same_text():
                a, b = offsets.char_range_of_bytes(j)
                span = (a + win.char_base, b + win.char_base)
            ev = make_evidence(
                rec,
                self.source_names[s],
                int(runs.doc_pos[k]),
                int(runs.eval_pos[k]),
                int(runs.length[k]),
                self.redact,
                span=span,
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
        for path, count in other.replaced.items():
            self.replaced[path] = self.replaced.get(path, 0) + count
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


class _LongDoc:
    """The one document of a windowed batch: its record, built once, and whether the record's
    text is the bytes that were tokenized (checked once, not per window)."""

    def __init__(self, batch: DocBatch) -> None:
        self.batch = batch
        self._record: Record | None = None
        self._same: bool | None = None

    def record(self) -> Record:
        if self._record is None:
            self._record = self.batch.record(0)
        return self._record

    def same_text(self) -> bool:
        if self._same is None:
            self._same = _encodes_to(self.record().text, self.batch.raw[0])
        return self._same


def _encodes_to(text: str, raw: bytes, step: int = 1 << 22) -> bool:
    """``text.encode() == raw``, a piece at a time (a long document is not copied whole)."""
    done = 0
    for i in range(0, len(text), step):
        piece = text[i : i + step].encode("utf-8", "surrogatepass")
        if raw[done : done + len(piece)] != piece:
            return False
        done += len(piece)
    return done == len(raw)
