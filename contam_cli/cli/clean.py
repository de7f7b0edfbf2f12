"""`contam clean`: the eval set minus its leaked examples, or the corpus minus the leaked text."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, cast

import typer

from contam_cli.cli import boilerplate as b
from contam_cli.cli import ci
from contam_cli.cli import common as c
from contam_cli.cli import engine_options as eo
from contam_cli.cli.options import EvalCacheOpt
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import UsageError
from contam_cli.features.clean import CorpusCleanResult, EvalCleanResult, clean_corpus, clean_eval
from contam_cli.features.clean import Mode as CutMode
from contam_cli.features.eval_cache import check_cache_dir
from contam_cli.features.eval_side import eval_warnings
from contam_cli.features.scan import ProgressFn
from contam_cli.io.discover import list_files
from contam_cli.io.remote import Url
from contam_cli.render.clean import render_corpus_summary, render_eval_summary


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
    fuzzy: c.FuzzyOpt = False,
    min_fuzzy: c.MinFuzzyOpt = 0.5,
    report: c.ReportOpt = None,
    redact: c.RedactOpt = False,
    no_fail: c.NoFailOpt = False,
    jobs: c.JobsOpt = 0,
    engine: eo.EngineOpt = eo.Engine.local,
    ray_address: eo.RayAddressOpt = None,
    ray_cpus: eo.RayCpusOpt = None,
    ray_runtime_env: eo.RayRuntimeEnvOpt = None,
    checkpoint: eo.CheckpointOpt = None,
    chunk_size: c.ChunkOpt = 1 << 20,
    no_casefold: c.NoCasefoldOpt = False,
    no_nfkc: c.NoNfkcOpt = False,
    progress: c.ProgressOpt = None,
    ignore_common: b.IgnoreCommonOpt = None,
    ignore_from: b.IgnoreFromOpt = None,
    eval_cache: EvalCacheOpt = None,
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
            ignore_common=ignore_common,
            ignore_from=tuple(ignore_from or ()),
            fuzzy=FuzzyConfig() if fuzzy else None,
            eval_cache=eval_cache,
        )
        policy = c.flag_policy(min_overlap, min_run, threshold, thresholds, min_fuzzy)
        _check_options(target, dirty_out, manifest, report, flagged_only, output)
        read = c.option_files(thresholds, ignore_from)
        inputs = [*eval_paths, *c.local_paths(sources), *read]
        if eval_cache is not None:
            check_cache_dir(eval_cache, inputs)
        scans = 1 if target is Target.eval or flagged_only else 0
        total = _corpus_bytes(sources, opts) * (scans + (target is Target.corpus))
        total += _corpus_bytes(sources, opts) * scans * (b.passes(ignore_common) - 1)
        executor = eo.executor_from_options(
            engine,
            ray_address,
            ray_cpus,
            jobs,
            checkpoint,
            config={"command": "clean", "target": target.value},
            outputs=eo.clean_outputs if target is Target.corpus else None,
            ray_runtime_env=ray_runtime_env,
            inputs=inputs,
        )
        with c.progress_bar(progress, total, "cleaning") as bar:
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
                    report_path=report,
                    executor=executor,
                    read=read,
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
                    report_path=report,
                    executor=executor,
                    read=read,
                )
        if result.report is not None:
            c.print_warnings(result.report)
            ci.append_step_summary(result.report, inputs)
        else:  # NOTE: a corpus clean without a scan: no report to carry the warnings
            c.warn_unread([*eval_paths, *sources.values()], opts)
            if isinstance(result, CorpusCleanResult):
                turns = [
                    {"path": f.input, "unread_turn": f.unread_turn}
                    for f in result.files
                    if f.unread_turn
                ]
                for w in eval_warnings(turns, "--corpus-field"):
                    c.say(f"contam: warning: {w}")
        verdict = c.EXIT_FOUND if result.changed and not no_fail else c.EXIT_CLEAN
        with c.stdout_guard(verdict):
            if isinstance(result, EvalCleanResult):
                sys.stdout.write(render_eval_summary(result))
            else:
                sys.stdout.write(render_corpus_summary(result))
    raise typer.Exit(verdict)


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


def _corpus_bytes(sources: dict[str, list[Path | Url]], opts: ScanOptions) -> int:
    return sum(
        f.stat().st_size
        for ps in sources.values()
        for p in ps
        for f in list_files(p, opts.include, opts.exclude)
    )
