"""`contam bench`: every detector on the labelled benchmark, over seeds; exit 0 (2 on errors)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from contam_cli.cli import common as c
from contam_cli.errors import UsageError
from contam_cli.features.bench.runner import DETECTORS, BenchProgress, run_bench
from contam_cli.features.probe.provider import model_paths
from contam_cli.io.output import write_atomic
from contam_cli.render.bench import render_bench_json, render_bench_markdown


class BenchFormat(str, Enum):
    """What ``contam bench`` writes."""

    markdown = "markdown"
    json = "json"


SeedsOpt = Annotated[
    int, typer.Option("--seeds", min=1, metavar="N", help="Labelled sets, seeds 0 .. SEEDS-1.")
]
PrevalenceOpt = Annotated[
    float,
    typer.Option(
        "--prevalence",
        min=0.0,
        max=1.0,
        metavar="P",
        help="Share of contaminated documents (deployment).",
    ),
]
DocumentsOpt = Annotated[
    float, typer.Option("--documents", min=0.0, metavar="N", help="Documents swept (deployment).")
]
NOpt = Annotated[
    str, typer.Option("--n", "-n", help="n-gram sizes, comma-separated.", metavar="N,N,...")
]
MethodsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--methods",
        metavar="LIST",
        help="Probe methods with --model: min-k, min-k++, ppl, zlib, guided (comma-separated "
        "or repeated; default: min-k, min-k++, ppl, zlib).",
        show_default=False,
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        metavar="SPEC",
        help="Also run the probe: ngram-lm (the built-in n-gram LM trained on each seed's "
        "corpus), or hf:..., openai:... (a model that never saw the benchmark).",
        show_default=False,
    ),
]
DetectorsOpt = Annotated[
    str | None,
    typer.Option(
        "--detectors",
        metavar="LIST",
        help=f"Only these, comma-separated: {', '.join(d.name for d in DETECTORS)} "
        "(default: all that can run).",
        show_default=False,
    ),
]
IgnoreCommonOpt = Annotated[
    int,
    typer.Option(
        "--ignore-common",
        min=0,
        metavar="K",
        help="The boilerplate-suppression row: n-grams in more than K documents ignored.",
    ),
]
FormatOpt = Annotated[
    BenchFormat, typer.Option("--format", "-f", metavar="FORMAT", help="markdown or json.")
]


def bench_command(
    seeds: SeedsOpt = 10,
    prevalence: PrevalenceOpt = 0.01,
    documents: DocumentsOpt = 10000,
    n: NOpt = "5,8,13,20",
    methods: MethodsOpt = None,
    model: ModelOpt = None,
    detectors: DetectorsOpt = None,
    ignore_common: IgnoreCommonOpt = 20,
    fmt: FormatOpt = BenchFormat.markdown,
    output: c.StdoutFileOpt = None,
    progress: c.ProgressOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Score every detector on the labelled benchmark: AUC per leak kind, recall and FPR at the
    defaults, and the review queue at a realistic prevalence.

    Exit code 0, or 2 on a usage error.
    """
    with c.handle_errors(debug):
        chosen = _names(detectors) if detectors is not None else None
        read = model_paths(model)
        c.check_outputs([output], read)
        with _progress(progress) as tick:
            result = run_bench(
                seeds=seeds,
                prevalence=prevalence,
                documents=documents,
                ns=_sizes(n),
                methods=methods,
                model=model,
                progress=tick,
                detectors=chosen,
                ignore_common=ignore_common,
            )
        for note in result.notes:
            c.say(f"contam: note: {note}")
        text = (
            render_bench_json(result) if fmt is BenchFormat.json else render_bench_markdown(result)
        )
        if output is not None:
            write_atomic(output, text, inputs=read)
        else:
            with c.stdout_guard(c.EXIT_CLEAN):
                sys.stdout.write(text)


def _names(value: str) -> list[str]:
    names = [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise UsageError("--detectors: give at least one detector")
    return names


def _sizes(value: str) -> list[int]:
    """``"5,8,13"`` as [5, 8, 13]; anything else is a UsageError."""
    try:
        sizes = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--n expects n-gram sizes like 5,8,13,20, got {value!r}") from None
    return sizes


@contextmanager
def _progress(enabled: bool | None) -> Iterator[BenchProgress | None]:
    """A Rich progress bar on stderr counting steps (or None when not shown).

    NOTE: drawn from the callback, without Rich's refresh thread (as the scan's bar).
    """
    show = sys.stderr.isatty() if enabled is None else enabled
    if not show:
        yield None
        return
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=c.err_console,
        transient=True,
        auto_refresh=False,
    ) as bar:
        task = bar.add_task("benchmark", total=None)

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)
            bar.refresh()

        yield tick
