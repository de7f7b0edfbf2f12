"""`contam report`: combine detectors' scores, measure them against labels; exit 0, 1 or 2."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from contam_cli.cli import ci
from contam_cli.cli import common as c
from contam_cli.errors import UsageError
from contam_cli.features.combine import build_report, normalization_disagreement, parse_direction
from contam_cli.features.combine.states import fail_on_of, recorded_result
from contam_cli.io.output import atomic_writer, output_group
from contam_cli.policy.baseline import gate
from contam_cli.render import OutputFormat, iter_json, render, write_json
from contam_cli.report import Report

InputsArg = Annotated[
    list[Path],
    typer.Argument(
        help="Reports (contam scan/probe --report) and JSONL or CSV files of "
        '{"id", "<method>": score}.',
        show_default=False,
    ),
]
LabelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--labels",
        help='Known labels, JSONL or CSV of {"id", "label"} (1/true: contaminated; the key may '
        "also be contaminated or leaked): AUCs, --weight-by-auc, --prevalence.",
        show_default=False,
    ),
]
DirectionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--direction",
        help="METHOD=higher|lower: which way a method is more suspicious (repeatable; scores "
        "files default to higher, reports say their own).",
        show_default=False,
    ),
]
WeightOpt = Annotated[
    bool,
    typer.Option(
        "--weight-by-auc",
        help="Weigh each method by max(0, AUC - 0.5) on --labels (default: equal weights).",
    ),
]
ThresholdOpt = Annotated[
    float, typer.Option("--threshold", help="Flag when the combined z-score >= this.")
]
PrevalenceOpt = Annotated[
    float | None,
    typer.Option(
        "--prevalence",
        min=0.0,
        max=1.0,
        help="Expected share of contaminated documents: precision and review queue per method.",
        show_default=False,
    ),
]
DocumentsOpt = Annotated[
    float | None,
    typer.Option(
        "--documents",
        min=0.0,
        help="Documents to review at --prevalence (default: the number of examples).",
        show_default=False,
    ),
]
TopOpt = Annotated[int, typer.Option("--top", min=0, help="Examples listed (table, markdown).")]
MethodNameOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--method-name",
        help="INPUT:OLD=NEW renames input INPUT's method OLD (INPUT: its path, file name or "
        "position from 1; repeatable). Needed when two inputs have a method of the same name.",
        show_default=False,
    ),
]
CombinedOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--combined-only",
        help="Flag on the combined rule alone (default: an example an input report flagged, "
        "by that report's own rules, is flagged too).",
    ),
]
FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        "-f",
        help="What to write (github: GitHub Actions annotations, the default on stdout when "
        "GITHUB_ACTIONS=true and stdout is not a terminal).",
    ),
]
BootstrapOpt = Annotated[
    int, typer.Option("--bootstrap", min=1, help="Bootstrap resamples of each AUC interval.")
]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")]
FailOnOpt = Annotated[
    ci.FailOnChoice | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 on new findings (default when --baseline is given or an input scan "
        "recorded one, unless it recorded --fail-on any), on any finding, or never.",
        show_default=False,
    ),
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        metavar="FILE",
        help="Accepted findings (contam scan --write-baseline), matched by fingerprint as the "
        "scan does; replaces the states the input reports recorded.",
        show_default=False,
    ),
]


def report_command(
    ctx: typer.Context,
    inputs: InputsArg,
    labels: LabelsOpt = None,
    direction: DirectionOpt = None,
    weight_by_auc: WeightOpt = False,
    threshold: ThresholdOpt = 2.0,
    prevalence: PrevalenceOpt = None,
    documents: DocumentsOpt = None,
    top: TopOpt = 20,
    method_name: MethodNameOpt = None,
    combined_only: CombinedOnlyOpt = False,
    fmt: FormatOpt = OutputFormat.table,
    output: c.StdoutFileOpt = None,
    report: c.ReportOpt = None,
    bootstrap: BootstrapOpt = 1000,
    seed: SeedOpt = 0,
    redact: c.RedactOpt = False,
    baseline: BaselineOpt = None,
    fail_on: FailOnOpt = None,
    no_fail: c.NoFailOpt = False,
    debug: c.DebugOpt = False,
) -> None:
    """Combine detectors: z-score each method, flag on their weighted mean (and, unless
    --combined-only, what an input report's own rules flagged); with labels, AUC (95% bootstrap
    interval), precision at prevalence and the review queue.

    Input scans' baseline states are kept (an example is accepted only if every input that
    flagged it accepted it) and gate as the scan did (--fail-on).

    Exit code 0: nothing flagged (or every finding accepted, --fail-on new); 1: something
    flagged; 2: usage or input error, or no example scored (every score null).
    """
    with c.handle_errors(debug):
        read = [*inputs, *c.option_files(labels, baseline)]
        c.check_outputs([report, output], read)
        the_gate = ci.Gate.check(
            baseline=baseline,
            write_baseline=None,
            per_source=False,
            fail_on=fail_on,
            no_fail=no_fail,
            inputs=read,
        )
        if the_gate.baseline is not None and the_gate.baseline.per_source:
            raise UsageError(
                f"{baseline}: a per-source baseline keys findings by the sources the scan's "
                "rules found them in, which a combined report does not hold: give it to "
                "contam scan --baseline and combine that scan's report"
            )
        chosen = the_gate.fail_on if fail_on or no_fail or baseline else None
        result = build_report(
            inputs,
            labels=labels,
            directions=dict(parse_direction(d) for d in direction or ()),
            weight_by_auc=weight_by_auc,
            threshold=threshold,
            prevalence=prevalence,
            documents=documents,
            method_names=method_name or (),
            bootstrap=bootstrap,
            seed=seed,
            redact=redact,
            input_rules=not combined_only,
            fail_on=chosen,
        )
        c.print_warnings(result)
        c.require_scored(result, "every score in the inputs is null or missing", inputs)
        if the_gate.baseline is not None:
            _check_fingerprints(result)
            result, states = the_gate.apply(result)
        else:
            states = recorded_result(result)
        failing = gate(result, states, chosen or fail_on_of(result))
        verdict = c.EXIT_FOUND if failing else c.EXIT_CLEAN
        if output is None:
            # NOTE: annotations by default under GitHub Actions, as scan prints; -o keeps fmt.
            fmt = ci.output_format(ctx, fmt)
        sarif = None if states is None else states.sarif_states()
        text = None if fmt is OutputFormat.json else render(result, fmt, top=top, baseline=sarif)
        with output_group() as stack:
            if report is not None:
                write_json(result, stack.enter_context(atomic_writer(report, inputs=read)))
            if output is not None:
                fh = stack.enter_context(atomic_writer(output, inputs=read))
                if text is None:
                    write_json(result, fh)
                else:
                    fh.write(text.encode())
        ci.append_step_summary(result, read)
        if output is None:
            with c.stdout_guard(verdict):
                _print(result, fmt, text)
    if verdict:
        raise typer.Exit(verdict)


def _check_fingerprints(result: Report) -> None:
    """UsageError when the input reports disagree on normalization: the combined examples'
    fingerprints are then of several kinds, and a baseline's would not match them as the scan's
    rule does."""
    disagreement = normalization_disagreement(result.config)
    if disagreement is not None:
        raise UsageError(
            f"--baseline: the input reports disagree on normalization ({disagreement}): give "
            "the baseline to each scan (contam scan --baseline) and combine their reports"
        )


def _print(result: Report, fmt: OutputFormat, text: str | None) -> None:
    """The combined report on stdout: JSON piece by piece (`text` None), else `text` (a
    table coloured on a terminal)."""
    if text is None:
        for piece in iter_json(result):
            sys.stdout.write(piece.decode())
    elif fmt is OutputFormat.table:
        c.write_table(text, result.contaminated)
        line = ci.baseline_line(result)
        if line is not None:
            sys.stdout.write(line + "\n")
    else:
        sys.stdout.write(text)
