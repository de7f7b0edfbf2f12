"""clean_eval(): the eval set minus its flagged examples, the kept records copied byte for byte."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, cast

from contam_cli.engine.executor import Executor
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import InputError, NothingScoredError, UsageError
from contam_cli.features.clean.layout import (
    CorpusArg,
    _as_paths,
    _check_targets,
    _corpus_groups,
    _layout,
    _local_inputs,
    _scan_options,
    _staged_dir,
)
from contam_cli.features.clean.rewrite import _Cursor, _LineSink, _read_all, _rebuild_array
from contam_cli.features.scan import ProgressFn, scan
from contam_cli.io import detect_format, open_binary, read_eval
from contam_cli.io.formats import StrPath as PathLike
from contam_cli.io.inputs import name_paths
from contam_cli.io.model import Record
from contam_cli.io.output import atomic_writer, check_target, output_group
from contam_cli.policy import FlagPolicy
from contam_cli.report import ExampleResult, Report, write_json


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
    report_path: PathLike | None = None,
    executor: Executor | None = None,
    read: Sequence[PathLike] = (),
    **kwargs: Any,
) -> EvalCleanResult:
    """Write the eval set minus the examples that scan() flags; return what was removed.

    One eval file gives one output file (compressed by its suffix; its format suffix must match
    the input's); several files or a directory give an output directory mirroring their relative
    paths (same names, so same formats and compression). Kept records are byte-identical to their
    input lines (JSONL, TXT) or array elements (JSON), blank lines stay, order is kept.
    ``dirty_output`` receives the flagged records the same way. ``force`` replaces a non-empty
    output directory. ``report_path`` also writes the scan's JSON report; every output appears
    together with the others or not at all. ``executor`` runs the scan's corpus shards (default:
    local processes for ``jobs``). ``read``: other files the caller read (a thresholds file);
    no output lands over or inside one of them, the eval set, the corpus or an ``ignore_from``
    file. Keyword arguments override fields of :class:`ScanOptions`.
    """
    opts = _scan_options(options, kwargs)
    paths = _as_paths(eval, "eval")
    sources = _corpus_groups(corpus)
    inputs = [*paths, *_local_inputs(sources), *opts.ignore_from, *map(Path, read)]
    single = len(paths) == 1 and not paths[0].is_dir()
    layout = cast("list[tuple[Path, str]]", _layout({"": paths}, opts))  # NOTE: paths alone
    _check_eval_formats(layout, output if single else None, dirty_output if single else None)
    targets = [Path(output)] + ([Path(dirty_output)] if dirty_output is not None else [])
    _check_targets(targets, inputs, force=force, directory=not single)
    _check_report_path(report_path, targets, inputs)
    report = scan(paths, sources, policy=policy, options=opts, progress=progress, executor=executor)
    # NOTE: what made it (the step summary's title, the HTML page's, a report's "command").
    report = replace(report, command="clean")
    if not report.scorable_mask().any():
        raise NothingScoredError(
            f"{name_paths(report.eval_paths())}no eval example could be scored "
            f"(all {len(report.examples)} shorter than "
            f"n={opts.n}): nothing was checked, nothing written"
        )
    records = read_eval(paths, opts.eval_spec, opts.include, opts.exclude)
    flagged = _flagged_spans(report, records)
    spans = _spans_by_file(records)
    with output_group() as stack:
        if report_path is not None:
            write_json(report, stack.enter_context(atomic_writer(report_path, inputs=inputs)))
        if single:
            dests = targets
        else:
            dests = [stack.enter_context(_staged_dir(t, force, inputs)) for t in targets]
        _write_eval_files(layout, spans, flagged, dests, inputs, stack, single=single)
    removed = tuple(e for e in report.examples if e.flagged)
    return EvalCleanResult(report, removed, Path(output), targets[1] if dirty_output else None)


def _check_eval_formats(
    layout: list[tuple[Path, str]], output: PathLike | None, dirty: PathLike | None
) -> None:
    for src, _ in layout:
        fmt = detect_format(src)
        if fmt in ("parquet", "arrow"):
            raise UsageError(f"{src}: clean cannot rewrite .{fmt} eval files byte for byte")
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
    stack: ExitStack,
    *,
    single: bool,
) -> None:
    """Write the kept records to targets[0] and the flagged ones to targets[1] (when given);
    the files commit when `stack` (an output group) does."""
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


def _check_report_path(report: PathLike | None, outputs: list[Path], inputs: list[Path]) -> None:
    if report is None:
        return
    r = check_target(report, inputs)
    for o in outputs:
        o = o.resolve()
        if r == o or r.is_relative_to(o):
            raise UsageError(f"{report}: the report must not overlap the other outputs")


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
