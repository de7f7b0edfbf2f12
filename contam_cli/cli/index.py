"""`contam index build` / `contam index info`: a persisted corpus index for repeated checks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from contam_cli.cli import common as c
from contam_cli.cli import engine_options as eo
from contam_cli.cli.exits import say
from contam_cli.engine.corpus_index import build_corpus_index, load_header
from contam_cli.engine.options import ScanOptions
from contam_cli.features.eval_side import corpus_warnings
from contam_cli.features.scan import check_input_roles, resolve_sources

index_app = typer.Typer(
    help="Build a persisted corpus index, to check eval sets in time proportional to their size.",
    no_args_is_help=True,
)

OutOpt = Annotated[Path, typer.Option("--output", "-o", help="Index directory to write.")]
PositionsOpt = Annotated[
    bool,
    typer.Option(
        "--positions/--no-positions",
        help="Store document and position of every n-gram: exact runs and evidence from the "
        "index (larger). Without: chained runs, no document.",
    ),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing index directory.")]
CheckpointOpt = Annotated[
    Path | None,
    typer.Option(
        "--checkpoint",
        help="Keep each finished map and reduce task in DIR; rerun the same command to resume an "
        "interrupted build (another configuration is refused). DIR is removed once the index "
        "is written.",
        show_default=False,
    ),
]


@index_app.command("build")
def build_command(
    output: OutOpt,
    corpus: c.CorpusOpt = None,
    source: c.SourceOpt = None,
    ngram_size: c.NgramOpt = 13,
    positions: PositionsOpt = False,
    corpus_field: c.CorpusFieldOpt = None,
    roles: c.RolesOpt = None,
    include: c.IncludeOpt = None,
    exclude: c.ExcludeOpt = None,
    no_casefold: c.NoCasefoldOpt = False,
    no_nfkc: c.NoNfkcOpt = False,
    force: ForceOpt = False,
    jobs: c.JobsOpt = 0,
    engine: eo.EngineOpt = eo.Engine.local,
    ray_address: eo.RayAddressOpt = None,
    ray_cpus: eo.RayCpusOpt = None,
    ray_runtime_env: eo.RayRuntimeEnvOpt = None,
    checkpoint: CheckpointOpt = None,
    progress: c.ProgressOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Index every n-gram of a corpus (sorted, memory-mapped hashes with a provenance header).

    The same index, byte for byte, with any --jobs or --engine; with --engine ray on a cluster,
    --output must be on storage every node shares.
    """
    with c.handle_errors(debug):
        opts = ScanOptions(
            n=ngram_size,
            norm=c.norm_config(no_nfkc, no_casefold),
            corpus_spec=c.text_spec(corpus_field, roles),
            include=tuple(include or ()),
            exclude=tuple(exclude or ()),
        )
        given = c.corpus_argument(corpus, source)
        inputs = [p for ps in given.values() for p in ps]
        executor = eo.executor_from_options(
            engine,
            ray_address,
            ray_cpus,
            jobs,
            None,
            ray_runtime_env=ray_runtime_env,
            inputs=c.local_paths(given),
        )
        sources = resolve_sources(given, opts)
        check_input_roles(None, [p for s in sources for p in s.paths], opts)
        c.warn_unread(list(given.values()), opts)
        total = sum(p.stat().st_size for s in sources for p in s.paths)
        with c.progress_bar(progress, total, "indexing corpus") as tick:
            header = build_corpus_index(
                sources,
                output,
                n=opts.n,
                norm=opts.norm,
                positions=positions,
                corpus_spec=opts.corpus_spec,
                force=force,
                progress=tick,
                inputs=inputs,
                jobs=jobs,
                executor=executor,
                checkpoint=checkpoint,
                on_damaged=lambda line: say(f"contam: warning: {line}"),
                roots=given,
                globs=(opts.include, opts.exclude),
            )
        for s in header.sources:
            sys.stdout.write(
                f"{s['name']}: {len(s['files'])} files, {s['documents']} documents, "
                f"{s['ngrams']} n-grams ({s['stored']} stored)\n"
            )
        sys.stdout.write(f"wrote {output} (n={header.n}, positions={header.positions})\n")
        for w in corpus_warnings(header.sources):
            say(f"contam: warning: {w}")


@index_app.command("info")
def info_command(
    path: Annotated[Path, typer.Argument(help="Index directory.")],
    debug: c.DebugOpt = False,
) -> None:
    """Print an index's header: how it was built and from which files."""
    with c.handle_errors(debug):
        header = load_header(path)
        sys.stdout.write(orjson.dumps(header.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
