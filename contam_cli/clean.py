"""clean_eval() and clean_corpus(): the eval set without its leaked examples, the corpus without
the leaked text.

Eval side: scan, then copy every record that was not flagged byte for byte (JSONL/TXT lines, JSON
array elements), in input order, keeping blank lines; the flagged ones go to ``dirty_output``.

Corpus side (the GPT-3 / lm-eval decontamination rule): every corpus document holding an eval
n-gram loses each matched n-gram window plus ``window`` characters on each side (edges snapped
outward to whole tokens); the document is split there, pieces shorter than ``min_piece`` characters
are dropped, and a document needing more than ``max_splits`` cuts is dropped whole. A ``text``
record splits into one record per piece; a chat / multi-field record is cut inside each turn and
stays one record; a ``.txt`` document keeps its pieces separated by a blank line. Any output text
that would still hold an eval n-gram (new n-grams can form where pieces are joined) is dropped, so a
rescan of the cleaned corpus finds nothing. Files without a change are copied byte for byte.

Outputs are written atomically: a single file through a temp file and a rename, a directory by
building it beside the target and renaming it into place, so an interrupted run leaves nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal

import numpy as np
import orjson

from contam_cli._version import __version__
from contam_cli.engine import match_chunk
from contam_cli.errors import ContamError, InputError, OutputError, UsageError
from contam_cli.index import EvalIndex, build_eval_index
from contam_cli.model import Record
from contam_cli.ngrams import Tokenizer
from contam_cli.pipeline import EvalInput, PathLike, ProgressFn, ScanOptions, load_eval, scan
from contam_cli.policy import FlagPolicy
from contam_cli.records import (
    _ID_KEYS,  # NOTE: the id keys the readers auto-detect; split pieces suffix the same key.
    TextSpec,
    atomic_writer,
    detect_format,
    extract_text,
    iter_files,
    iter_records,
    open_binary,
    read_eval,
    write_atomic,
)
from contam_cli.report import ExampleResult, Report
from contam_cli.text import DEFAULT_NORM, NormConfig, token_spans

__all__ = [
    "MANIFEST_NAME",
    "CorpusCleanResult",
    "CutRule",
    "EvalCleanResult",
    "FileStats",
    "clean_corpus",
    "clean_eval",
]

#: Default manifest name inside OUTDIR: a hidden file, so readers (and later scans) skip it.
MANIFEST_NAME = ".contam-manifest.json"
MANIFEST_SCHEMA = "contam.clean/1"
Mode = Literal["cut-span", "drop-doc"]
CorpusArg = PathLike | Sequence[PathLike] | Mapping[str, PathLike | Sequence[PathLike]]
_BLOCK = 1 << 20
_PIECE_JOIN = "\n\n"
"""Between the kept pieces of one .txt document or one chat turn."""


@dataclass(frozen=True, slots=True)
class CutRule:
    """How leaked text is removed from a corpus document (GPT-3 / lm-eval defaults).

    With n=3, window=4 and min_piece=4, ``"aaaa bbbb. x y z. cccc dddd"`` holding the eval 3-gram
    ``x y z`` loses ``x y z`` plus 4 characters each side, widened to whole tokens
    (``"bbbb. x y z. cccc"``); the pieces ``"aaaa"`` and ``"dddd"`` remain (whitespace next to a
    cut is trimmed), each its own record.
    """

    mode: Mode = "cut-span"
    """``cut-span``: cut the matched spans out; ``drop-doc``: drop every document with a match."""
    window: int = 200
    """Characters removed on each side of every matched n-gram."""
    min_piece: int = 200
    """Pieces shorter than this (in characters) are dropped."""
    max_splits: int = 10
    """A document needing more cuts than this is dropped whole."""

    def __post_init__(self) -> None:
        if self.mode not in ("cut-span", "drop-doc"):
            raise UsageError(f"--mode must be cut-span or drop-doc, got {self.mode!r}")
        if min(self.window, self.min_piece, self.max_splits) < 0:
            raise UsageError("--window, --min-piece and --max-splits must be >= 0")

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "window": self.window,
            "min_piece": self.min_piece,
            "max_splits": self.max_splits,
        }


# ===============================================================================================
# Eval side


@dataclass(frozen=True)
class EvalCleanResult:
    """What clean_eval() did: the scan report, the removed examples, where the outputs went."""

    report: Report
    removed: tuple[ExampleResult, ...]
    """The flagged examples, in input order; none of them is in the output."""
    output: Path
    dirty_output: Path | None

    @property
    def kept(self) -> int:
        return len(self.report.examples) - len(self.removed)

    @property
    def changed(self) -> bool:
        return bool(self.removed)


def clean_eval(
    eval: PathLike | Sequence[PathLike],
    corpus: CorpusArg,
    output: PathLike,
    *,
    dirty_output: PathLike | None = None,
    policy: FlagPolicy | None = None,
    options: ScanOptions | None = None,
    force: bool = False,
    progress: ProgressFn | None = None,
    **kwargs: Any,
) -> EvalCleanResult:
    """Write the eval set minus the examples that scan() flags; return what was removed.

    One eval file gives one output file (compressed by its suffix; its format suffix must match
    the input's); several files or a directory give an output directory mirroring their relative
    paths (same names, so same formats and compression). Kept records are byte-identical to their
    input lines (JSONL, TXT) or array elements (JSON), blank lines stay, order is kept.
    ``dirty_output`` receives the flagged records the same way. ``force`` replaces a non-empty
    output directory. Keyword arguments override fields of :class:`ScanOptions`.
    """
    opts = _scan_options(options, kwargs)
    paths = _as_paths(eval)
    sources = _corpus_groups(corpus)
    inputs = [*paths, *(p for ps in sources.values() for p in ps)]
    single = len(paths) == 1 and not paths[0].is_dir()
    layout = _layout({"": paths}, opts)
    _check_eval_formats(layout, output if single else None, dirty_output if single else None)
    targets = [Path(output)] + ([Path(dirty_output)] if dirty_output is not None else [])
    _check_targets(targets, inputs, force=force, directory=not single)
    report = scan(paths, sources, policy=policy, options=opts, progress=progress)
    records = read_eval(paths, opts.eval_spec, opts.include, opts.exclude)
    flagged = _flagged_spans(report, records)
    spans = _spans_by_file(records)
    if single:
        _write_eval_files(layout, spans, flagged, targets, inputs, single=True)
    else:
        with ExitStack() as stack:
            stages = [stack.enter_context(_staged_dir(t, force, inputs)) for t in targets]
            _write_eval_files(layout, spans, flagged, stages, inputs, single=False)
    removed = tuple(e for e in report.examples if e.flagged)
    return EvalCleanResult(report, removed, Path(output), targets[1] if dirty_output else None)


def _check_eval_formats(
    layout: list[tuple[Path, str]], output: PathLike | None, dirty: PathLike | None
) -> None:
    for src, _ in layout:
        if detect_format(src) == "parquet":
            raise UsageError(f"{src}: clean cannot rewrite .parquet eval files byte for byte")
    for target in (output, dirty):
        if target is None:
            continue
        fmt = detect_format(layout[0][0])
        try:
            ok = detect_format(target) == fmt
        except InputError:
            ok = False
        if not ok:
            raise UsageError(
                f"{target}: the output keeps the input's format; give it a .{fmt} name "
                f"(optionally .gz/.bz2/.xz/.zst)"
            )


def _flagged_spans(report: Report, records: list[Record]) -> set[tuple[str, tuple[int, int]]]:
    """(path, span) of every flagged record; the report and the re-read records must agree."""
    if [e.id for e in report.examples] != [r.id for r in records]:
        raise InputError(records[0].locator.path, "the eval set changed while it was being cleaned")
    return {
        (r.locator.path, r.locator.span)  # type: ignore[misc]
        for e, r in zip(report.examples, records)
        if e.flagged
    }


def _spans_by_file(records: list[Record]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for r in records:
        assert r.locator.span is not None  # NOTE: every byte-copyable format records its span.
        out.setdefault(r.locator.path, []).append(r.locator.span)
    return out


def _write_eval_files(
    layout: list[tuple[Path, str]],
    spans: dict[str, list[tuple[int, int]]],
    flagged: set[tuple[str, tuple[int, int]]],
    targets: list[Path],
    inputs: list[Path],
    *,
    single: bool,
) -> None:
    """Write the kept records to targets[0] and the flagged ones to targets[1] (when given)."""
    with ExitStack() as stack:  # NOTE: every file commits only when all of them are written.
        for src, rel in layout:
            file_spans = spans.get(str(src), [])
            removed = [(str(src), s) in flagged for s in file_spans]
            for k, target in enumerate(targets):
                dirty = k == 1
                if dirty and not single and not any(removed):
                    continue
                keep = [r == dirty for r in removed]
                dest = target if single else target / rel
                out = stack.enter_context(atomic_writer(dest, inputs=inputs))
                _filter_records(src, file_spans, keep, out)


def _filter_records(
    src: Path, spans: list[tuple[int, int]], keep: list[bool], out: IO[bytes]
) -> None:
    """Copy `src` (decompressed) to `out` without the records whose `keep` is False."""
    if detect_format(src) == "json":
        data = _read_all(src)
        out.write(_rebuild_array(data, spans, [None if k else [] for k in keep]))
        return
    with open_binary(src) as fh:
        cursor, sink = _Cursor(fh), _LineSink(out)
        for (a, b), k in zip(spans, keep):
            gap, raw = cursor.read_to(a), cursor.read_to(b)
            sink.put(gap, raw if k else None)
        sink.put(cursor.rest(), b"")


# ===============================================================================================
# Byte-exact rewriting


class _Cursor:
    """Reads a (decompressed) stream forward, by absolute offsets."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.pos = 0

    def read_to(self, end: int) -> bytes:
        parts = []
        while self.pos < end:
            block = self.fh.read(end - self.pos)
            if not block:
                break
            parts.append(block)
            self.pos += len(block)
        return b"".join(parts)

    def rest(self) -> bytes:
        data = self.fh.read()
        self.pos += len(data)
        return data


class _LineSink:
    """Writes a line file back: gaps (terminators, blank lines) verbatim, records or replacements;
    a dropped record takes its line terminator with it."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.drop_terminator = False
        self.records = 0

    def put(self, gap: bytes, data: bytes | None) -> None:
        if self.drop_terminator:
            gap = gap[2:] if gap.startswith(b"\r\n") else gap[1:] if gap[:1] == b"\n" else gap
        self.out.write(gap)
        if data is not None:
            self.out.write(data)
        self.drop_terminator = data is None


def _rebuild_array(
    data: bytes, spans: list[tuple[int, int]], units: Sequence[Sequence[bytes] | None]
) -> bytes:
    """`data` with each JSON array element i replaced by units[i] (None: the element as it is).

    Elements keep their original separators (``,\\n  `` or ``, ``); text before the first and
    after the last element (the array's opening, an enclosing object) is kept as it is.
    """
    if not spans:
        return data
    seps = [data[spans[i][1] : spans[i + 1][0]] for i in range(len(spans) - 1)]
    default_sep = seps[0] if seps else b", "
    parts = [data[: spans[0][0]]]
    previous: int | None = None
    for i, ((a, b), unit) in enumerate(zip(spans, units)):
        for element in [data[a:b]] if unit is None else unit:
            if previous is not None:
                parts.append(seps[previous] if previous < len(seps) else default_sep)
            parts.append(element)
            previous = i
    parts.append(data[spans[-1][1] :])
    return b"".join(parts)


def _read_all(path: PathLike) -> bytes:
    with open_binary(path) as fh:
        return fh.read()


def _copy_prefix(src: Path, size: int, out: IO[bytes]) -> None:
    with open_binary(src) as fh:
        while size > 0:
            block = fh.read(min(_BLOCK, size))
            if not block:
                return
            out.write(block)
            size -= len(block)


# ===============================================================================================
# Corpus side: the results


@dataclass(frozen=True, slots=True)
class FileStats:
    """What cleaning did to one corpus file (one line of the manifest)."""

    input: str
    output: str | None
    """Path relative to OUTDIR; None when nothing of the file is left (the file is not written)."""
    format: str
    documents: int = 0
    kept: int = 0
    """Documents copied unchanged."""
    cut: int = 0
    """Documents with leaked text cut out (written as `pieces` records)."""
    dropped: int = 0
    pieces: int = 0
    """Output records written for the cut documents."""
    bytes_removed: int = 0
    """UTF-8 bytes of document text removed (cut or dropped)."""

    @property
    def changed(self) -> bool:
        return bool(self.cut or self.dropped)

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "output": self.output,
            "format": self.format,
            "documents": self.documents,
            "kept": self.kept,
            "cut": self.cut,
            "dropped": self.dropped,
            "pieces": self.pieces,
            "bytes_removed": self.bytes_removed,
        }


@dataclass(frozen=True)
class CorpusCleanResult:
    """What clean_corpus() did, per file; ``to_manifest()`` is the manifest JSON."""

    files: tuple[FileStats, ...]
    output: Path
    manifest: Path
    config: dict[str, Any]
    eval_inputs: list[dict[str, Any]]
    report: Report | None = None
    """The scan report when only flagged examples' n-grams were used (``flagged_only``)."""

    @property
    def totals(self) -> dict[str, int]:
        keys = ("documents", "kept", "cut", "dropped", "pieces", "bytes_removed")
        out = {k: sum(getattr(f, k) for f in self.files) for k in keys}
        return {
            "files": len(self.files),
            "files_changed": sum(f.changed for f in self.files),
            **out,
        }

    @property
    def changed(self) -> bool:
        return any(f.changed for f in self.files)

    def to_manifest(self) -> dict[str, Any]:
        return {
            "schema": MANIFEST_SCHEMA,
            "tool": {"name": "contam", "version": __version__},
            "config": self.config,
            "inputs": {"eval": self.eval_inputs},
            "summary": self.totals,
            "files": [f.to_dict() for f in self.files],
        }


def clean_corpus(
    eval: EvalInput,
    corpus: CorpusArg,
    output: PathLike,
    *,
    mode: Mode = "cut-span",
    window: int = 200,
    min_piece: int = 200,
    max_splits: int = 10,
    flagged_only: bool = False,
    policy: FlagPolicy | None = None,
    options: ScanOptions | None = None,
    manifest: PathLike | None = None,
    force: bool = False,
    progress: ProgressFn | None = None,
    **kwargs: Any,
) -> CorpusCleanResult:
    """Write the corpus minus every eval n-gram's neighbourhood into the directory `output`.

    By default every n-gram of every scorable eval example counts (any collision is removed);
    ``flagged_only`` first scans and keeps only the n-grams of flagged examples. The output mirrors
    the input layout (relative paths, formats, compression); files without a change are copied
    byte for byte; the manifest (default ``output/.contam-manifest.json``) lists per file the
    documents kept, cut and dropped and the text bytes removed.
    """
    opts = _scan_options(options, kwargs)
    rule = CutRule(mode, window, min_piece, max_splits)
    sources = _corpus_groups(corpus)
    layout = _layout(sources, opts)
    inputs = [*_eval_paths(eval), *(p for ps in sources.values() for p in ps)]
    outdir = Path(output)
    manifest_path = Path(manifest) if manifest is not None else outdir / MANIFEST_NAME
    _check_targets([outdir], inputs, force=force, directory=True)
    _check_manifest(manifest_path, outdir, inputs)
    records, eval_inputs = load_eval(eval, opts)
    report = None
    if flagged_only:
        scanned = eval if _eval_paths(eval) else records
        report = scan(scanned, sources, policy=policy, options=opts, progress=progress)
        records = [r for r, e in zip(records, report.examples) if e.flagged]
    tk = Tokenizer(opts.norm)
    index = build_eval_index([r.text for r in records], opts.n, opts.norm, tk)
    ctx = _Context(index, rule, opts.corpus_spec, opts.norm, opts.chunk_bytes, tuple(inputs))
    config = {
        **opts.describe(),
        **rule.describe(),
        "ngrams": "flagged" if flagged_only else "all",
        "eval_examples": len(records),
        "eval_ngrams_distinct": int(len(index.grams)),
    }
    with _staged_dir(outdir, force, inputs) as stage:
        files = _clean_files(layout, stage, ctx, opts.jobs, progress)
        result = CorpusCleanResult(tuple(files), outdir, manifest_path, config, eval_inputs, report)
        text = orjson.dumps(result.to_manifest(), option=orjson.OPT_INDENT_2) + b"\n"
        inside = _relative_inside(manifest_path, outdir)
        if inside is not None:
            write_atomic(stage / inside, text)
    if inside is None:
        write_atomic(manifest_path, text, inputs=inputs)
    return result


def _check_manifest(manifest: Path, outdir: Path, inputs: list[Path]) -> None:
    if _relative_inside(manifest, outdir) is None:
        _check_targets([manifest], inputs, force=True, directory=False)


def _relative_inside(path: Path, directory: Path) -> Path | None:
    p, d = path.resolve(), directory.resolve()
    return p.relative_to(d) if p != d and p.is_relative_to(d) else None


# ===============================================================================================
# Corpus side: per file


@dataclass(frozen=True)
class _Context:
    """Everything a worker needs to clean one file."""

    index: EvalIndex
    rule: CutRule
    spec: TextSpec
    norm: NormConfig
    chunk_bytes: int
    inputs: tuple[Path, ...]


@dataclass
class _Unit:
    """One corpus record with the raw bytes around it (line formats) or its element (JSON)."""

    rec: Record
    start: int
    """Offset where the bytes before the record (its gap) begin."""
    gap: bytes
    raw: bytes


@dataclass
class _Edit:
    """What replaces one record: output units (lines, elements, a file), empty when dropped."""

    units: list[bytes]
    checks: list[str]
    """The texts a rescan will extract from `units` (each is one document)."""
    removed: int
    """UTF-8 bytes of text removed."""


@dataclass
class _Counts:
    documents: int = 0
    kept: int = 0
    cut: int = 0
    dropped: int = 0
    pieces: int = 0
    bytes_removed: int = 0

    def add(self, unit: _Unit, edit: _Edit | None) -> None:
        self.documents += 1
        if edit is None:
            self.kept += 1
            return
        self.bytes_removed += edit.removed
        if edit.units:
            self.cut += 1
            self.pieces += len(edit.units)
        else:
            self.dropped += 1

    def stats(self, src: Path, rel: str, fmt: str, written: bool) -> FileStats:
        return FileStats(
            str(src),
            rel if written else None,
            fmt,
            self.documents,
            self.kept,
            self.cut,
            self.dropped,
            self.pieces,
            self.bytes_removed,
        )


def _clean_files(
    layout: list[tuple[Path, str]],
    stage: Path,
    ctx: _Context,
    jobs: int,
    progress: ProgressFn | None,
) -> list[FileStats]:
    jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    tasks = [(src, rel, stage / rel) for src, rel in layout]
    if jobs <= 1 or len(tasks) <= 1:
        tk = Tokenizer(ctx.norm)
        out = []
        for task in tasks:
            out.append(_clean_file(*task, ctx, tk))
            if progress:
                progress(task[0].stat().st_size)
        return out
    return _clean_parallel(tasks, ctx, jobs, progress)


_WORKER: dict[str, Any] = {}


def _init_worker(ctx: _Context) -> None:
    _WORKER.update(ctx=ctx, tk=Tokenizer(ctx.norm))


def _work(task: tuple[Path, str, Path]) -> FileStats | str:
    try:
        return _clean_file(*task, _WORKER["ctx"], _WORKER["tk"])
    except ContamError as e:
        return str(e)  # NOTE: InputError does not survive pickling; the message does.


def _clean_parallel(
    tasks: list[tuple[Path, str, Path]], ctx: _Context, jobs: int, progress: ProgressFn | None
) -> list[FileStats]:
    mp = get_context("fork") if "fork" in _start_methods() else get_context()
    out = []
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(tasks)), mp_context=mp, initializer=_init_worker, initargs=(ctx,)
    ) as pool:
        for task, got in zip(tasks, pool.map(_work, tasks)):
            if isinstance(got, str):
                raise ContamError(got)
            out.append(got)
            if progress:
                progress(task[0].stat().st_size)
    return out


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def _clean_file(src: Path, rel: str, dest: Path, ctx: _Context, tk: Tokenizer) -> FileStats:
    """Clean one corpus file into `dest` (a copy of `src` when nothing in it changes)."""
    fmt = detect_format(src)
    counts = _Counts()
    if fmt == "jsonl":
        written = _clean_lines(src, dest, ctx, tk, counts)
    else:
        written = _clean_whole(src, dest, fmt, ctx, tk, counts)
    return counts.stats(src, rel, fmt, written)


def _clean_lines(src: Path, dest: Path, ctx: _Context, tk: Tokenizer, counts: _Counts) -> bool:
    """A JSONL file, streamed: nothing is written until the first change, then the prefix is
    copied and every later record follows; an unchanged file is copied as it is."""
    with open_binary(src) as fh, ExitStack() as stack:
        cursor = _Cursor(fh)
        sink: _LineSink | None = None
        for batch in _batches(_line_units(src, cursor, ctx.spec), ctx.chunk_bytes):
            edits = _plan_batch(batch, "jsonl", ctx, tk)
            if sink is None and any(e is not None for e in edits):
                out = stack.enter_context(atomic_writer(dest, inputs=ctx.inputs))
                _copy_prefix(src, batch[0].start, out)
                sink = _LineSink(out)
            for unit, edit in zip(batch, edits):
                counts.add(unit, edit)
                if sink is not None:
                    sink.put(unit.gap, _line_bytes(unit, edit))
        if sink is None:
            return _copy_file(src, dest)
        sink.put(cursor.rest(), b"")
    if counts.kept + counts.pieces == 0:
        dest.unlink()
        return False
    return True


def _line_bytes(unit: _Unit, edit: _Edit | None) -> bytes | None:
    """What replaces a JSONL record: itself, its pieces one per line, or None (dropped)."""
    if edit is None:
        return unit.raw
    return b"\n".join(edit.units) if edit.units else None


def _line_units(src: Path, cursor: _Cursor, spec: TextSpec) -> Iterator[_Unit]:
    for rec in iter_records(src, role="corpus", spec=spec):
        assert rec.locator.span is not None
        a, b = rec.locator.span
        start = cursor.pos
        gap = cursor.read_to(a)
        yield _Unit(rec, start, gap, cursor.read_to(b))


def _clean_whole(
    src: Path, dest: Path, fmt: str, ctx: _Context, tk: Tokenizer, counts: _Counts
) -> bool:
    """A JSON array, a one-document .txt file or a Parquet file, held in memory like the readers
    do; rewritten only when something changes."""
    data = _read_all(src) if fmt == "json" else b""
    spans: list[tuple[int, int]] = []
    edits: dict[int, _Edit] = {}
    units = (
        _Unit(r, 0, b"", data[slice(*r.locator.span)] if r.locator.span and data else b"")
        for r in iter_records(src, role="corpus", spec=ctx.spec)
    )
    for batch in _batches(units, ctx.chunk_bytes):
        for unit, edit in zip(batch, _plan_batch(batch, fmt, ctx, tk)):
            counts.add(unit, edit)
            if edit is not None:
                edits[len(spans)] = edit
            spans.append(unit.rec.locator.span or (0, 0))
    if not edits:
        return _copy_file(src, dest)
    if counts.kept + counts.pieces == 0:
        return False
    if fmt == "txt":
        body = edits[0].units[0]
    else:
        new = [edits[i].units if i in edits else None for i in range(len(spans))]
        body = _rebuild_array(data, spans, new)
    write_atomic(dest, body, inputs=ctx.inputs)
    return True


def _copy_file(src: Path, dest: Path) -> bool:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return True


def _batches(units: Iterable[_Unit], chunk_bytes: int) -> Iterator[list[_Unit]]:
    batch: list[_Unit] = []
    size = 0
    for unit in units:
        batch.append(unit)
        size += len(unit.rec.text) + 1
        if size >= chunk_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


# ===============================================================================================
# Corpus side: per document


def _plan_batch(batch: list[_Unit], fmt: str, ctx: _Context, tk: Tokenizer) -> list[_Edit | None]:
    """The edit of every record of one batch (None: unchanged), checked against the index."""
    edits: list[_Edit | None] = [None] * len(batch)
    found = match_chunk(ctx.index, tk, [u.rec.text.encode("utf-8") for u in batch])
    if found is None:
        return edits
    if fmt == "parquet":
        raise UsageError(
            f"{batch[0].rec.locator.path}: clean cannot rewrite .parquet corpus files yet "
            "(leave the file out with --exclude, or convert it to JSONL)"
        )
    hits = found[0]
    order = np.lexsort((hits.doc_pos, hits.doc))
    doc, pos = hits.doc[order], hits.doc_pos[order]
    starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    for a, b in zip(starts, np.r_[starts[1:], len(doc)]):
        d = int(doc[a])
        edits[d] = _edit_record(batch[d], np.unique(pos[a:b]), fmt, ctx)
    _drop_unclean(edits, batch, ctx, tk)
    return edits


def _drop_unclean(
    edits: list[_Edit | None], batch: list[_Unit], ctx: _Context, tk: Tokenizer
) -> None:
    """Drop every record whose cleaned text still holds an eval n-gram (formed by a join)."""
    owners = [k for k, e in enumerate(edits) if e is not None for _ in e.checks]
    texts = [t.encode("utf-8") for e in edits if e is not None for t in e.checks]
    found = match_chunk(ctx.index, tk, texts) if texts else None
    if found is None:
        return
    for d in np.unique(found[0].doc).tolist():
        k = owners[d]
        edits[k] = _dropped(batch[k].rec.text)


def _dropped(text: str) -> _Edit:
    return _Edit([], [], len(text.encode("utf-8")))


def _edit_record(unit: _Unit, positions: np.ndarray, fmt: str, ctx: _Context) -> _Edit:
    text = unit.rec.text
    if ctx.rule.mode == "drop-doc":
        return _dropped(text)
    kept = _kept_spans(text, positions, ctx.index.n, ctx.rule, ctx.norm)
    if kept is None:
        return _dropped(text)
    if fmt == "txt":
        new = _PIECE_JOIN.join(text[a:b] for a, b in kept)
        bom = b"\xef\xbb\xbf" if unit.rec.locator.span and unit.rec.locator.span[0] == 3 else b""
        return _Edit([bom + new.encode("utf-8")], [new], _removed(text, [new]))
    try:
        return _edit_object(unit, kept, fmt, ctx.spec)
    except (ValueError, TypeError, KeyError, IndexError, ContamError):
        return _dropped(text)  # NOTE: a record we cannot rewrite exactly is dropped, not kept.


def _removed(text: str, kept: list[str]) -> int:
    return len(text.encode("utf-8")) - sum(len(t.encode("utf-8")) for t in kept)


def _kept_spans(
    text: str, positions: np.ndarray, n: int, rule: CutRule, norm: NormConfig = DEFAULT_NORM
) -> list[tuple[int, int]] | None:
    """Character ranges of `text` left after the cut rule; None when the document is dropped.

    `positions` are the token positions of the matched n-gram windows.

    >>> t = "aaaa bbbb. x y z. cccc dddd"
    >>> [t[a:b] for a, b in _kept_spans(t, np.array([2]), 3, CutRule(window=4, min_piece=4))]
    ['aaaa', 'dddd']
    """
    spans = np.array(token_spans(text, norm), dtype=np.int64).reshape(-1, 2)
    if len(positions) == 0 or int(positions.max()) + n > len(spans):
        return None  # NOTE: the tokenizers disagree on this text; drop rather than guess.
    starts, ends = spans[:, 0], spans[:, 1]
    a = np.maximum(starts[positions] - rule.window, 0)
    b = np.minimum(ends[positions + n - 1] + rule.window, len(text))
    ia = np.searchsorted(starts, a, side="left") - 1  # the token starting before a, if any
    a = np.where((ia >= 0) & (ends[np.maximum(ia, 0)] > a), starts[np.maximum(ia, 0)], a)
    ib = np.searchsorted(starts, b, side="left") - 1
    b = np.where((ib >= 0) & (ends[np.maximum(ib, 0)] > b), ends[np.maximum(ib, 0)], b)
    cuts = _merge(a, b)
    if len(cuts) > rule.max_splits:
        return None
    edges = [0, *(x for cut in cuts for x in cut), len(text)]
    pieces = (_trim(text, edges[k], edges[k + 1]) for k in range(0, len(edges), 2))
    kept = [(x, y) for x, y in pieces if y - x >= max(rule.min_piece, 1)]
    return kept or None


def _trim(text: str, x: int, y: int) -> tuple[int, int]:
    """The piece [x, y) without the whitespace it has next to a cut (not at the text's ends)."""
    if x > 0:
        while x < y and text[x].isspace():
            x += 1
    if y < len(text):
        while y > x and text[y - 1].isspace():
            y -= 1
    return x, y


def _merge(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """Union of the intervals [a_i, b_i), overlapping or touching ones merged, sorted."""
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    reach = np.maximum.accumulate(b)
    new = np.r_[True, a[1:] > reach[:-1]]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(a) - 1]
    return list(zip(a[first].tolist(), reach[last].tolist()))


# -- records of JSON formats --------------------------------------------------------------------

Key = str | int


@dataclass(frozen=True, slots=True)
class _Leaf:
    """One string the record's text is joined from, and where it lives in the object."""

    path: tuple[Key, ...] | None
    """Keys/indices from the record to the string; None for text that is not a string there
    (a number, an empty placeholder) and so cannot be edited."""
    text: str


def _edit_object(unit: _Unit, kept: list[tuple[int, int]], fmt: str, spec: TextSpec) -> _Edit:
    text = unit.rec.text
    obj = _parse(unit.raw, fmt)
    leaves = _leaves(obj, spec)
    if "\n".join(leaf.text for leaf in leaves) != text:
        raise ValueError("the record's text cannot be mapped back to its fields")
    where = (unit.rec.locator.path, unit.rec.locator.line)
    path = leaves[0].path
    if len(leaves) == 1 and path is not None and not any(isinstance(k, int) for k in path):
        pieces = [text[a:b] for a, b in kept]
        objs = [
            _with_piece(_parse(unit.raw, fmt), path, p, k, len(pieces), spec)
            for k, p in enumerate(pieces)
        ]
    else:
        objs = [_with_cut_turns(_parse(unit.raw, fmt), leaves, kept, text)]
    checks = [extract_text(o, spec, where) for o in objs]
    return _Edit([_dumps(o) for o in objs], checks, _removed(text, checks))


def _parse(raw: bytes, fmt: str) -> Any:
    # NOTE: the same decoders as the readers: orjson for JSONL lines, the stdlib for JSON arrays.
    return orjson.loads(raw) if fmt == "jsonl" else json.loads(raw.decode("utf-8"))


def _dumps(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):  # NOTE: integers beyond 64 bits, lone surrogates
        return json.dumps(obj, separators=(",", ":")).encode("ascii")


def _with_piece(
    obj: Any, path: tuple[Key, ...], piece: str, k: int, total: int, spec: TextSpec
) -> Any:
    """The record with its text replaced by one piece; its id suffixed ``#k`` when split."""
    obj = _set(obj, path, piece)
    if total > 1 and isinstance(obj, dict):
        id_path = _id_path(obj, spec)
        if id_path is not None:
            obj = _set(obj, id_path, f"{_get(obj, id_path)}#{k}")
    return obj


def _with_cut_turns(obj: Any, leaves: list[_Leaf], kept: list[tuple[int, int]], text: str) -> Any:
    """The record with each turn (field) keeping only its text inside the kept ranges."""
    offset = 0
    for leaf in leaves:
        lo, hi = offset, offset + len(leaf.text)
        offset = hi + 1
        parts = [(max(a, lo), min(b, hi)) for a, b in kept if max(a, lo) < min(b, hi)]
        new = _PIECE_JOIN.join(text[a:b] for a, b in parts)
        if new == leaf.text:
            continue
        if leaf.path is None:
            raise ValueError("a cut reaches text that is not a string field")
        obj = _set(obj, leaf.path, new)
    return obj


def _set(obj: Any, path: tuple[Key, ...], value: Any) -> Any:
    if not path:
        return value
    holder = obj
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return obj


def _get(obj: Any, path: tuple[Key, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _id_path(obj: dict[str, Any], spec: TextSpec) -> tuple[Key, ...] | None:
    if spec.id_field is not None:
        found = _resolve(obj, spec.id_field)
        return found[1] if found is not None else None
    for key in _ID_KEYS:
        value = obj.get(key)
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return (key,)
    return None


# NOTE: the functions below mirror records.extract_text step by step, recording where each
# string comes from; _edit_object checks that they join to exactly the text the reader produced.


def _leaves(obj: Any, spec: TextSpec) -> list[_Leaf]:
    if isinstance(obj, str):
        return [_Leaf((), obj)]
    if not isinstance(obj, dict):
        raise ValueError("not an object")
    if spec.fields:
        out = []
        for name in spec.fields:
            found = _resolve(obj, name)
            if found is None:
                raise ValueError(f"field {name!r} not found")
            out += _value_leaves(found[0], found[1], spec)
        return out
    for key in ("text", "content"):
        if obj.get(key) is not None:
            return _value_leaves(obj[key], (key,), spec)
    for first, keys in (
        ("question", ("question", "answer")),
        ("prompt", ("prompt", "completion")),
        ("instruction", ("instruction", "input", "output")),
    ):
        if obj.get(first) is not None:
            return _joined_leaves(obj, keys, spec)
    for key in ("messages", "conversations"):
        if obj.get(key) is not None:
            return _value_leaves(obj[key], (key,), spec)
    raise ValueError("no text field")


def _joined_leaves(obj: dict[str, Any], keys: Sequence[str], spec: TextSpec) -> list[_Leaf]:
    out = []
    for key in keys:
        group = _value_leaves(obj.get(key), (key,), spec)
        if "\n".join(leaf.text for leaf in group):
            out += group
    return out or [_Leaf(None, "")]


def _value_leaves(value: Any, path: tuple[Key, ...], spec: TextSpec) -> list[_Leaf]:
    if isinstance(value, str):
        return [_Leaf(path, value)]
    if value is None:
        return [_Leaf(None, "")]
    if isinstance(value, (int, float)):
        return [_Leaf(None, str(value))]
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            out += _item_leaves(item, (*path, i), spec) or []
        return out or [_Leaf(None, "")]
    raise ValueError("not text")


def _item_leaves(item: Any, path: tuple[Key, ...], spec: TextSpec) -> list[_Leaf] | None:
    if item is None:
        return None
    if not isinstance(item, dict):
        return _value_leaves(item, path, spec)
    if "role" in item or "from" in item:
        role = str(item.get("role", item.get("from")))
        if spec.roles is not None and role not in spec.roles:
            if _SHAREGPT_ROLES.get(role, role) not in spec.roles:
                return None
        key = "content" if "content" in item else "value"
        return None if item.get(key) is None else _value_leaves(item[key], (*path, key), spec)
    if "text" in item and str(item.get("type", "text")).endswith("text"):
        return _value_leaves(item["text"], (*path, "text"), spec)
    if "type" in item:
        return None
    raise ValueError("not a text part")


_SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}


def _resolve(obj: Any, name: str) -> tuple[Any, tuple[Key, ...]] | None:
    """The value at a dotted path and its path (as records._lookup: a dotted key itself wins)."""
    if isinstance(obj, dict) and name in obj:
        return obj[name], (name,)
    path: list[Key] = []
    current = obj
    for part in name.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
            path.append(part)
        elif isinstance(current, list) and part.lstrip("-").isdigit():
            index = int(part)
            if not -len(current) <= index < len(current):
                return None
            path.append(index + len(current) if index < 0 else index)
            current = current[index]
        else:
            return None
    return current, tuple(path)


# ===============================================================================================
# Inputs, layout and safe outputs


def _scan_options(options: ScanOptions | None, kwargs: dict[str, Any]) -> ScanOptions:
    opts = options or ScanOptions()
    opts = replace(opts, **kwargs) if kwargs else opts
    if opts.n < 1:
        raise UsageError("--ngram-size must be at least 1")
    return opts


def _as_paths(value: PathLike | Sequence[PathLike]) -> list[Path]:
    items = [value] if isinstance(value, (str, os.PathLike)) else list(value)
    if not items or not all(isinstance(p, (str, os.PathLike)) for p in items):
        raise UsageError("clean needs eval and corpus files (paths), not texts in memory")
    return [Path(p) for p in items]


def _eval_paths(eval: EvalInput) -> list[Path]:
    """The eval paths, or [] when the eval set is given in memory."""
    if isinstance(eval, (str, os.PathLike)):
        return [Path(eval)]
    if isinstance(eval, Sequence) and eval and all(isinstance(p, os.PathLike) for p in eval):
        return [Path(p) for p in eval]  # type: ignore[arg-type]
    return []


def _corpus_groups(corpus: CorpusArg) -> dict[str, list[Path]]:
    if isinstance(corpus, Mapping):
        groups = {str(k): _as_paths(v) for k, v in corpus.items()}
    else:
        groups = {"corpus": _as_paths(corpus)}
    if not groups:
        raise UsageError("no corpus given: use --corpus PATH or --source NAME=PATH")
    return groups


def _layout(groups: Mapping[str, list[Path]], opts: ScanOptions) -> list[tuple[Path, str]]:
    """Every input file and its path relative to the output directory.

    One directory maps onto the output directory itself; otherwise each given path keeps its
    name (a directory its whole subtree) and, with several named sources, sits below the source
    name.
    """
    out: list[tuple[Path, str]] = []
    for name, paths in groups.items():
        if len(groups) > 1 and (not name or "/" in name or name in (".", "..")):
            raise UsageError(f"source name {name!r} cannot be a directory name")
        prefix = f"{name}/" if len(groups) > 1 else ""
        lone_dir = len(paths) == 1 and paths[0].is_dir()
        for p in paths:
            for f in iter_files(p, opts.include, opts.exclude):
                if not p.is_dir():
                    rel = p.resolve().name
                elif lone_dir:
                    rel = f.relative_to(p).as_posix()
                else:
                    rel = f"{p.resolve().name}/{f.relative_to(p).as_posix()}"
                out.append((f, prefix + rel))
    seen: dict[str, Path] = {}
    for f, rel in out:
        if seen.setdefault(rel, f) != f:
            raise UsageError(f"{f} and {seen[rel]} would both be written to {rel}")
    return out


def _check_targets(
    targets: list[Path], inputs: list[Path], *, force: bool, directory: bool
) -> None:
    """Refuse (OutputError) an output that is an input, lies inside an input directory, holds an
    input, or (a directory) is not empty without `force`; and two outputs that overlap."""
    resolved = [t.resolve() for t in targets]
    for k, t in enumerate(resolved):
        for other in resolved[k + 1 :]:
            if t == other or t.is_relative_to(other) or other.is_relative_to(t):
                raise UsageError(f"{targets[k]}: the outputs must not overlap")
        for item in inputs:
            s = item.resolve()
            if t == s or (t.exists() and s.exists() and os.path.samefile(t, s)):
                raise OutputError(f"{targets[k]}: refusing to overwrite the input {item}")
            if s.is_dir() and t.is_relative_to(s):
                raise OutputError(
                    f"{targets[k]}: refusing to write inside the input directory {item}"
                )
            if directory and s.is_relative_to(t):
                raise OutputError(
                    f"{targets[k]}: refusing to replace a directory holding the input {item}"
                )
        if directory and t.exists() and not t.is_dir():
            raise OutputError(f"{targets[k]}: exists and is not a directory")
        if directory and t.is_dir() and any(t.iterdir()) and not force:
            raise OutputError(f"{targets[k]}: directory is not empty (use --force to replace it)")
        if not directory and t.is_dir():
            raise OutputError(f"{targets[k]}: is a directory")


@contextmanager
def _staged_dir(target: Path, force: bool, inputs: list[Path]) -> Iterator[Path]:
    """A fresh directory beside `target`, renamed onto it when the block succeeds and removed
    when it fails (KeyboardInterrupt too), so `target` is either complete or untouched."""
    _check_targets([target], inputs, force=force, directory=True)
    final = target.resolve()
    final.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        os.chmod(stage, 0o777 & ~_umask())  # NOTE: mkdtemp's 0700 would surprise users.
        yield stage
        _commit(stage, final, force)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _commit(stage: Path, final: Path, force: bool) -> None:
    if not final.exists():
        os.rename(stage, final)
        return
    if any(final.iterdir()) and not force:
        raise OutputError(f"{final}: directory is not empty (use --force to replace it)")
    old = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".old", dir=final.parent))
    os.rmdir(old)
    os.rename(final, old)
    try:
        os.rename(stage, final)
    except BaseException:
        os.rename(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
