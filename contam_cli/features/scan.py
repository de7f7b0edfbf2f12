"""scan(): read the eval set, index it, stream every corpus source past it, and build the Report."""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Union, cast

import numpy as np

from contam_cli._version import __version__
from contam_cli.engine import ORDER_FILE_SHIFT, Accumulator, DocBatch, iter_batches
from contam_cli.engine.corpus_index import load_header, match_index
from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.errors import UsageError
from contam_cli.io import (
    TextSpec,
    iter_eval,
    iter_files,
    iter_text_batches,
    sha256_file,
)
from contam_cli.io.model import Locator, Record
from contam_cli.policy import FlagPolicy, zscores
from contam_cli.report import ExampleTable, Report, SourceResult, fingerprint, fingerprints
from contam_cli.text import DEFAULT_NORM, HASH_NAME, NormConfig, Tokenizer
from contam_cli.text.accel import kernels

__all__ = ["scan", "Source", "ScanOptions", "resolve_sources", "load_eval", "index_eval"]

PathLike = Union[str, "os.PathLike[str]"]  # noqa: UP007 - a runtime alias, valid on 3.10
EvalInput = Union[PathLike, Sequence[PathLike], Iterable[Union[str, Record]], Mapping[str, str]]  # noqa: UP007
CorpusInput = Union[PathLike, Sequence[PathLike], Iterable[Union[str, Record]]]  # noqa: UP007
ProgressFn = Callable[[int], None]

#: Shards (files, or byte ranges of uncompressed JSONL) are about this size: 1/32 of a source,
#: within these bounds, so that work spreads evenly over processes without many tiny shards.
SHARD_BYTES = 64 << 20
MIN_SHARD_BYTES = 8 << 20
ACCEL_MIN_BYTES = 64 << 20


@dataclass(frozen=True)
class Source:
    """A named corpus: files on disk, or any iterable of texts/records (streamed once)."""

    name: str
    paths: tuple[Path, ...] = ()
    stream: Iterable[str | Record] | None = None


@dataclass(frozen=True)
class ScanOptions:
    """How to scan (everything except the inputs and the flag policy)."""

    n: int = 13
    norm: NormConfig = DEFAULT_NORM
    eval_spec: TextSpec = TextSpec()
    corpus_spec: TextSpec = TextSpec()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    chunk_bytes: int = 1 << 20
    jobs: int = 1
    redact: bool = False
    hash_corpus: bool = True
    """Record each corpus file's sha256 in the report (computed beside the scan)."""
    accel: bool | None = None
    """Use the compiled kernels (extra ``fast``): None = when installed and the corpus on disk is
    at least ACCEL_MIN_BYTES (below that, loading them costs more than they save)."""

    def describe(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "normalization": self.norm.describe(),
            "hash": HASH_NAME,
        }


def scan(
    eval: EvalInput,
    corpus: CorpusInput | Mapping[str, CorpusInput] | None = None,
    *,
    index: PathLike | None = None,
    policy: FlagPolicy | None = None,
    options: ScanOptions | None = None,
    progress: ProgressFn | None = None,
    **kwargs: Any,
) -> Report:
    """Check every eval example against the corpus; return a Report (nothing is printed).

    `eval`: a path (str or Path), a list of Paths, or texts/records in memory (a list of str is
    texts, never paths). `corpus`: the same, where an iterable of texts or records is streamed once,
    so a generator can feed a corpus larger than memory; or a mapping of source name to any of
    those. `index`: instead of a corpus, a directory written by ``contam index build``.
    Keyword arguments override fields of :class:`ScanOptions`.

    >>> r = scan(["the quick brown fox jumps"], ["so the quick brown fox jumps high"], n=3)
    >>> r.examples[0].overlap_fraction, r.examples[0].longest_run
    (1.0, 5)
    """
    opts = options or ScanOptions()
    if kwargs:
        opts = replace(opts, **kwargs)
    if opts.n < 1:
        raise UsageError("--ngram-size must be at least 1")
    policy = policy or FlagPolicy()
    if index is not None and corpus is not None:
        raise UsageError("give a corpus or an index, not both")
    sources = resolve_sources(corpus, opts) if index is None else []
    opts = replace(opts, accel=_want_kernels(opts, sources))
    tk = Tokenizer(opts.norm, accel=opts.accel)
    records, eval_inputs, eval_index = index_eval(eval, opts, tk)
    _trim_heap()  # the build's freed temporaries, before worker processes copy this one
    if index is not None:
        header = load_header(index)
        header.check(opts.n, opts.norm)
        acc = _new_acc(eval_index, [s["name"] for s in header.sources], opts.redact)
        match_index(index, header, eval_index, acc)
        corpus_inputs = [
            {
                "source": s["name"],
                "index": str(index),
                "files": s["files"],
                "documents": s["documents"],
            }
            for s in header.sources
        ]
        runs = "exact" if header.positions else "chained"
    else:
        # NOTE: hashing releases the GIL, so the corpus files' digests are computed beside the
        # scan (another core when there is one) instead of after it.
        with ThreadPoolExecutor(max_workers=1) as hasher:
            digests = {
                p: hasher.submit(sha256_file, p)
                for s in sources
                for p in (s.paths if opts.hash_corpus else ())
            }
            acc = run_sources(eval_index, sources, opts, progress, tk)
            hashes = {p: f.result() for p, f in digests.items()}
        corpus_inputs = describe_sources(sources, acc, hashes)
        runs = "exact"
    fill_evidence_lines(acc)
    inputs = {"eval": eval_inputs, "corpus": corpus_inputs}
    return build_report(records, eval_index, acc, policy, opts, inputs, runs)


def _trim_heap() -> None:
    """Give the heap's free pages back to the OS (glibc; a no-op elsewhere).

    NOTE: forked workers start with this process's resident pages, so memory the index build
    freed but the heap kept would count again in each of them.
    """
    if sys.platform != "linux":
        return
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _want_kernels(opts: ScanOptions, sources: list[Source]) -> bool:
    if opts.accel is not None:
        return opts.accel
    on_disk = sum(p.stat().st_size for s in sources for p in s.paths)
    return on_disk >= ACCEL_MIN_BYTES and kernels() is not None


def load_eval(eval: EvalInput, opts: ScanOptions) -> tuple[list[Record], list[dict[str, Any]]]:
    """The eval records and a description of where they came from."""
    records, describe = _eval_records(eval, opts)
    listed = list(records)
    return listed, describe(listed)


def index_eval(
    eval: EvalInput, opts: ScanOptions, tk: Tokenizer
) -> tuple[list[Record], list[dict[str, Any]], EvalIndex]:
    """:func:`load_eval` and the eval index in one pass over the records.

    Each text is dropped once hashed: the records returned have empty texts (the index and its
    digests hold all that is needed of them), so a large eval set is never in memory whole.
    """
    refs: list[Record] = []
    records, describe = _eval_records(eval, opts)

    def texts() -> Iterator[str]:
        for r in records:
            refs.append(Record(r.id, "", Locator(r.locator.path, r.locator.line)))
            yield r.text

    eval_index = build_eval_index(texts(), opts.n, opts.norm, tk)
    return refs, describe(refs), eval_index


def _eval_records(
    eval: EvalInput, opts: ScanOptions
) -> tuple[Iterable[Record], Callable[[list[Record]], list[dict[str, Any]]]]:
    """The eval records (streamed from files), and how to describe them once all are read."""
    if isinstance(eval, (str, os.PathLike)) or (
        isinstance(eval, Sequence) and eval and all(isinstance(p, os.PathLike) for p in eval)
    ):
        paths = [eval] if isinstance(eval, (str, os.PathLike)) else list(eval)
        records = iter_eval(paths, opts.eval_spec, opts.include, opts.exclude)
        return records, lambda seen: _describe_eval_files(paths, seen, opts)
    if isinstance(eval, Mapping):
        items: Iterable[str | Record] = [
            Record(str(k), v, Locator("<memory>", record=i))
            for i, (k, v) in enumerate(eval.items())
        ]
    else:
        items = cast("Iterable[str | Record]", eval)
    in_memory = (_as_record(x, i, "<memory>") for i, x in enumerate(items))
    return in_memory, lambda seen: [{"path": "<memory>", "sha256": None, "records": len(seen)}]


def _describe_eval_files(
    paths: Sequence[PathLike], records: list[Record], opts: ScanOptions
) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for r in records:
        counts[r.locator.path] = counts.get(r.locator.path, 0) + 1
    files = [f for p in paths for f in iter_files(p, opts.include, opts.exclude)]
    return [
        {"path": str(f), "sha256": sha256_file(f), "records": counts.get(str(f), 0)} for f in files
    ]


def _as_record(x: str | Record, i: int, where: str) -> Record:
    if isinstance(x, Record):
        return x
    if isinstance(x, str):
        return Record(str(i), x, Locator(where, record=i))
    raise TypeError(f"expected str or Record, got {type(x).__name__}")


def resolve_sources(
    corpus: CorpusInput | Mapping[str, CorpusInput] | None, opts: ScanOptions
) -> list[Source]:
    """Turn the `corpus` argument into named sources."""
    if corpus is None:
        raise UsageError("no corpus given: use --corpus PATH or --source NAME=PATH")
    if isinstance(corpus, Mapping):
        return [_source(str(k), v, opts) for k, v in corpus.items()]
    return [_source("corpus", corpus, opts)]


def _source(name: str, value: CorpusInput, opts: ScanOptions) -> Source:
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    if isinstance(value, Sequence) and value and all(isinstance(v, os.PathLike) for v in value):
        files: list[Path] = []
        for p in value:
            files.extend(iter_files(p, opts.include, opts.exclude))  # type: ignore[arg-type]
        return Source(name, tuple(files))
    return Source(name, stream=cast("Iterable[str | Record]", value))


# -- running the corpus -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Shard:
    source: int
    items: tuple[tuple[int, str, tuple[int, int] | None], ...]
    """(file ordinal within the source, path, byte range or None)."""
    size: int


def run_sources(
    index: EvalIndex,
    sources: list[Source],
    opts: ScanOptions,
    progress: ProgressFn | None,
    tk: Tokenizer,
) -> Accumulator:
    """Stream every source past the index; in worker processes when opts.jobs > 1."""
    acc = _new_acc(index, [s.name for s in sources], opts.redact)
    shards = [sh for s, src in enumerate(sources) for sh in _shards(s, src, opts)]
    jobs = opts.jobs if opts.jobs > 0 else (os.cpu_count() or 1)
    if jobs > 1 and len(shards) > 1:
        _run_parallel(index, sources, opts, shards, jobs, acc, progress)
    else:
        for sh in shards:
            _run_shard_into(acc, index, tk, sh, opts, progress)
    for s, src in enumerate(sources):
        if src.stream is not None:
            for batch in iter_batches(_stream_records(src.stream), s, opts.chunk_bytes):
                acc.add_batch(index, tk, batch)
                if progress:
                    progress(sum(len(r) for r in batch.raw))
    return acc


def _new_acc(index: EvalIndex, names: list[str], redact: bool) -> Accumulator:
    return Accumulator(
        n_sources=len(names),
        n_grams=len(index.grams),
        n_examples=index.n_examples,
        source_names=names,
        redact=redact,
    )


def _stream_records(stream: Iterable[str | Record]) -> Iterator[tuple[Record, int]]:
    for i, x in enumerate(stream):
        yield _as_record(x, i, "<stream>"), i


def _shards(s: int, src: Source, opts: ScanOptions) -> list[_Shard]:
    sizes = [f.stat().st_size for f in src.paths]
    # NOTE: the plan depends on the data only, never on --jobs, so that every job count reads the
    # same records with the same locators (byte-range records carry offsets, not line numbers).
    target = min(SHARD_BYTES, max(MIN_SHARD_BYTES, sum(sizes) // 32))
    items: list[tuple[int, str, tuple[int, int] | None, int]] = []
    for ordinal, (f, size) in enumerate(zip(src.paths, sizes)):
        if size > target and f.suffix in (".jsonl", ".ndjson"):
            pieces = -(-size // target)
            step = -(-size // pieces)
            items.extend(
                (ordinal, str(f), (a, min(a + step, size)), min(step, size - a))
                for a in range(0, size, step)
            )
        else:
            items.append((ordinal, str(f), None, size))
    shards: list[_Shard] = []
    group: list[tuple[int, str, tuple[int, int] | None]] = []
    size_sum = 0
    for ordinal, path, rng, size in items:
        group.append((ordinal, path, rng))
        size_sum += size
        if size_sum >= target or rng is not None:
            shards.append(_Shard(s, tuple(group), size_sum))
            group, size_sum = [], 0
    if group:
        shards.append(_Shard(s, tuple(group), size_sum))
    return shards


def _shard_batches(sh: _Shard, opts: ScanOptions, acc: Accumulator) -> Iterator[DocBatch]:
    for ordinal, path, rng in sh.items:
        base = ordinal << ORDER_FILE_SHIFT
        lines_read: list[int] = []
        for tb in iter_text_batches(
            path,
            spec=opts.corpus_spec,
            byte_range=rng,
            chunk_bytes=opts.chunk_bytes,
            line_count=lines_read,
        ):
            order = np.array(tb.offsets, dtype=np.int64)
            if tb.first_ordinal >= 0 and (order < 0).any():  # no byte offsets: record ordinals
                order = np.arange(len(order), dtype=np.int64) + tb.first_ordinal
            ranged = ((path, rng[0]), tb.lines) if rng is not None else None
            yield DocBatch(sh.source, tb.texts, order + base, tb.record, ranged)
        if rng is not None:
            acc.range_lines[(path, rng[0])] = lines_read[0] if lines_read else 0


def _run_shard_into(
    acc: Accumulator,
    index: EvalIndex,
    tk: Tokenizer,
    sh: _Shard,
    opts: ScanOptions,
    progress: ProgressFn | None,
) -> None:
    for batch in _shard_batches(sh, opts, acc):
        acc.add_batch(index, tk, batch)
    if progress:
        progress(sh.size)


_WORKER: dict[str, Any] = {}


def _init_worker(index: EvalIndex, sources: list[Source], opts: ScanOptions) -> None:
    _WORKER.update(
        index=index, sources=sources, opts=opts, tk=Tokenizer(opts.norm, accel=opts.accel)
    )


def _work(sh: _Shard) -> Accumulator:
    w = _WORKER
    acc = _new_acc(w["index"], [s.name for s in w["sources"]], w["opts"].redact)
    _run_shard_into(acc, w["index"], w["tk"], sh, w["opts"], None)
    return acc


def _run_parallel(
    index: EvalIndex,
    sources: list[Source],
    opts: ScanOptions,
    shards: list[_Shard],
    jobs: int,
    acc: Accumulator,
    progress: ProgressFn | None,
) -> None:
    file_sources = [Source(s.name, s.paths) for s in sources]  # streams stay in this process
    ctx = get_context("fork") if "fork" in _start_methods() else get_context()
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(shards)),
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(index, file_sources, opts),
    ) as pool:
        for sh, part in zip(shards, pool.map(_work, shards)):
            acc.merge(part)
            if progress:
                progress(sh.size)


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def fill_evidence_lines(acc: Accumulator) -> None:
    """Turn range-relative evidence lines into file lines, from the lines each range read."""
    lines_before: dict[tuple[str, int], int] = {}  # (path, range start) -> lines in earlier ranges
    total: dict[str, int] = {}
    for (path, start), n in sorted(acc.range_lines.items()):
        lines_before[(path, start)] = total.get(path, 0)
        total[path] = total.get(path, 0) + n
    for key, ev in list(acc.evidence.items()):
        if ev.line_base is not None and ev.line is not None:
            line = ev.line + lines_before[ev.line_base]
            acc.evidence[key] = replace(ev, line=line, line_base=None)


def describe_sources(
    sources: list[Source], acc: Accumulator, hashes: Mapping[Path, str]
) -> list[dict]:
    out = []
    for s, src in enumerate(sources):
        out.append(
            {
                "source": src.name,
                "files": [
                    {"path": str(p), "bytes": p.stat().st_size, "sha256": hashes.get(p)}
                    for p in src.paths
                ],
                "streamed": src.stream is not None,
                "documents": int(acc.documents[s]),
                "text_bytes": int(acc.text_bytes[s]),
            }
        )
    return out


# -- results ------------------------------------------------------------------------------------


def build_report(
    records: Sequence[Record],
    index: EvalIndex,
    acc: Accumulator,
    policy: FlagPolicy,
    opts: ScanOptions,
    inputs: dict[str, Any],
    runs: str = "exact",
) -> Report:
    """Combine the accumulated matches with the flag policy into per-example results."""
    n = len(index.n_tokens)
    total = index.total_ngrams
    scorable = index.scorable
    matched = acc.matched_any(index)
    with np.errstate(invalid="ignore", divide="ignore"):
        overlap = np.where(scorable, matched / np.maximum(total, 1), 0.0)
    run = acc.best_len.max(axis=0) if len(acc.source_names) else np.zeros(n, np.int64)
    z = np.zeros(n)
    z[scorable] = zscores(overlap[scorable])
    results = _example_results(records, index, acc, policy, matched, total, overlap, run, z)
    # "exact": runs are verbatim inside one document; "chained": consecutive matched n-grams,
    # possibly from different documents (an index built without positions).
    config = {**opts.describe(), "runs": runs, "policy": policy.describe()}
    stats = {
        "scorable": int(scorable.sum()),
        "overlap_mean": float(overlap[scorable].mean()) if scorable.any() else None,
        "overlap_std": float(overlap[scorable].std()) if scorable.any() else None,
        "eval_ngrams_distinct": int(len(index.grams)),
        "corpus_documents": int(acc.documents.sum()),
        "corpus_text_bytes": int(acc.text_bytes.sum()),
    }
    return Report(results, config, inputs, __version__, opts.redact, stats)


def _example_results(
    records: Sequence[Record],
    index: EvalIndex,
    acc: Accumulator,
    policy: FlagPolicy,
    matched: np.ndarray,
    total: np.ndarray,
    overlap: np.ndarray,
    run: np.ndarray,
    z: np.ndarray,
) -> ExampleTable:
    """Every example's result, as an ExampleTable (columns, not one object per example).

    Only the examples with a match in some source (usually few) get per-source results, a best
    source and evidence, one by one; the flag rules run once per distinct (overlap, run, z) of
    the others, which mostly share one.
    """
    names = acc.source_names
    n = len(index.n_tokens)
    ids = [r.id for r in records]
    locators = [r.locator for r in records]
    if len(ids) != n:
        raise ValueError(f"{len(ids)} records for {n} indexed examples")
    scorable = np.asarray(index.scorable, dtype=bool)
    digests = index.digests
    fps = fingerprints(digests)
    detail = np.zeros(0, dtype=np.int64)
    if names:
        per_src_matched = acc.matched_counts(index)
        detail = np.flatnonzero((per_src_matched > 0).any(axis=0) | (run > 0))
        best = np.argmax(acc.best_len, axis=0)
    reasons = {}
    best_source = {}
    per_source = {}
    evidence = {}
    if len(detail):
        cols = zip(
            detail.tolist(),
            total[detail].tolist(),
            overlap[detail].tolist(),
            run[detail].tolist(),
            z[detail].tolist(),
            scorable[detail].tolist(),
            best[detail].tolist(),
            per_src_matched[:, detail].T.tolist(),
            acc.best_len[:, detail].T.tolist(),
        )
        for e, tot, ov, rn, ze, scor, b, src_matched, src_run in cols:
            ps = {
                names[s]: SourceResult(m, m / tot, src_run[s])
                for s, m in enumerate(src_matched)
                if m > 0
            }
            per_source[e] = ps
            if rn > 0:
                best_source[e] = names[b]
                fps[e] = fingerprint(digests[e], names[b])
                ev = acc.evidence.get((b, e))
                if ev is not None:
                    evidence[e] = ev
            if scor:
                by_source = {k: (v.overlap_fraction, v.longest_run) for k, v in ps.items()}
                reasons[e] = tuple(policy.reasons(overlap=ov, run=rn, z=ze, per_source=by_source))
    plain = scorable.copy()
    plain[detail] = False
    for members, found in _plain_reasons(policy, np.flatnonzero(plain), overlap, run, z):
        reasons.update(dict.fromkeys(members, found))
    return ExampleTable(
        ids=ids,
        eval_paths=[loc.path for loc in locators],
        eval_lines=[loc.line for loc in locators],
        n_tokens=index.n_tokens,
        total_ngrams=total,
        matched_ngrams=matched,
        scorable=scorable,
        overlap=overlap,
        longest_run=run,
        zscore=_round6(z, scorable),
        fingerprints=fps,
        reasons=reasons,
        best_source=best_source,
        per_source=per_source,
        evidence=evidence,
    )


def _plain_reasons(
    policy: FlagPolicy, plain: np.ndarray, overlap: np.ndarray, run: np.ndarray, z: np.ndarray
) -> Iterator[tuple[list[int], tuple[Any, ...]]]:
    """For the scorable examples `plain`, which match in no source: groups of examples and the
    reasons (when any) they share, from one policy call per distinct (overlap, run, z)."""
    # NOTE: grouped by bit pattern, so each group's values are exactly those of its examples.
    keys = (z[plain].view(np.int64), run[plain].astype(np.int64), overlap[plain].view(np.int64))
    order, bounds = _groups(keys)
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        e = int(plain[order[lo]])
        found = policy.reasons(
            overlap=float(overlap[e]), run=int(run[e]), z=float(z[e]), per_source={}
        )
        if found:
            yield plain[order[lo:hi]].tolist(), tuple(found)


def _round6(z: np.ndarray, scorable: np.ndarray) -> np.ndarray:
    """``round(z, 6)`` where scorable (Python's correctly rounded decimal rounding, which numpy's
    does not match), computed once per distinct value."""
    values = z[scorable]
    order, bounds = _groups((values.view(np.int64),))
    firsts = values[order[bounds[:-1]]].tolist()
    rounded = np.array([round(v, 6) for v in firsts], dtype=np.float64)
    grouped = np.empty(len(values))
    grouped[order] = np.repeat(rounded, np.diff(bounds))
    out = np.zeros(len(z))
    out[scorable] = grouped
    return out


def _groups(keys: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Rows with equal `keys` (parallel int arrays) as groups: ``order[bounds[g]:bounds[g+1]]``
    are the rows of group g."""
    order = np.lexsort(keys)
    new = np.zeros(len(order), dtype=bool)
    new[:1] = True
    for k in keys:
        sk = k[order]
        new[1:] |= sk[1:] != sk[:-1]
    return order, np.append(np.flatnonzero(new), len(order))
