"""scan(): read the eval set, index it, stream every corpus source past it, build the Report."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.corpus_index import load_header, match_index
from contam_cli.engine.corpus_pass import new_accumulator, run_corpus
from contam_cli.engine.doc_frequency import document_frequency, rereadable
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.executor import Executor, make_executor
from contam_cli.engine.fuzzy import FuzzyIndex
from contam_cli.engine.fuzzy.shared import WithFuzzy
from contam_cli.engine.options import ScanOptions
from contam_cli.engine.shards import Source, plan_shards
from contam_cli.errors import ArgumentError, UsageError
from contam_cli.features.boilerplate import Suppression, suppress
from contam_cli.features.corpus_hashes import corpus_hashes
from contam_cli.features.eval_side import (
    corpus_warnings,
    eval_files_bytes,
    eval_warnings,
    index_eval,
    index_eval_refs,
    load_eval,
)
from contam_cli.features.eval_texts import attach_eval_texts
from contam_cli.features.fuzzy_report import add_fuzzy, check_fuzzy_input, fuzzy_eval_index
from contam_cli.features.ngram_report import IndexCounts, ngram_report
from contam_cli.features.sources import check_documents, describe_sources, resolve_sources
from contam_cli.io.accel import chosen
from contam_cli.io.discover import iter_files, unread_warnings
from contam_cli.io.inputs import classify
from contam_cli.io.model import Record
from contam_cli.io.remote import RemoteFile
from contam_cli.io.roles import check_roles
from contam_cli.policy import FlagPolicy
from contam_cli.policy.thresholds import check_corpus
from contam_cli.report import Report
from contam_cli.text import Tokenizer

__all__ = [
    "CorpusScan",
    "ScanOptions",
    "Source",
    "check_input_roles",
    "index_eval",
    "load_eval",
    "resolve_sources",
    "scan",
    "scan_corpus",
]

ProgressFn = Callable[[int], None]


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
    check its files' sha256 first). Keyword arguments override fields of :class:`ScanOptions`;
    ``fuzzy=FuzzyConfig()`` also runs the fuzzy (reworded-leak) detector, flagged by the policy's
    ``min_fuzzy`` (see :mod:`contam_cli.features.fuzzy_report`).

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
    _check_fuzzy_thresholds(policy, opts)
    if index is not None:
        if opts.fuzzy is not None:
            raise UsageError("the fuzzy detector aligns corpus text: give a corpus, not --index")
        return _scan_index(eval, Path(index), policy, opts, verify)
    sources = resolve_sources(corpus, opts)
    warnings = policy.check(opts.n, opts.norm, [s.name for s in sources])
    warnings += check_corpus(policy.thresholds, corpus)
    given = [eval, *(corpus.values() if isinstance(corpus, Mapping) else [corpus])]
    warnings += unread_warnings(given, opts.include, opts.exclude)
    check_input_roles(eval, [p for s in sources for p in s.paths], opts)
    done = scan_corpus(eval, sources, opts, progress=progress, executor=executor)
    acc, used, fuzzy_index = done.acc, done.opts, done.fuzzy_index
    corpus_inputs = describe_sources(sources, acc.documents.tolist(), acc.text_bytes.tolist(),
                                     done.hashes, acc.replaced, acc.unread_turns)  # fmt: skip
    replaced = [{"path": p, "lone_surrogates": n} for p, n in sorted(acc.replaced.items())]
    inputs = {"eval": done.eval_inputs, "corpus": corpus_inputs}
    # NOTE: which executor ran the shards is not recorded: every one gives the same report.
    config = {**used.describe(), "runs": "exact", **done.boilerplate_config()}
    found = [*warnings, *eval_warnings(done.eval_inputs), *eval_warnings(replaced)]
    found += [*corpus_warnings(corpus_inputs), *done.warnings]
    records, counts = done.records, IndexCounts.of(done.index, acc)
    # NOTE: the eval index is done with: freed before the report is built and the eval texts
    # are read back (1.3 GB for 1,000,000 examples, which would otherwise add to the peak).
    del done
    report = ngram_report(records, counts, acc, policy, used, inputs, config)
    if fuzzy_index is not None:
        assert isinstance(acc, WithFuzzy)
        report = add_fuzzy(report, fuzzy_index, acc, policy, eval, used)
    del acc, fuzzy_index
    found += report.warnings
    return attach_eval_texts(replace(report, warnings=tuple(found)), eval, opts)


@dataclass(frozen=True)
class CorpusScan:
    """What one scan of the corpus found, before any flag policy: the eval side (records with
    empty texts, their description, the index scanned), the accumulated matches, the corpus
    files' sha256, and the boilerplate suppression when it was on."""

    records: Sequence[Record]
    eval_inputs: list[dict[str, Any]]
    index: EvalIndex
    acc: Accumulator
    opts: ScanOptions
    """The options as used (the kernels decided)."""
    hashes: dict[Path, str]
    suppression: Suppression | None = None
    doc_freq: np.ndarray | None = None
    """With ``frequencies`` or ``ignore_common``: per gram of `full_index`, its documents."""
    full_index: EvalIndex | None = None
    """The index before suppression (when ``doc_freq`` is set)."""
    fuzzy_index: FuzzyIndex | None = None
    """The fuzzy detector's eval side, when it ran (then `acc` is a WithFuzzy)."""

    @property
    def warnings(self) -> list[str]:
        return self.suppression.warnings() if self.suppression is not None else []

    def boilerplate_config(self) -> dict[str, Any]:
        return {"boilerplate": self.suppression.describe()} if self.suppression else {}


def scan_corpus(
    eval: Any,
    sources: list[Source],
    opts: ScanOptions,
    *,
    progress: ProgressFn | None = None,
    executor: Executor | None = None,
    frequencies: bool = False,
) -> CorpusScan:
    """Index `eval`, stream every source past it; `frequencies`: also count each eval n-gram's
    documents (a first pass, as ``ignore_common`` does)."""
    if opts.fuzzy is not None:
        check_fuzzy_input(eval)
    n_shards = sum(len(plan_shards(s, src)) for s, src in enumerate(sources))
    executor = executor or make_executor(opts.jobs, n_shards)
    # NOTE: first, so that a hashing process has the whole serial start to itself. Remote
    # objects are recorded by size and ETag: a sha256 would read them once more.
    local = [p for s in sources for p in s.paths if isinstance(p, Path)]
    hashing = corpus_hashes(local if opts.hash_corpus else [], executor)
    try:
        opts = replace(opts, accel=_want_kernels(opts, sources, eval))
        tk = Tokenizer(opts.norm, accel=opts.accel)
        records, eval_inputs, eval_index = index_eval_refs(eval, opts, tk)
        fuzzy = fuzzy_eval_index(eval, opts, len(records), tk) if opts.fuzzy is not None else None
        doc_freq, full, suppression = None, None, None
        if frequencies or opts.ignore_common is not None:
            _check_rereadable(sources)
            _trim_heap()
            doc_freq = document_frequency(eval_index, sources, opts, executor, progress=progress)
            full = eval_index
        if opts.ignores:
            suppression = suppress(eval_index, opts, doc_freq)
            eval_index = suppression.index
        _trim_heap()  # the build's freed temporaries, before worker processes copy this process
        acc = run_corpus(
            eval_index,
            sources,
            opts,
            executor,
            progress=progress,
            on_start=hashing.start,
            fuzzy=fuzzy,
        )
        hashes = hashing.results()
    finally:
        hashing.close()
    check_documents(sources, acc.documents.tolist())
    return CorpusScan(
        records, eval_inputs, eval_index, acc, opts, hashes, suppression, doc_freq, full, fuzzy
    )


def _check_fuzzy_thresholds(policy: FlagPolicy, opts: ScanOptions) -> None:
    """Per-source fuzzy thresholds must come from the fuzzy settings of this scan, and need
    one: without the fuzzy detector their rule would be dropped without a word."""
    check = getattr(policy.thresholds, "check_fuzzy", None)
    fuzzy = [name for name, t in policy.thresholds.items() if t.fuzzy is not None]
    if fuzzy and opts.fuzzy is None:
        origin = getattr(policy.thresholds, "origin", "--thresholds")
        raise UsageError(
            f"{origin}: holds fuzzy thresholds (source {', '.join(map(repr, fuzzy))}) that only "
            "a scan with --fuzzy applies: add --fuzzy (with a corpus, not --index), or use "
            "thresholds calibrated without --fuzzy"
        )
    if opts.fuzzy is not None and check is not None and fuzzy:
        check(opts.describe()["fuzzy"])


def check_input_roles(
    eval: Any, corpus_files: Sequence[Path | RemoteFile], opts: ScanOptions
) -> None:
    """``--roles`` must name roles the inputs' chat turns have (eval and corpus together; `eval`
    None: a corpus alone, as an index build reads it)."""
    roles = tuple(dict.fromkeys((*(opts.eval_spec.roles or ()), *(opts.corpus_spec.roles or ()))))
    if not roles:
        return
    paths = classify(eval, what="eval").paths if eval is not None else ()
    eval_files = [f for p in paths for f in iter_files(p, opts.include, opts.exclude)]
    # NOTE: check_roles reads a RemoteFile as it reads a path (detect_format, open_binary).
    check_roles(cast("list[Path]", [*eval_files, *corpus_files]), roles, "inputs")


def _check_rereadable(sources: list[Source]) -> None:
    for src in sources:
        if src.stream is not None and not rereadable(src.stream):
            raise ArgumentError(
                f"source {src.name!r}: counting common n-grams reads the corpus twice; give a "
                "list of texts or paths, not a one-shot iterator"
            )


def _options(options: ScanOptions | None, kwargs: dict[str, Any]) -> ScanOptions:
    if options is not None and not isinstance(options, ScanOptions):
        raise ArgumentError(f"options must be ScanOptions, got {type(options).__name__}")
    opts = options or ScanOptions()
    try:
        return replace(opts, **kwargs) if kwargs else opts
    except TypeError as e:  # an unknown keyword
        raise ArgumentError(f"scan(): {e}") from None


def _scan_index(
    eval: Any, index: Path, policy: FlagPolicy, opts: ScanOptions, verify: bool
) -> Report:
    if opts.ignore_common is not None:
        raise UsageError(
            "--ignore-common counts documents in a corpus; with --index use --ignore-from"
        )
    header = load_header(index)
    header.check(opts.n, opts.norm, index)
    corpus_spec = header.corpus_spec(opts.corpus_spec, index)
    policy_warnings = policy.check(opts.n, opts.norm, [s["name"] for s in header.sources])
    given = header.given_paths(index)
    policy_warnings += check_corpus(policy.thresholds, paths=given)
    if getattr(policy.thresholds, "calibrated_on", None) and len(given) < len(header.sources):
        policy_warnings.append(
            f"{index}: the index records no corpus paths for some sources (built before contam "
            "recorded them): the thresholds' calibrated_on was not checked against them; rebuild "
            "it to have them checked"
        )
    check_input_roles(eval, [], opts)
    verified = header.verify(index) if verify else None
    if verify and not header.records_roots:
        policy_warnings.append(
            f"{index}: the index records no corpus directories (built from files, or before "
            "contam recorded them): --verify checked its files, not files added beside them"
        )
    if not verify and (added := header.added_files(index)):
        names = ", ".join(str(f) for f, _ in added[:5]) + (" ..." if len(added) > 5 else "")
        policy_warnings.append(
            f"{index}: {len(added)} file(s) in its corpus directories are not in the index "
            f"(added since it was built; not checked): {names}; rebuild it (--verify refuses)"
        )
    opts = replace(opts, accel=chosen(opts.accel, eval_files_bytes(eval, opts)))
    tk = Tokenizer(opts.norm, accel=opts.accel)
    records, eval_inputs, eval_index = index_eval_refs(eval, opts, tk)
    suppression = suppress(eval_index, opts, None) if opts.ignores else None
    if suppression is not None:
        eval_index = suppression.index
        policy_warnings += suppression.warnings()
    acc = new_accumulator(eval_index, [s["name"] for s in header.sources], opts.redact)
    warnings = match_index(index, header, eval_index, acc, corpus_spec)
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
    if suppression is not None:
        config["boilerplate"] = suppression.describe()
    report = ngram_report(records, eval_index, acc, policy, opts, inputs, config)
    documents = sum(int(s["documents"]) for s in header.sources)
    stats = {**report.stats, "corpus_documents": documents}
    unread = unread_warnings([eval], opts.include, opts.exclude)
    found = (*policy_warnings, *unread, *eval_warnings(eval_inputs))
    found += (*corpus_warnings(corpus_inputs), *warnings)  # NOTE: as the index build read it
    return attach_eval_texts(replace(report, stats=stats, warnings=found), eval, opts)


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


def _want_kernels(opts: ScanOptions, sources: list[Source], eval: Any) -> bool:
    """Whether this scan uses the compiled kernels (:func:`~contam_cli.io.accel.chosen`, by the
    corpus and eval files on disk). The eval reader follows the tokenizer's choice."""
    on_disk = sum(p.stat().st_size for s in sources for p in s.paths)
    return chosen(opts.accel, on_disk + eval_files_bytes(eval, opts))
