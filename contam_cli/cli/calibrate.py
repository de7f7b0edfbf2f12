"""`contam calibrate`: per-source thresholds from known-clean controls; exit 0 or 2."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contam_cli.cli import common as c
from contam_cli.cli.options import FuzzyOpt
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.features.calibrate import calibrate, controls_needed
from contam_cli.io import iter_files
from contam_cli.policy.thresholds import Thresholds
from contam_cli.render.thresholds import render_thresholds

ControlsOpt = Annotated[
    list[Path],
    typer.Option(
        "--controls",
        metavar="PATH",
        help="Control texts known to be outside every source (written after its cutoff, or "
        "held out): .jsonl .json .txt or a directory, as an eval set (repeatable).",
        show_default=False,
    ),
]
OutputOpt = Annotated[
    Path,
    typer.Option(
        "--output", "-o", metavar="PATH", help="The thresholds file to write.", show_default=False
    ),
]
PercentileOpt = Annotated[
    float,
    typer.Option(
        "--percentile",
        metavar="Q",
        min=0.0,
        max=100.0,
        help="The percentile of the controls' scores each threshold sits on (or above).",
    ),
]
FloorOpt = Annotated[
    int | None,
    typer.Option(
        "--min-run",
        metavar="N",
        min=1,
        help="No run threshold below this (tokens).",
        show_default=False,
    ),
]
CommonOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--common-out",
        metavar="PATH",
        help="Also write the control n-grams found in the most corpus documents, as JSONL that "
        "--ignore-from reads ({'text': normalized tokens, 'documents': count} per line).",
        show_default=False,
    ),
]
CommonKOpt = Annotated[
    int,
    typer.Option("--common-k", metavar="K", min=1, help="How many n-grams --common-out writes."),
]


def calibrate_command(
    controls: ControlsOpt,
    output: OutputOpt,
    corpus: c.CorpusOpt = None,
    source: c.SourceOpt = None,
    percentile: PercentileOpt = 99.0,
    min_run: FloorOpt = None,
    ngram_size: c.NgramOpt = 13,
    common_out: CommonOutOpt = None,
    common_k: CommonKOpt = 1000,
    fuzzy: FuzzyOpt = False,
    field: c.FieldOpt = None,
    corpus_field: c.CorpusFieldOpt = None,
    id_field: c.IdFieldOpt = None,
    roles: c.RolesOpt = None,
    include: c.IncludeOpt = None,
    exclude: c.ExcludeOpt = None,
    jobs: c.JobsOpt = 0,
    chunk_size: c.ChunkOpt = 1 << 20,
    no_casefold: c.NoCasefoldOpt = False,
    no_nfkc: c.NoNfkcOpt = False,
    progress: c.ProgressOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Measure per-source thresholds on control texts known to be outside every source.

    Writes the thresholds file that `contam scan --thresholds` applies (with --fuzzy, a fuzzy
    threshold per source too, for `contam scan --fuzzy`). Exit code 0: written; 2: usage or
    input error (nothing is written).
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
            redact=False,
            hash_corpus=False,
            fuzzy=FuzzyConfig() if fuzzy else None,
        )
        inputs = [*controls, *c.local_paths(sources)]
        c.check_outputs([output, common_out], inputs)
        total = sum(
            f.stat().st_size
            for ps in sources.values()
            for p in ps
            for f in iter_files(p, opts.include, opts.exclude)
        ) * (2 if common_out is not None else 1)
        c.warn_unread([*controls, *sources.values()], opts)
        with c.progress_bar(progress, total, "calibrating") as tick:
            result = calibrate(
                sources,
                controls,
                percentile=percentile,
                min_run=min_run,
                options=opts,
                progress=tick,
                common_out=common_out,
                common_k=common_k,
                output=output,
            )
        _warn_rough(result)
        typer.echo(render_thresholds(result, str(output)), nl=False)


def _warn_rough(t: Thresholds) -> None:
    for line in t.warnings:
        c.say(f"contam: warning: {line}")
    for name, v in sorted(t.items()):
        if not v.well_estimated and t.percentile is not None:
            need = controls_needed(t.percentile)
            what = f"at least {need}" if need != float("inf") else "infinitely many"
            c.say(
                f"contam: warning: the thresholds for source {name!r} are not well estimated: "
                f"{v.controls} controls, a {t.percentile:g}th percentile needs {what}"
            )
