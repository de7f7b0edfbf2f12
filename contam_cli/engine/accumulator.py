"""The Accumulator: mergeable per-(source, example) results of a scan."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.evidence import Evidence, RunOffsets, make_evidence
from contam_cli.engine.match import ChunkRuns, DocBatch, match_chunk, match_window
from contam_cli.engine.windows import LONG_DOC_BYTES, Window, iter_windows
from contam_cli.io.model import Record, merge_unread_turns
from contam_cli.text import NormConfig, Tokenizer, doc_lengths

__all__ = ["Accumulator"]


@dataclass
class Accumulator:
    """Mergeable per-(source, example) results of a scan: matched n-grams and best runs."""

    n_sources: int
    n_grams: int
    n_examples: int
    source_names: list[str]
    redact: bool = False
    best_len: np.ndarray = field(init=False)
    best_order: np.ndarray = field(init=False)
    best_pos: np.ndarray = field(init=False)
    evidence: dict[tuple[int, int], Evidence] = field(init=False, default_factory=dict)
    range_reads: dict[tuple[str, int], tuple[int, int]] = field(init=False, default_factory=dict)
    """Lines and records read from each byte range (path, start) of a sharded file."""
    replaced: dict[str, int] = field(init=False, default_factory=dict)
    """Per corpus file, the records whose lone surrogate escapes were read as U+FFFD."""
    unread_turns: dict[str, tuple[int, str, str]] = field(init=False, default_factory=dict)
    """Per corpus file, its first chat turn without a text key (see ReadNotes.unread_turns)."""
    documents: np.ndarray = field(init=False)
    text_bytes: np.ndarray = field(init=False)
    # NOTE: a shard's result touches few of its (source, n-gram) and (source, example) cells,
    # and with a million examples the dense arrays are 80 MB: its matched n-grams wait as index
    # arrays (`_marks`) until someone reads `matched`, and merging and pickling it go through the
    # cells that hold a run (best length above 0) alone, so they cost what it holds.
    _dense: np.ndarray | None = field(init=False, default=None, repr=False)
    _marks: list[tuple[int, np.ndarray]] = field(init=False, default_factory=list, repr=False)
    _marked: int = field(init=False, default=0, repr=False)

    def __post_init__(self) -> None:
        s, e = self.n_sources, self.n_examples
        # NOTE: zeros, which the OS provides lazily; a cell's order and position are read only
        # where its best length is above 0, that is where a run set them.
        self.best_len = np.zeros((s, e), dtype=np.int64)
        self.best_order = np.zeros((s, e), dtype=np.int64)
        self.best_pos = np.zeros((s, e), dtype=np.int64)
        self.documents = np.zeros(s, dtype=np.int64)
        self.text_bytes = np.zeros(s, dtype=np.int64)

    @property
    def matched(self) -> np.ndarray:
        """Whether each (source, eval n-gram) was found, shape (S, G) (made dense on first use)."""
        if self._dense is None:
            self._dense = np.zeros((self.n_sources, self.n_grams), dtype=bool)
        for s, grams in self._marks:
            self._dense[s, grams] = True
        self._marks, self._marked = [], 0
        return self._dense

    def mark(self, source: int, grams: np.ndarray) -> None:
        """Record eval n-grams `grams` (indices) as found in `source`."""
        if self._dense is not None:
            self._dense[source, grams] = True
            return
        self._marks.append((source, grams))
        self._marked += len(grams)
        if self._marked * 64 > self.n_sources * self.n_grams:  # denser than a bitmap by now
            self.matched  # noqa: B018 (made dense)

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
        self.mark(batch.source, hits.grams)
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
            self.mark(batch.source, hits.grams)
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
        ranged = batch.ranged
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
                ranged=None if ranged is None else (ranged.key, ranged.lines[d], ranged.records[d]),
            )
            self.evidence[(s, e)] = ev

    def __getstate__(self) -> dict[str, object]:
        # NOTE: shards travel between processes: send the cells they hold, not the dense arrays.
        state = dict(self.__dict__)
        touched = self._cells()
        state["_cells"] = touched
        for name in ("best_len", "best_order", "best_pos"):
            state[name] = state[name].reshape(-1)[touched]
        if self._dense is not None:
            state["_dense"] = np.packbits(self._dense, axis=1)
        else:
            state["_marks"] = [
                (s, np.unique(np.concatenate(g))) for s, g in self._marks_by_source()
            ]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        shape = (cast(int, state["n_sources"]), cast(int, state["n_examples"]))
        touched = cast(np.ndarray, state.pop("_cells"))
        for name in ("best_len", "best_order", "best_pos"):
            full = np.zeros(shape, dtype=np.int64)
            full.reshape(-1)[touched] = cast(np.ndarray, state[name])
            state[name] = full
        state.setdefault("unread_turns", {})  # NOTE: a checkpoint of an earlier version
        packed = state.get("_dense")  # NOTE: absent while None (a dataclass class default)
        if packed is not None:
            n = cast(int, state["n_grams"])
            state["_dense"] = np.unpackbits(cast(np.ndarray, packed), axis=1, count=n).astype(bool)
        self.__dict__.update(state)

    def _cells(self) -> np.ndarray:
        """The flat (source, example) cells that hold a run."""
        return np.flatnonzero(self.best_len.reshape(-1))

    def _marks_by_source(self) -> list[tuple[int, list[np.ndarray]]]:
        by: dict[int, list[np.ndarray]] = {}
        for s, grams in self._marks:
            by.setdefault(s, []).append(grams)
        return sorted(by.items())

    def merge(self, other: Accumulator) -> None:
        """Fold `other` (same index, same sources) into this accumulator; order-independent."""
        if other._dense is not None:
            np.logical_or(self.matched, other._dense, out=self.matched)
        else:
            for s, grams in other._marks:
                self.mark(s, grams)
        self.range_reads.update(other.range_reads)
        for path, count in other.replaced.items():
            self.replaced[path] = self.replaced.get(path, 0) + count
        merge_unread_turns(self.unread_turns, other.unread_turns)
        self.documents += other.documents
        self.text_bytes += other.text_bytes
        cells = other._cells()
        flat = [(a.reshape(-1), b.reshape(-1)) for a, b in (
            (self.best_len, other.best_len),
            (self.best_order, other.best_order),
            (self.best_pos, other.best_pos),
        )]  # fmt: skip
        (sl, ol), (so, oo), (sp, op) = ((a[cells], b[cells]) for a, b in flat)
        better = (ol > sl) | ((ol == sl) & (ol > 0) & ((oo < so) | ((oo == so) & (op < sp))))
        won = cells[better]
        for mine, theirs in flat:
            mine[won] = theirs[won]
        e_count = self.n_examples
        for c in won.tolist():
            key = (c // e_count, c % e_count)
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
