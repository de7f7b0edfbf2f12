"""`contam probe`: model-based membership scores per eval example (exit 0, or 2 on errors), and
`contam probe train-lm`: the built-in n-gram LM to probe with."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TimeRemainingColumn,
)
from rich.text import Text
from typer.core import TyperGroup

from contam_cli.cli import common as c
from contam_cli.detectors.providers.ngram_lm import Boundary
from contam_cli.features.probe import DEFAULT_METHODS, ProbeProgress, probe, provider_options
from contam_cli.features.probe import train_lm as train_model
from contam_cli.render import OutputFormat, iter_json, render
from contam_cli.render.table import render_table
from contam_cli.report import Report


class _ProbeGroup(TyperGroup):
    """``contam probe EVAL...`` runs the probe (the command ``run``); ``contam probe train-lm``
    trains the n-gram LM. A first argument that is not a sub-command means ``run``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


probe_app = typer.Typer(
    cls=_ProbeGroup,
    help="Model-based detectors: Min-K%, Min-K%++, perplexity, zlib, guided prompting.\n\n"
    "contam probe EVAL... --model SPEC scores every example (same as contam probe run);\n"
    "contam probe train-lm CORPUS -o model.npz trains the built-in n-gram LM.",
    no_args_is_help=True,
)

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="hf:NAME_OR_PATH, openai:BASE_URL (any OpenAI-compatible server) or "
        "ngram-lm:PATH (a .npz from train-lm, or a text to train on).",
        show_default=False,
    ),
]
MethodOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--method",
        help="Comma-separated, repeatable: min-k, min-k++, ppl, zlib, guided. "
        f"Default: {','.join(DEFAULT_METHODS)}.",
        show_default=False,
    ),
]
KOpt = Annotated[
    list[float] | None,
    typer.Option(
        "--k", help="k% for min-k and min-k++ (repeatable). Default: 20.", show_default=False
    ),
]
ControlsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--controls",
        help="Known-clean examples (not in the training data): adds each score's percentile "
        "among theirs (repeatable).",
        show_default=False,
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the JSON report here (atomically); progress is kept in OUTPUT.partial.jsonl "
        "so that an interrupted run resumes.",
        show_default=False,
    ),
]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="What to print on stdout.")]
BatchOpt = Annotated[int, typer.Option("--batch-size", min=1, help="Examples per model call.")]
DeviceOpt = Annotated[
    str | None,
    typer.Option("--device", help="hf: cpu, cuda, cuda:N or auto (default).", show_default=False),
]
DtypeOpt = Annotated[
    str | None,
    typer.Option(
        "--dtype", help="hf: float32, float16, bfloat16 or auto (default).", show_default=False
    ),
]
ApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="openai: the environment variable holding the API key (never pass the key itself).",
        show_default=False,
    ),
]
ServedModelOpt = Annotated[
    str | None,
    typer.Option(
        "--served-model",
        help="openai: the model to ask for. Default: the first the server lists.",
        show_default=False,
    ),
]
RetriesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-retries",
        min=0,
        help="openai: retries of a failed request (default 4).",
        show_default=False,
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="guided: completion length in model tokens. Default: 1.5 per word of the true "
        "suffix, rounded up to a multiple of 8.",
        show_default=False,
    ),
]
LimitOpt = Annotated[
    int,
    typer.Option(
        "--limit", min=0, help="Examples listed, most suspicious first (0: all); JSON has all."
    ),
]
RestartOpt = Annotated[
    bool, typer.Option("--restart", help="Ignore the partial results of an earlier run (-o).")
]


@probe_app.command("run")
def probe_command(
    eval_paths: c.EvalArg,
    model: ModelOpt,
    method: MethodOpt = None,
    k: KOpt = None,
    controls: ControlsOpt = None,
    output: OutputOpt = None,
    fmt: FormatOpt = OutputFormat.table,
    batch_size: BatchOpt = 16,
    device: DeviceOpt = None,
    dtype: DtypeOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    served_model: ServedModelOpt = None,
    max_retries: RetriesOpt = None,
    max_tokens: MaxTokensOpt = None,
    restart: RestartOpt = False,
    limit: LimitOpt = 20,
    field: c.FieldOpt = None,
    id_field: c.IdFieldOpt = None,
    roles: c.RolesOpt = None,
    include: c.IncludeOpt = None,
    exclude: c.ExcludeOpt = None,
    redact: c.RedactOpt = False,
    progress: c.ProgressOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Score every eval example with a model (Min-K%, Min-K%++, perplexity, zlib, guided).

    The scores are membership signals, meaningful relative to each other and to --controls;
    the probe flags nothing (threshold its scores with contam report). Exit code 0: scored;
    2: usage, input or model error, or no example scored (the report, written, says why).
    """
    with c.handle_errors(debug):
        options = provider_options(
            model,
            device=device,
            dtype=dtype,
            api_key_env=api_key_env,
            served_model=served_model,
            max_retries=max_retries,
        )
        with _progress(progress) as tick:
            report = probe(
                eval_paths,
                model=model,
                methods=method or DEFAULT_METHODS,
                k=k or (20,),
                controls=controls,
                eval_spec=c.text_spec(field, roles, id_field),
                include=include or (),
                exclude=exclude or (),
                batch_size=batch_size,
                output=output,
                resume=not restart,
                progress=tick,
                provider_options=options,
                max_tokens=max_tokens,
                redact=redact,
            )
        c.print_warnings(report)
        # NOTE: a probe with no score is no evidence either way; its report is written (it
        # names each example and why), but a pipeline must not go on as if it had scores.
        said = f"{output} lists them; " if output is not None else ""
        c.require_scored(report, f"{said}check --field and --roles")
        rows = limit or len(report.examples)
        if fmt is OutputFormat.json:
            for piece in iter_json(report):
                sys.stdout.write(piece.decode())
        elif fmt is OutputFormat.table:
            c.write_table(_table(report, rows), False)
        else:
            text = render(report, fmt, top=rows)
            sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _table(report: Report, rows: int) -> str:
    """The report's table (its summary line says what a probe's counts mean)."""
    return render_table(report, clean_rows=rows)


class _RateColumn(ProgressColumn):
    """Examples per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("- ex/s" if speed is None else f"{speed:.1f} ex/s", style="progress.data.speed")


@contextmanager
def _progress(enabled: bool | None) -> Iterator[ProbeProgress | None]:
    """A Rich progress bar on stderr counting examples (or None when not shown)."""
    show = sys.stderr.isatty() if enabled is None else enabled
    if not show:
        yield None
        return
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
        TimeRemainingColumn(),
        console=c.err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("probing", total=None)
        started: list[bool] = []

        def tick(done: int, total: int) -> None:
            if not started:
                # NOTE: examples an interrupted run scored are done, not part of the speed.
                bar.reset(task, total=total, completed=done)
                started.append(True)
            else:
                bar.update(task, completed=done)

        yield tick


# -- train-lm ------------------------------------------------------------------------------------

CorpusArg = Annotated[
    list[Path],
    typer.Argument(
        help="Training text: .txt .jsonl .json .parquet, a directory, compressed or not.",
        show_default=False,
    ),
]
LmOutputOpt = Annotated[
    Path, typer.Option("--output", "-o", help="The model file to write (.npz).", show_default=False)
]
OrderOpt = Annotated[int, typer.Option("--order", min=1, max=6, help="n: the longest n-gram.")]
MinCountOpt = Annotated[int, typer.Option("--min-count", min=1, help="Rarer tokens become <unk>.")]


class LmBoundary(str, Enum):
    """Where the n-gram LM's sequences start and end."""

    document = "document"
    line = "line"
    sentence = "sentence"


BoundaryOpt = Annotated[
    LmBoundary, typer.Option("--boundary", help="Where training sequences start and end.")
]


@probe_app.command("train-lm")
def train_lm_command(
    corpus: CorpusArg,
    output: LmOutputOpt,
    order: OrderOpt = 3,
    min_count: MinCountOpt = 1,
    boundary: BoundaryOpt = LmBoundary.document,
    corpus_field: c.CorpusFieldOpt = None,
    roles: c.RolesOpt = None,
    include: c.IncludeOpt = None,
    exclude: c.ExcludeOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Train the built-in n-gram language model on a corpus, for --model ngram-lm:OUTPUT.

    The corpus may be any format contam reads (one document per .txt file, per JSONL record).
    """
    with c.handle_errors(debug):
        trained = train_model(
            corpus,
            output,
            corpus_spec=c.text_spec(corpus_field, roles),
            include=include or (),
            exclude=exclude or (),
            order=order,
            min_count=min_count,
            boundary=cast(Boundary, boundary.value),
        )
        docs = f"{trained.documents:,} document{'s' if trained.documents != 1 else ''}"
        sys.stdout.write(
            f"trained a {order}-gram LM on {trained.tokens:,} tokens ({trained.vocab_size:,} "
            f"types) from {docs} -> {trained.path}\n"
        )
