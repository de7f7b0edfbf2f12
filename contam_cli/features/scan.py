"""scan(): read the eval set, index it, stream every corpus source past it, build the Report."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from contam_cli.engine.corpus_index import load_header, match_index
from contam_cli.engine.corpus_pass import new_accumulator, run_corpus
from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.engine.executor import Executor, make_executor
from contam_cli.engine.options import ScanOptions
from contam_cli.engine.shards import Source, plan_shards
from contam_cli.errors import ArgumentError, UsageError
from contam_cli.features.ngram_report import ngram_report
from contam_cli.io.discover import iter_files, sha256_file
from contam_cli.io.inputs import as_record, classify
from contam_cli.io.model import Locator, Record
from contam_cli.io.readers import iter_eval
from contam_cli.policy import FlagPolicy
from contam_cli.report import Report
from contam_cli.text import Tokenizer
from contam_cli.text.accel import kernels

__all__ = ["ScanOptions", "Source", "index_eval", "load_eval", "resolve_sources", "scan"]

ProgressFn = Callable[[int], None]
#: Below this much corpus on disk, loading the compiled kernels costs more than they save.
ACCEL_MIN_BYTES = 64 << 20


def scan(
    eval: Any,
    corpus: Any = None,
    *,
    index: str | Path | None = None,
    policy: FlagPolicy | None = None,
    options: ScanOptions | None = None,
    progress: ProgressFn | None = None,
    executor: Executor | None = None,
    verify: bool = False,
    **kwargs: Any,
) -> Report:
    """Check every eval example against the corpus; return a Report (nothing is printed).

    `eval` and every corpus follow one rule (:mod:`contam_cli.io.inputs`): a ``str`` or a Path is
    a path, always; texts in memory are an iterable of str, Records or dict records (a generator
    streams a corpus larger than memory). `corpus`: one such input, or a mapping of source name to
    one. `index`: instead of a corpus, a directory written by ``contam index build`` (`verify`:
    check its files' sha256 first). Keyword arguments override fields of :class:`ScanOptions`.

    >>> r = scan(["the quick brown fox jumps"], ["so the quick brown fox jumps high"], n=3)
    >>> r.examples[0].overlap_fraction, r.examples[0].longest_run
    (1.0, 5)
    """
    opts = _options(options, kwargs)
    policy = FlagPolicy() if policy is None else policy
    if not isinstance(policy, FlagPolicy):
        raise ArgumentError(f"policy must be a FlagPolicy, got {type(policy).__name__}")
    if index is not None and corpus is not None:
        raise UsageError("give a corpus or an index, not both")
    if index is not None:
        return _scan_index(eval, Path(index), policy, opts, verify)
    sources = resolve_sources(corpus, opts)
    warnings = policy.check(opts.n, opts.norm, [s.name for s in sources])
    opts = replace(opts, accel=_want_kernels(opts, sources))
    tk = Tokenizer(opts.norm, accel=opts.accel)
    records, eval_inputs, eval_index = index_eval(eval, opts, tk)
    _trim_heap()  # the build's freed temporaries, before worker processes copy this process
    n_shards = sum(len(plan_shards(s, src)) for s, src in enumerate(sources))
    executor = executor or make_executor(opts.jobs, n_shards)
    hashing = _Hashing([p for s in sources for p in s.paths] if opts.hash_corpus else [])
    try:
        acc = run_corpus(
            eval_index, sources, opts, executor, progress=progress, on_start=hashing.start
        )
        hashes = hashing.results()
    finally:
        hashing.close()
    _check_documents(sources, acc.documents.tolist())
    corpus_inputs = describe_sources(
        sources, acc.documents.tolist(), acc.text_bytes.tolist(), hashes
    )
    inputs = {"eval": eval_inputs, "corpus": corpus_inputs}
    # NOTE: which executor ran the shards is not recorded: every one gives the same report.
    config = {**opts.describe(), "runs": "exact"}
    report = ngram_report(records, eval_index, acc, policy, opts, inputs, config)
    return replace(report, warnings=(*warnings, *report.warnings))


def _options(options: ScanOptions | None, kwargs: dict[str, Any]) -> ScanOptions:
    if options is not None and not isinstance(options, ScanOptions):
        raise ArgumentError(f"options must be ScanOptions, got {type(options).__name__}")
    opts = options or ScanOptions()
    try:
        return replace(opts, **kwargs) if kwargs else opts
    except TypeError as e:  # an unknown keyword
        raise ArgumentError(f"scan(): {e}") from None


class _Hashing:
    """The corpus files' sha256, computed in a thread beside the scan (hashing releases the GIL),
    started only once the workers exist (nothing may fork while a thread runs)."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[Path, Future[str]] = {}

    def start(self) -> None:
        if self.paths:
            self.pool = ThreadPoolExecutor(max_workers=1)
            self.futures = {p: self.pool.submit(sha256_file, p) for p in self.paths}

    def results(self) -> dict[Path, str]:
        return {p: f.result() for p, f in self.futures.items()}

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _scan_index(
    eval: Any, index: Path, policy: FlagPolicy, opts: ScanOptions, verify: bool
) -> Report:
    header = load_header(index)
    header.check(opts.n, opts.norm)
    policy_warnings = policy.check(opts.n, opts.norm, [s["name"] for s in header.sources])
    verified = header.verify(index) if verify else None
    tk = Tokenizer(opts.norm, accel=opts.accel)
    records, eval_inputs, eval_index = index_eval(eval, opts, tk)
    acc = new_accumulator(eval_index, [s["name"] for s in header.sources], opts.redact)
    warnings = match_index(index, header, eval_index, acc)
    corpus_inputs = [
        {
            "source": s["name"],
            "index": str(index),
            "files": s["files"],
            "documents": s["documents"],
            "verified": verified,
        }
        for s in header.sources
    ]
    inputs = {"eval": eval_inputs, "corpus": corpus_inputs}
    runs = "exact" if header.positions else "chained"
    config = {**opts.describe(), "runs": runs}
    report = ngram_report(records, eval_index, acc, policy, opts, inputs, config)
    documents = sum(int(s["documents"]) for s in header.sources)
    stats = {**report.stats, "corpus_documents": documents}
    return replace(report, stats=stats, warnings=(*policy_warnings, *warnings))


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


# -- the eval side ----------------------------------------------------------------------------


def load_eval(eval: Any, opts: ScanOptions) -> tuple[list[Record], list[dict[str, Any]]]:
    """The eval records and a description of where they came from."""
    records, describe = _eval_records(eval, opts)
    listed = list(records)
    if not listed:
        raise UsageError("the eval set holds no examples")
    return listed, describe(listed)


def index_eval(
    eval: Any, opts: ScanOptions, tk: Tokenizer
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
    if not refs:
        raise UsageError("the eval set holds no examples")
    return refs, describe(refs), eval_index


def _eval_records(
    eval: Any, opts: ScanOptions
) -> tuple[Iterable[Record], Callable[[list[Record]], list[dict[str, Any]]]]:
    """The eval records (streamed from files), and how to describe them once all are read."""
    given = classify(eval, what="eval")
    if given.paths:
        paths = list(given.paths)
        records = iter_eval(paths, opts.eval_spec, opts.include, opts.exclude)
        return records, lambda seen: _describe_eval_files(paths, seen, opts)
    assert given.memory is not None
    items = given.memory
    spec = opts.eval_spec
    in_memory = _unique(as_record(x, i, "<memory>", spec, role="eval") for i, x in enumerate(items))
    return in_memory, lambda seen: [{"path": "<memory>", "sha256": None, "records": len(seen)}]


def _unique(records: Iterable[Record]) -> Iterator[Record]:
    seen: dict[str, int] = {}
    for k, r in enumerate(records):
        first = seen.setdefault(r.id, k)
        if first != k:
            raise UsageError(
                f"<memory>[{k}]: duplicate id {r.id!r} (first seen at <memory>[{first}])"
            )
        yield r


def _describe_eval_files(
    paths: Sequence[Path], records: list[Record], opts: ScanOptions
) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for r in records:
        counts[r.locator.path] = counts.get(r.locator.path, 0) + 1
    files = [f for p in paths for f in iter_files(p, opts.include, opts.exclude)]
    return [
        {"path": str(f), "sha256": sha256_file(f), "records": counts.get(str(f), 0)} for f in files
    ]


# -- the corpus side ---------------------------------------------------------------------------


def resolve_sources(corpus: Any, opts: ScanOptions) -> list[Source]:
    """The `corpus` argument as named sources (one rule for every source, see scan())."""
    if corpus is None:
        raise UsageError("no corpus given: use --corpus PATH or --source NAME=PATH")
    if isinstance(corpus, Mapping):
        if not corpus:
            raise ArgumentError("corpus: an empty mapping of sources")
        return [_source(str(k), v, opts) for k, v in corpus.items()]
    return [_source("corpus", corpus, opts)]


def _source(name: str, value: object, opts: ScanOptions) -> Source:
    given = classify(value, what="corpus" if name == "corpus" else f"source {name!r}")
    if given.memory is not None:
        return Source(name, stream=given.memory)
    files = [f for p in given.paths for f in iter_files(p, opts.include, opts.exclude)]
    return Source(name, tuple(files))


def _check_documents(sources: list[Source], documents: list[int]) -> None:
    for src, n in zip(sources, documents):
        if n == 0:
            what = "corpus" if src.name == "corpus" else f"source {src.name!r}"
            raise UsageError(f"{what}: no documents to scan")


def describe_sources(
    sources: list[Source],
    documents: list[int],
    text_bytes: list[int],
    hashes: Mapping[Path, str],
) -> list[dict[str, Any]]:
    return [
        {
            "source": src.name,
            "files": [
                {"path": str(p), "bytes": p.stat().st_size, "sha256": hashes.get(p)}
                for p in src.paths
            ],
            "streamed": src.stream is not None,
            "documents": int(docs),
            "text_bytes": int(size),
        }
        for src, docs, size in zip(sources, documents, text_bytes)
    ]
