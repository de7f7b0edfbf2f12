"""One pass of the corpus past the eval index: shards mapped to Accumulators, merged in order."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, cast

from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.executor import Executor
from contam_cli.engine.fuzzy.index import FuzzyIndex
from contam_cli.engine.fuzzy.shared import WithFuzzy, add_both, with_fuzzy
from contam_cli.engine.match import iter_batches
from contam_cli.engine.options import ScanOptions
from contam_cli.engine.shards import Shard, Source, plan_shards, shard_batches
from contam_cli.io.inputs import as_record
from contam_cli.io.model import ReadNotes, Record
from contam_cli.io.readers import whole_read_id
from contam_cli.text import NormConfig, Tokenizer, doc_lengths

__all__ = ["CorpusContext", "fill_ranged_evidence", "new_accumulator", "run_corpus", "scan_shard"]

ProgressFn = Callable[[int], None]


@dataclass(frozen=True)
class CorpusContext:
    """What every shard of a scan needs (sent to each worker once)."""

    index: EvalIndex
    source_names: tuple[str, ...]
    opts: ScanOptions
    fuzzy: FuzzyIndex | None = None
    """The fuzzy detector's eval side when it runs (``opts.fuzzy``); then every shard's result
    is a :class:`~contam_cli.engine.fuzzy.shared.WithFuzzy`."""


@functools.lru_cache(maxsize=4)
def tokenizer(norm: NormConfig, accel: bool | None) -> Tokenizer:
    """One tokenizer per process and configuration (its caches are worth keeping)."""
    return Tokenizer(norm, accel=accel)


def new_accumulator(
    index: EvalIndex, names: Iterable[str], redact: bool, fuzzy: FuzzyIndex | None = None
) -> Accumulator:
    """An empty accumulator; with `fuzzy`, one that also holds the fuzzy detector's results."""
    names = list(names)
    acc = Accumulator(
        n_sources=len(names),
        n_grams=len(index.grams),
        n_examples=index.n_examples,
        source_names=names,
        redact=redact,
    )
    return acc if fuzzy is None else with_fuzzy(acc, fuzzy, redact)


def scan_shard(ctx: CorpusContext, shard: Shard) -> Accumulator:
    """Match every document of `shard` (the work function of a corpus pass)."""
    opts = ctx.opts
    tk = tokenizer(opts.norm, opts.accel)
    acc = new_accumulator(ctx.index, ctx.source_names, opts.redact, ctx.fuzzy)
    notes = ReadNotes()
    batches = shard_batches(
        shard, opts.corpus_spec, opts.chunk_bytes, acc.range_reads, notes, opts.accel
    )
    if ctx.fuzzy is None:
        for batch in batches:
            acc.add_batch(ctx.index, tk, batch)
    else:
        assert isinstance(acc, WithFuzzy)
        for batch in batches:
            add_both(acc, ctx.index, ctx.fuzzy, tk, batch)
    acc.replaced.update(notes.surrogates)
    acc.unread_turns.update(notes.unread_turns)
    return acc


def run_corpus(
    index: EvalIndex,
    sources: list[Source],
    opts: ScanOptions,
    executor: Executor,
    *,
    progress: ProgressFn | None = None,
    on_start: Callable[[], None] | None = None,
    fuzzy: FuzzyIndex | None = None,
) -> Accumulator:
    """Stream every source past the index: file shards through `executor`, merged in shard
    order; sources held in memory afterwards, in this process. With `fuzzy` (the fuzzy
    detector's eval side) the result is a WithFuzzy holding that detector's results too."""
    names = tuple(s.name for s in sources)
    acc = new_accumulator(index, names, opts.redact, fuzzy)
    shards = [sh for s, src in enumerate(sources) for sh in plan_shards(s, src)]
    ctx = CorpusContext(index, names, opts, fuzzy)
    on_done = (lambda i: progress(shards[i].size)) if progress else None
    for part in executor.map(scan_shard, ctx, shards, on_start=on_start, on_done=on_done):
        acc.merge(part)
    tk = tokenizer(opts.norm, opts.accel)
    notes = ReadNotes()
    for s, src in enumerate(sources):
        if src.stream is not None:
            for batch in iter_batches(_numbered(src.stream, opts, notes), s, opts.chunk_bytes):
                if fuzzy is None:
                    acc.add_batch(index, tk, batch)
                else:
                    add_both(cast(WithFuzzy, acc), index, fuzzy, tk, batch)
                if progress:
                    progress(int(doc_lengths(batch.raw).sum()))
    for where, count in notes.surrogates.items():
        acc.replaced[where] = acc.replaced.get(where, 0) + count
    fill_ranged_evidence(acc)
    return acc


def _numbered(
    stream: Iterable[Any], opts: ScanOptions, notes: ReadNotes
) -> Iterator[tuple[Record, int]]:
    for i, x in enumerate(stream):
        yield as_record(x, i, "<stream>", opts.corpus_spec, role="corpus", notes=notes), i


def fill_ranged_evidence(acc: Accumulator) -> None:
    """Give the evidence from byte ranges what a whole read of its file gives (the fuzzy
    detector's evidence too, when `acc` holds it): range-relative lines and record ordinals
    become file ones, from the lines and records each earlier range of the file read, and the
    range reader's ``"@<offset>"`` id of a record without one becomes its line number."""
    before: dict[tuple[str, int], tuple[int, int]] = {}  # (path, start) -> earlier ranges' reads
    total: dict[str, tuple[int, int]] = {}
    for (path, start), (lines, records) in sorted(acc.range_reads.items()):
        seen = before[(path, start)] = total.get(path, (0, 0))
        total[path] = (seen[0] + lines, seen[1] + records)
    evidences: list[dict[Any, Any]] = [acc.evidence]
    if isinstance(acc, WithFuzzy):
        evidences.append(acc.fuzzy.evidence)
    for evidence in evidences:
        for key, ev in list(evidence.items()):
            if ev.line_base is None:
                continue
            lines, records = before[ev.line_base]
            line = None if ev.line is None else ev.line + lines
            record = None if ev.record is None else ev.record + records
            doc_id = ev.doc_id
            if doc_id is not None and line is not None and ev.byte_offset is not None:
                doc_id = whole_read_id(doc_id, ev.byte_offset, line)
            evidence[key] = replace(ev, line=line, record=record, doc_id=doc_id, line_base=None)
