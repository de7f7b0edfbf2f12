"""`contam impact`: the score on the clean subset beside the full score, with intervals; exit 0/2.

A measurement, not a gate: it exits 0 whatever the difference (2 on a usage or input error).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from contam_cli.cli import common as c
from contam_cli.features.impact import Impact, impact
from contam_cli.io.output import write_atomic
from contam_cli.render.impact import (
    impact_svg,
    render_impact_json,
    render_impact_markdown,
    render_impact_table,
)


class MetricChoice(str, Enum):
    """What the outcomes are."""

    accuracy = "accuracy"
    mean = "mean"


class MatchChoice(str, Enum):
    """How results records find their report examples."""

    id = "id"
    fingerprint = "fingerprint"


class ImpactFormat(str, Enum):
    """Formats `contam impact --format` writes."""

    table = "table"
    json = "json"
    markdown = "markdown"
    svg = "svg"


RENDER: dict[ImpactFormat, Callable[[Impact], str]] = {
    ImpactFormat.table: render_impact_table,
    ImpactFormat.json: render_impact_json,
    ImpactFormat.markdown: render_impact_markdown,
    ImpactFormat.svg: lambda value: impact_svg(value) + "\n",
}

ReportArg = Annotated[
    Path,
    typer.Argument(
        help="A report from contam scan --report (or clean --report).", show_default=False
    ),
]
ResultsOpt = Annotated[
    Path,
    typer.Option(
        "--results",
        "-r",
        help="Per-example eval outcomes: JSONL or CSV, e.g. lm-eval --log_samples samples_*.jsonl.",
        show_default=False,
    ),
]
MetricOpt = Annotated[
    MetricChoice,
    typer.Option("--metric", help="accuracy: outcomes are 0/1; mean: any number."),
]
ScoreFieldOpt = Annotated[
    str | None,
    typer.Option(
        "--score-field",
        help="Outcome field. Default: the first of correct, acc, exact_match, score.",
        show_default=False,
    ),
]
IdFieldOpt = Annotated[
    str | None,
    typer.Option(
        "--id-field",
        help="Results id field, dotted path. Default: id-like keys, then doc_id.",
        show_default=False,
    ),
]
MatchOpt = Annotated[
    MatchChoice,
    typer.Option(
        "--match", help="Match results to report examples by id, or by the text's fingerprint."
    ),
]
TextFieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        help="With --match fingerprint: the text field(s) of each record's doc, as given to the "
        "scan (repeatable). Default: auto.",
        show_default=False,
    ),
]
FilterOpt = Annotated[
    str | None,
    typer.Option(
        "--filter",
        help="lm-eval files with several filters: use the rows of this one (e.g. strict-match).",
        show_default=False,
    ),
]
BootstrapOpt = Annotated[
    int, typer.Option("--bootstrap", min=1, help="Bootstrap resamples and permutations.")
]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of every resampling.")]
LevelsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--levels",
        help="Strictness levels, e.g. overlap>=0.2,0.5,0.8 or run>=13,30,50 (repeatable; none: "
        "off). Default: overlap>=0.2,0.5,0.8.",
        show_default=False,
    ),
]
FormatOpt = Annotated[ImpactFormat, typer.Option("--format", "-f", help="What to write.")]


def impact_command(
    report: ReportArg,
    results: ResultsOpt,
    metric: MetricOpt = MetricChoice.accuracy,
    score_field: ScoreFieldOpt = None,
    id_field: IdFieldOpt = None,
    match: MatchOpt = MatchChoice.id,
    field: TextFieldOpt = None,
    lm_filter: FilterOpt = None,
    bootstrap: BootstrapOpt = 10_000,
    seed: SeedOpt = 0,
    levels: LevelsOpt = None,
    fmt: FormatOpt = ImpactFormat.table,
    output: c.StdoutFileOpt = None,
    debug: c.DebugOpt = False,
) -> None:
    """Score on the clean subset beside the full score, with bootstrap intervals.

    Exit code 0: measured (whatever the difference); 2: usage or input error.
    """
    with c.handle_errors(debug):
        read = [report, results]
        c.check_outputs([output], read)
        value = impact(
            report,
            results,
            metric=metric.value,  # type: ignore[arg-type]
            score_field=score_field,
            id_field=id_field,
            match=match.value,  # type: ignore[arg-type]
            text_fields=tuple(field or ()),
            lm_filter=lm_filter,
            bootstrap=bootstrap,
            seed=seed,
            levels=levels,
        )
        text = RENDER[fmt](value)
        if output is not None:
            write_atomic(output, text, inputs=read)
        else:
            sys.stdout.write(text)
