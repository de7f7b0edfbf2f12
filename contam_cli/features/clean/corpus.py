"""clean_corpus(): the corpus without the eval n-grams' neighbourhoods, in a mirrored layout."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli._version import __version__
from contam_cli.engine.corpus_pass import tokenizer
from contam_cli.engine.eval_index import build_eval_index
from contam_cli.engine.executor import Executor, make_executor
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import NothingScoredError, UsageError
from contam_cli.features.clean.cut import CutRule, Mode, _Context, _plan_batch
from contam_cli.features.clean.edits import _Edit, _Unit, line_bytes, unit_batches
from contam_cli.features.clean.fuzzy import check_fuzzy, describe_cut, fuzzy_cut, scan_for_clean
from contam_cli.features.clean.layout import (
    CorpusArg,
    _check_manifest,
    _check_targets,
    _corpus_groups,
    _eval_paths,
    _layout,
    _local_inputs,
    _relative_inside,
    _scan_options,
    _staged_dir,
    _with_kernels,
)
from contam_cli.features.clean.rewrite import (
    _copy_prefix,
    _Cursor,
    _LineSink,
    _read_all,
    _rebuild_array,
    copy_file,
)
from contam_cli.features.scan import ProgressFn, check_input_roles, index_eval
from contam_cli.io import TextSpec, detect_format, iter_records, open_binary
from contam_cli.io.formats import StrPath as PathLike
from contam_cli.io.inputs import name_paths
from contam_cli.io.model import ReadNotes, unread_turn_entry
from contam_cli.io.output import atomic_writer, check_target, output_group, write_atomic
from contam_cli.io.remote import RemoteFile
from contam_cli.policy import FlagPolicy
from contam_cli.report import Report, write_json
from contam_cli.text import Tokenizer

MANIFEST_NAME = ".contam-manifest.json"

MANIFEST_SCHEMA = "contam.clean/1"


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
    unread_turn: dict[str, str] | None = None
    """Its first chat turn with no text key but another string (read as no text, so nothing
    of it was checked or cut): ``at`` and ``key``, as a scan report's inputs give it."""

    @property
    def changed(self) -> bool:
        return bool(self.cut or self.dropped)

    def to_dict(self) -> dict[str, Any]:
        unread = getattr(self, "unread_turn", None)  # NOTE: a checkpoint's older FileStats
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
        } | ({"unread_turn": unread} if unread else {})


@dataclass(frozen=True)
class CorpusCleanResult:
    """What clean_corpus() did, per file; ``to_manifest()`` is the manifest JSON."""

    files: tuple[FileStats, ...]
    output: Path
    manifest: Path
    config: dict[str, Any]
    eval_inputs: list[dict[str, Any]]
    report: Report | None = None
    """The scan report, when there was a scan (``flagged_only``, or the fuzzy detector on)."""

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
    eval: Any,
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
    executor: Executor | None = None,
    report_path: PathLike | None = None,
    read: Sequence[PathLike] = (),
    **kwargs: Any,
) -> CorpusCleanResult:
    """Write the corpus minus every eval n-gram's neighbourhood into the directory `output`.

    By default every n-gram of every scorable eval example counts (any collision is removed);
    ``flagged_only`` first scans and keeps only the n-grams of flagged examples. With the fuzzy
    detector on (``ScanOptions.fuzzy``) every alignment of those examples scoring at least
    ``min_fuzzy`` (a reworded copy) is cut as well (see :mod:`.fuzzy`). The output mirrors
    the input layout (relative paths, formats, compression); files without a change are copied
    byte for byte; the manifest (default ``output/.contam-manifest.json``) lists per file the
    documents kept, cut and dropped and the text bytes removed. ``read``: other files the
    caller read (a thresholds file); no output lands over or inside one of them, the eval set,
    the corpus or an ``ignore_from`` file.
    """
    opts = _scan_options(options, kwargs)
    rule = CutRule(mode, window, min_piece, max_splits)
    sources = _corpus_groups(corpus)
    layout = _layout(sources, opts)
    check_input_roles(eval, [f for f, _ in layout], opts)
    inputs = [*_eval_paths(eval), *_local_inputs(sources), *opts.ignore_from, *map(Path, read)]
    outdir = Path(output)
    manifest_path = Path(manifest) if manifest is not None else outdir / MANIFEST_NAME
    _check_targets([outdir], inputs, force=force, directory=True)
    _check_manifest(manifest_path, outdir, inputs)
    if report_path is not None:
        if not flagged_only:
            raise UsageError("a report of a corpus clean needs flagged_only (it is the scan)")
        check_target(report_path, inputs)
    check_fuzzy(eval, opts, policy)
    opts = _with_kernels(opts, eval, layout)
    tk = Tokenizer(opts.norm, accel=opts.accel)
    report = None
    if flagged_only:
        records, eval_inputs, report = scan_for_clean(
            eval, sources, opts, policy, progress, executor
        )
        hits = report.flagged_mask()
        fuzzy = fuzzy_cut(eval, records, opts, policy, tk, hits)
        records = [r for r, hit in zip(records, hits.tolist()) if hit]
        index = build_eval_index([r.text for r in records], opts.n, opts.norm, tk)
    else:
        records, eval_inputs, index = index_eval(eval, opts, tk)  # texts never all in memory
        fuzzy = fuzzy_cut(eval, None, opts, policy, tk, np.ones(len(records), dtype=bool))
    if not flagged_only and not len(index.grams):
        raise NothingScoredError(
            f"{name_paths(_eval_paths(eval))}no eval example has an n-gram "
            f"(all shorter than n={opts.n}): nothing to remove, "
            "nothing written"
        )
    ctx = _Context(
        index, rule, opts.corpus_spec, opts.norm, opts.chunk_bytes, tuple(inputs), fuzzy, opts.accel
    )
    config = {
        **opts.describe(),
        **rule.describe(),
        "ngrams": "flagged" if flagged_only else "all",
        "eval_examples": len(records),
        "eval_ngrams_distinct": int(len(index.grams)),
        **describe_cut(fuzzy),
    }
    inside = _relative_inside(manifest_path, outdir)
    with output_group() as stack:
        # NOTE: entered first, so they commit last: the outputs appear together or not at all.
        out_manifest = (
            None if inside else stack.enter_context(atomic_writer(manifest_path, inputs=inputs))
        )
        out_report = (
            None
            if report_path is None
            else stack.enter_context(atomic_writer(report_path, inputs=inputs))
        )
        stage = stack.enter_context(_staged_dir(outdir, force, inputs))
        files = _clean_files(layout, stage, ctx, executor, opts.jobs, progress)
        result = CorpusCleanResult(tuple(files), outdir, manifest_path, config, eval_inputs, report)
        text = orjson.dumps(result.to_manifest(), option=orjson.OPT_INDENT_2) + b"\n"
        if inside is not None:
            write_atomic(stage / inside, text)
        else:
            out_manifest.write(text)  # type: ignore[union-attr]
        if out_report is not None and report is not None:
            write_json(report, out_report)
    return result


@dataclass
class _Counts:
    """The counts of a FileStats being gathered (its fields of the same names)."""

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

    def stats(
        self, src: Path | RemoteFile, rel: str, fmt: str, written: bool, notes: ReadNotes
    ) -> FileStats:
        unread = min(notes.unread_turns.values(), default=None)
        turn = None if unread is None else unread_turn_entry(unread)
        return FileStats(str(src), rel if written else None, fmt, **asdict(self), unread_turn=turn)


def _clean_files(
    layout: list[tuple[Path | RemoteFile, str]],
    stage: Path,
    ctx: _Context,
    executor: Executor | None,
    jobs: int,
    progress: ProgressFn | None,
) -> list[FileStats]:
    """Clean every file into the staged directory, through `executor` (default: local workers
    for `jobs`), the files' stats in input order."""
    tasks = [(src, rel, stage / rel) for src, rel in layout]
    executor = executor or make_executor(jobs, len(tasks))
    on_done = (lambda i: progress(tasks[i][0].stat().st_size)) if progress else None
    return list(executor.map(clean_task, ctx, tasks, on_done=on_done))


def clean_task(ctx: _Context, task: tuple[Path | RemoteFile, str, Path]) -> FileStats:
    """The work function of a corpus clean: one file."""
    return _clean_file(*task, ctx, tokenizer(ctx.norm, ctx.accel))


def _clean_file(
    src: Path | RemoteFile, rel: str, dest: Path, ctx: _Context, tk: Tokenizer
) -> FileStats:
    """Clean one corpus file into `dest` (a copy of `src` when nothing in it changes)."""
    fmt = detect_format(src)
    counts, notes = _Counts(), ReadNotes()
    if fmt == "jsonl":
        written = _clean_lines(src, dest, ctx, tk, counts, notes)
    else:
        written = _clean_whole(src, dest, fmt, ctx, tk, counts, notes)
    return counts.stats(src, rel, fmt, written, notes)


def _clean_lines(
    src: Path | RemoteFile,
    dest: Path,
    ctx: _Context,
    tk: Tokenizer,
    counts: _Counts,
    notes: ReadNotes,
) -> bool:
    """A JSONL file, streamed: nothing is written until the first change, then the prefix is
    copied and every later record follows; an unchanged file is copied as it is."""
    with open_binary(src) as fh, ExitStack() as stack:
        cursor = _Cursor(fh)
        sink: _LineSink | None = None
        for batch in unit_batches(_line_units(src, cursor, ctx.spec, notes), ctx.chunk_bytes):
            edits = _plan_batch(batch, "jsonl", ctx, tk)
            if sink is None and any(e is not None for e in edits):
                out = stack.enter_context(atomic_writer(dest, inputs=ctx.inputs))
                _copy_prefix(src, batch[0].start, out)
                sink = _LineSink(out)
            for unit, edit in zip(batch, edits):
                counts.add(unit, edit)
                if sink is not None:
                    sink.put(unit.gap, line_bytes(unit, edit))
        if sink is None:
            return copy_file(src, dest)
        sink.put(cursor.rest(), b"")
    if counts.kept + counts.pieces == 0:
        dest.unlink()
        return False
    return True


def _line_units(
    src: Path | RemoteFile, cursor: _Cursor, spec: TextSpec, notes: ReadNotes
) -> Iterator[_Unit]:
    for rec in iter_records(src, role="corpus", spec=spec, notes=notes):
        assert rec.locator.span is not None
        a, b = rec.locator.span
        start = cursor.pos
        gap, raw = cursor.read_to(a), cursor.read_to(b)
        newline = b"\r\n" if cursor.peek(2) == b"\r\n" else b"\n"
        yield _Unit(rec, start, gap, raw, newline)


def _clean_whole(
    src: Path | RemoteFile,
    dest: Path,
    fmt: str,
    ctx: _Context,
    tk: Tokenizer,
    counts: _Counts,
    notes: ReadNotes,
) -> bool:
    """A JSON array, a one-document .txt file or a Parquet file, held in memory like the readers
    do; rewritten only when something changes."""
    data = _read_all(src) if fmt == "json" else b""
    spans: list[tuple[int, int]] = []
    edits: dict[int, _Edit] = {}
    units = (
        _Unit(r, 0, b"", data[slice(*r.locator.span)] if r.locator.span and data else b"")
        for r in iter_records(src, role="corpus", spec=ctx.spec, notes=notes)
    )
    for batch in unit_batches(units, ctx.chunk_bytes):
        for unit, edit in zip(batch, _plan_batch(batch, fmt, ctx, tk)):
            counts.add(unit, edit)
            if edit is not None:
                edits[len(spans)] = edit
            spans.append(unit.rec.locator.span or (0, 0))
    if not edits:
        return copy_file(src, dest)
    if counts.kept + counts.pieces == 0:
        return False
    if fmt == "txt":
        body = edits[0].units[0]
    else:
        new = [edits[i].units if i in edits else None for i in range(len(spans))]
        body = _rebuild_array(data, spans, new)
    write_atomic(dest, body, inputs=ctx.inputs)
    return True
