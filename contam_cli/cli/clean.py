"""`contam clean`: the eval set minus its leaked examples, or the corpus minus the leaked text."""

from __future__ import annotations

import io
from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.table import Table

from contam_cli.cli import common as c
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import UsageError
from contam_cli.features.clean import CorpusCleanResult, EvalCleanResult, clean_corpus, clean_eval
from contam_cli.features.clean import Mode as CutMode
from contam_cli.features.scan import ProgressFn
from contam_cli.io import iter_files
from contam_cli.io.output import atomic_writer
from contam_cli.render import write_json
from contam_cli.render.table import evidence_where, short_path

#: Changed corpus files listed on stdout (the manifest always lists every file).
SHOWN_FILES = 20


class Target(str, Enum):
    """What `contam clean` writes."""

    eval = "eval"
    corpus = "corpus"


class Mode(str, Enum):
    """How leaked text leaves the corpus."""

    cut_span = "cut-span"
    drop_doc = "drop-doc"


OutputOpt = Annotated[
    Path,
    typer.Option(
        "--output",
        "-o",
        help="Eval target: the cleaned file (a directory for several eval files); "
        "corpus target: OUTDIR.",
        show_default=False,
    ),
]
TargetOpt = Annotated[
    Target, typer.Option("--target", help="Clean the eval set or the training corpus.")
]
DirtyOpt = Annotated[
    Path | None,
    typer.Option(
        "--dirty-out", help="Eval target: also write the removed records here.", show_default=False
    ),
]
ModeOpt = Annotated[
    Mode,
    typer.Option("--mode", help="Corpus target: cut the leaked spans out, or drop the document."),
]
WindowOpt = Annotated[
    int, typer.Option("--window", min=0, help="Characters removed on each side of a match.")
]
MinPieceOpt = Annotated[
    int, typer.Option("--min-piece", min=0, help="Drop pieces shorter than this (characters).")
]
MaxSplitsOpt = Annotated[
    int, typer.Option("--max-splits", min=0, help="Drop a document needing more cuts than this.")
]
ManifestOpt = Annotated[
    Path | None,
    typer.Option(
        "--manifest",
        help="Corpus target: where the manifest goes (default OUTDIR/.contam-manifest.json).",
        show_default=False,
    ),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace a non-empty output directory.")]
FlaggedOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--flagged-only",
        help="Corpus target: remove only n-grams of examples the scan flags (default: all).",
    ),
]


def clean_command(
    eval_paths: c.EvalArg,
    output: OutputOpt,
    corpus: c.CorpusOpt = None,
    source: c.SourceOpt = None,
    target: TargetOpt = Target.eval,
    dirty_out: DirtyOpt = None,
    mode: ModeOpt = Mode.cut_span,
    window: WindowOpt = 200,
    min_piece: MinPieceOpt = 200,
    max_splits: MaxSplitsOpt = 10,
    flagged_only: FlaggedOnlyOpt = False,
    manifest: ManifestOpt = None,
    force: ForceOpt = False,
    ngram_size: c.NgramOpt = 13,
    field: c.FieldOpt = None,
    corpus_field: c.CorpusFieldOpt = None,
    id_field: c.IdFieldOpt = None,
    roles: c.RolesOpt = None,
    include: c.IncludeOpt = None,
    exclude: c.ExcludeOpt = None,
    min_overlap: c.MinOverlapOpt = 0.5,
    min_run: c.MinRunOpt = 30,
    threshold: c.ThresholdOpt = None,
    thresholds: c.ThresholdsOpt = None,
    report: c.ReportOpt = None,
    redact: c.RedactOpt = False,
    no_fail: c.NoFailOpt = False,
    jobs: c.JobsOpt = 0,
    chunk_size: c.ChunkOpt = 1 << 20,
    no_casefold: c.NoCasefoldOpt = False,
    no_nfkc: c.NoNfkcOpt = False,
    progress: c.ProgressOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Write the eval set minus its leaked examples, or (--target corpus) the corpus minus the
    leaked text.

    Exit code 0: nothing removed; 1: something was removed; 2: usage or input error.
    """
    with c.handle_errors(debug):
        sources = c.corpus_argument(corpus, source)
        opts = c.scan_options(
            ngram_size=ngram_size,
            no_nfkc=no_nfkc,
            no_casefold=no_casefold,
            field=field,
            corpus_field=corpus_field,
            id_field=id_field,
            roles=roles,
            include=include,
            exclude=exclude,
            chunk_size=chunk_size,
            jobs=jobs,
            redact=redact,
        )
        policy = c.flag_policy(min_overlap, min_run, threshold, thresholds)
        inputs = [*eval_paths, *(p for ps in sources.values() for p in ps)]
        _check_options(target, dirty_out, manifest, report, flagged_only, output)
        scans = 1 if target is Target.eval or flagged_only else 0
        total = _corpus_bytes(sources, opts) * (scans + (target is Target.corpus))
        writer = atomic_writer(report, inputs=inputs) if report else nullcontext()
        with writer as fh, c.progress_bar(progress, total, "cleaning") as bar:
            tick = cast(ProgressFn | None, bar)
            if target is Target.eval:
                result: EvalCleanResult | CorpusCleanResult = clean_eval(
                    eval_paths,
                    sources,
                    output,
                    dirty_output=dirty_out,
                    policy=policy,
                    options=opts,
                    force=force,
                    progress=tick,
                )
            else:
                result = clean_corpus(
                    eval_paths,
                    sources,
                    output,
                    mode=cast(CutMode, mode.value),
                    window=window,
                    min_piece=min_piece,
                    max_splits=max_splits,
                    flagged_only=flagged_only,
                    policy=policy,
                    options=opts,
                    manifest=manifest,
                    force=force,
                    progress=tick,
                )
            if fh is not None and result.report is not None:
                write_json(result.report, fh)
        if isinstance(result, EvalCleanResult):
            typer.echo(render_eval_summary(result), nl=False)
        else:
            typer.echo(render_corpus_summary(result), nl=False)
    if result.changed and not no_fail:
        raise typer.Exit(c.EXIT_FOUND)


def _check_options(
    target: Target,
    dirty_out: Path | None,
    manifest: Path | None,
    report: Path | None,
    flagged_only: bool,
    output: Path,
) -> None:
    if target is Target.corpus and dirty_out is not None:
        raise UsageError("--dirty-out applies to --target eval only")
    if target is Target.eval and manifest is not None:
        raise UsageError("--manifest applies to --target corpus only")
    if target is Target.corpus and report is not None and not flagged_only:
        raise UsageError("--report with --target corpus needs --flagged-only (it is the scan)")
    if report is not None:
        r, o = report.resolve(), output.resolve()
        others = [o] + [p.resolve() for p in (dirty_out, manifest) if p is not None]
        if r in others or r.is_relative_to(o):
            raise UsageError(f"{report}: the report must not overlap the other outputs")


def _corpus_bytes(sources: dict[str, list[Path]], opts: ScanOptions) -> int:
    return sum(
        f.stat().st_size
        for ps in sources.values()
        for p in ps
        for f in iter_files(p, opts.include, opts.exclude)
    )


# -- what is printed (pure functions of the result) ---------------------------------------------


def _console(out: io.StringIO) -> Console:
    return Console(file=out, no_color=True, width=200, highlight=False, soft_wrap=False)


def _text(out: io.StringIO) -> str:
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())


def render_eval_summary(result: EvalCleanResult) -> str:
    """The removed examples (id, reasons, where the leak is), then one summary line."""
    out = io.StringIO()
    console = _console(out)
    if result.removed:
        table = _table(("removed", "reasons", "where"))
        for e in result.removed:
            table.add_row(e.id, "; ".join(str(r) for r in e.reasons), evidence_where(e.evidence))
        console.print(table)
    n = len(result.report.examples)
    unscorable = len(result.report.unscorable)
    line = f"{n} examples: {len(result.removed)} removed, {result.kept} kept"
    line += f" ({unscorable} unscorable, kept)" if unscorable else ""
    line += f" -> {result.output}"
    if result.dirty_output is not None:
        line += f" (removed -> {result.dirty_output})"
    return _text(out) + line + "\n"


def render_corpus_summary(result: CorpusCleanResult) -> str:
    """The changed files with their counts, then one summary line."""
    out = io.StringIO()
    console = _console(out)
    changed = [f for f in result.files if f.changed]
    if changed:
        cols = ("file", "documents", "kept", "cut", "dropped", "pieces", "bytes removed")
        table = _table(cols)
        for f in changed[:SHOWN_FILES]:
            output = f.output if f.output is not None else "(nothing left, not written)"
            table.add_row(
                short_path(f.input),
                *(str(v) for v in (f.documents, f.kept, f.cut, f.dropped, f.pieces)),
                str(f.bytes_removed),
                output,
            )
        console.print(table)
        if len(changed) > SHOWN_FILES:
            console.print(f"... {len(changed) - SHOWN_FILES} more changed files (see the manifest)")
    t = result.totals
    return _text(out) + (
        f"{t['documents']} documents in {t['files']} files: {t['kept']} kept, {t['cut']} cut "
        f"({t['pieces']} written), {t['dropped']} dropped; {t['bytes_removed']} text bytes "
        f"removed -> {result.output} (manifest: {result.manifest})\n"
    )


def _table(columns: tuple[str, ...]) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for name in columns:
        numeric = name in ("documents", "kept", "cut", "dropped", "pieces", "bytes removed")
        table.add_column(name, justify="right" if numeric else "left", overflow="fold")
    if "bytes removed" in columns:
        table.add_column("output", overflow="fold")
    return table
