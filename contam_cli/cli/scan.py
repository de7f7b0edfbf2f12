"""`contam scan`: overlap, longest exact run and evidence per example; exit 0, 1 or 2."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contam_cli.cli import boilerplate as b
from contam_cli.cli import ci
from contam_cli.cli import common as c
from contam_cli.cli import engine_options as eo
from contam_cli.cli.options import EvalCacheOpt
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.errors import UsageError
from contam_cli.features.eval_cache import check_cache_dir
from contam_cli.features.scan import scan
from contam_cli.io.discover import list_files
from contam_cli.render import OutputFormat

FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        "-f",
        help="What to print on stdout (github: GitHub Actions annotations, the default when "
        "GITHUB_ACTIONS=true and stdout is not a terminal).",
    ),
]
LimitOpt = Annotated[
    int,
    typer.Option("--limit", min=0, help="Flagged rows in the table (0: all); JSON has every one."),
]
IndexOpt = Annotated[
    Path | None,
    typer.Option(
        "--index",
        help="Check against a persisted index (contam index build) instead of a corpus.",
        show_default=False,
    ),
]
VerifyOpt = Annotated[
    bool,
    typer.Option(
        "--verify",
        help="With --index: check every corpus file's sha256 against the index first (exit 2 if "
        "one changed or is gone); the report says whether it was checked.",
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the JSON report on stdout (same as --format json).")
]


def scan_command(
    ctx: typer.Context,
    eval_paths: c.EvalArg,
    corpus: c.CorpusOpt = None,
    source: c.SourceOpt = None,
    index: IndexOpt = None,
    verify: VerifyOpt = False,
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
    json_out: JsonOpt = False,
    fmt: FormatOpt = OutputFormat.table,
    report: c.ReportOpt = None,
    html: c.HtmlOpt = None,
    sarif: c.SarifOpt = None,
    redact: c.RedactOpt = False,
    no_fail: c.NoFailOpt = False,
    baseline: ci.BaselineOpt = None,
    write_baseline: ci.WriteBaselineOpt = None,
    baseline_per_source: ci.BaselinePerSourceOpt = False,
    fail_on: ci.FailOnOpt = None,
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
    no_corpus_hash: c.NoCorpusHashOpt = False,
    limit: LimitOpt = 50,
    ignore_common: b.IgnoreCommonOpt = None,
    ignore_from: b.IgnoreFromOpt = None,
    eval_cache: EvalCacheOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Check every eval example against the corpus: overlap, longest verbatim run, evidence.

    Exit code 0: nothing flagged (or every finding in --baseline); 1: contamination found;
    2: usage or input error.
    """
    with c.handle_errors(debug):
        sources = c.corpus_argument(corpus, source) if index is None or corpus or source else {}
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
            hash_corpus=not no_corpus_hash,
            ignore_common=ignore_common,
            ignore_from=tuple(ignore_from or ()),
            fuzzy=FuzzyConfig() if fuzzy else None,
            eval_cache=eval_cache,
        )
        policy = c.flag_policy(min_overlap, min_run, threshold, thresholds, min_fuzzy)
        # NOTE: --write-baseline may be the --baseline file (it updates it); no other output may.
        inputs = [*eval_paths, *c.local_paths(sources), *c.option_files(thresholds, ignore_from)]
        if index is not None:
            inputs.append(index)
        read = [*inputs, *c.option_files(baseline)]
        outputs = c.Outputs(report=report, html=html, sarif=sarif, inputs=read)
        if eval_cache is not None:
            check_cache_dir(eval_cache, read)
        gate = ci.Gate.check(
            baseline=baseline,
            write_baseline=write_baseline,
            per_source=baseline_per_source,
            fail_on=fail_on,
            no_fail=no_fail,
            inputs=inputs,
            outputs=outputs.paths(),
            normalization=opts.norm.describe(),
        )
        total = sum(
            f.stat().st_size
            for ps in sources.values()
            for p in ps
            for f in list_files(p, opts.include, opts.exclude)
        )
        total *= b.passes(ignore_common)
        if index is not None and (engine is not eo.Engine.local or checkpoint is not None):
            raise UsageError("--engine ray and --checkpoint scan a corpus, not an --index")
        executor = eo.executor_from_options(
            engine,
            ray_address,
            ray_cpus,
            jobs,
            checkpoint,
            config={"command": "scan"},
            ray_runtime_env=ray_runtime_env,
            inputs=read,
        )
        with c.progress_bar(progress, total, "scanning corpus") as tick:
            result = scan(
                eval_paths,
                sources or None,
                index=index,
                policy=policy,
                options=opts,
                progress=tick,
                executor=executor,
                verify=verify,
            )
        c.print_warnings(result)
        c.require_scored(result)
        result, subtracted = gate.apply(result)
        outputs.write(
            result,
            sarif_baseline=subtracted.sarif_states() if subtracted else None,
            also=lambda stack: gate.write(result, stack),
        )
        ci.append_step_summary(result, read)
        verdict = gate.verdict(result, subtracted)
        with c.stdout_guard(verdict):
            ci.print_result(result, ci.output_format(ctx, fmt, json_out), limit, subtracted)
    raise typer.Exit(verdict)
