"""What the commands share for CI: the baseline options and the gate's exit code, GitHub
annotations when run by GitHub Actions, and the Markdown step summary.

* ``--baseline FILE`` subtracts accepted findings; ``--write-baseline FILE`` records the current
  ones (it may be the file ``--baseline`` reads: that one is read whole first); ``--fail-on``
  says what fails the gate: ``new`` findings (the default with a baseline), ``any`` (the default
  without one) or ``none``.
* ``--format github`` is the default when ``GITHUB_ACTIONS=true`` and stdout is not a terminal; an
  explicit ``--format`` or ``--json`` wins.
* When ``GITHUB_STEP_SUMMARY`` names a file, the Markdown summary is appended to it (never
  truncated, kept under GitHub's 1 MiB); a failure to write it is a warning, not another verdict.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Annotated, cast

import typer

from contam_cli.cli.exits import EXIT_CLEAN, EXIT_FOUND, say
from contam_cli.cli.outputs import print_report
from contam_cli.errors import ContamError, OutputError, UsageError
from contam_cli.io.output import atomic_writer, check_target
from contam_cli.policy.baseline import (
    Baseline,
    BaselineResult,
    FailOn,
    dump_baseline,
    findings,
    gate,
    load_baseline,
    subtract,
)
from contam_cli.render import OutputFormat
from contam_cli.render.markdown import MIN_BYTES, render_markdown
from contam_cli.report import Report

__all__ = [
    "BaselineOpt",
    "BaselinePerSourceOpt",
    "FailOnChoice",
    "FailOnOpt",
    "Gate",
    "WriteBaselineOpt",
    "append_step_summary",
    "baseline_line",
    "output_format",
    "print_result",
]

#: GitHub's limit on one step's summary file (bytes).
SUMMARY_LIMIT = 1 << 20


class FailOnChoice(str, Enum):
    """What fails the gate (``--fail-on``)."""

    new = "new"
    any = "any"
    none = "none"


BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        metavar="FILE",
        help="Accepted findings (contam scan --write-baseline): only findings not in it fail the "
        "gate (see --fail-on).",
        show_default=False,
    ),
]
WriteBaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--write-baseline",
        metavar="FILE",
        help="Record this run's findings as accepted (one per line, no text; commit the file).",
        show_default=False,
    ),
]
BaselinePerSourceOpt = Annotated[
    bool,
    typer.Option(
        "--baseline-per-source",
        help="With --write-baseline: key findings by fingerprint and source, so that the same "
        "example found in another source is new.",
    ),
]
FailOnOpt = Annotated[
    FailOnChoice | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 on new findings (default with --baseline), on any finding (default "
        "without), or never.",
        show_default=False,
    ),
]


@dataclass(frozen=True)
class Gate:
    """A command's baseline options, checked before any work."""

    baseline: Baseline | None
    write_to: Path | None
    per_source: bool
    fail_on: FailOn
    inputs: tuple[Path, ...] = ()

    @classmethod
    def check(
        cls,
        *,
        baseline: Path | None,
        write_baseline: Path | None,
        per_source: bool,
        fail_on: FailOnChoice | None,
        no_fail: bool,
        inputs: Sequence[Path],
        outputs: Sequence[Path] = (),
        normalization: Mapping[str, object] | None = None,
    ) -> Gate:
        """The options made one value: the baseline read and checked against the scan's
        normalization, the file to write checked (never an input, never another output)."""
        if no_fail and fail_on not in (None, FailOnChoice.none):
            raise UsageError(f"--no-fail contradicts --fail-on {fail_on.value}")
        if per_source and write_baseline is None:
            raise UsageError(
                "--baseline-per-source applies to --write-baseline (a baseline file says how it "
                "is keyed)"
            )
        chosen = "none" if no_fail else (fail_on.value if fail_on else None)
        read = None
        if baseline is not None:
            read = load_baseline(baseline)
            read.check_normalization(normalization)
        if write_baseline is not None:
            target = check_target(write_baseline, inputs)
            for other in outputs:
                if Path(other).resolve() == target:
                    raise UsageError(f"{write_baseline}: given for two outputs ({other} too)")
        default = "new" if read is not None else "any"
        return cls(read, write_baseline, per_source, cast(FailOn, chosen or default), tuple(inputs))

    def apply(self, report: Report) -> tuple[Report, BaselineResult | None]:
        """`report` less the baseline (with each finding's state and, in
        ``stats.baseline.fail_on``, the gate), or as it is without one."""
        if self.baseline is None:
            return report, None
        result = subtract(report, self.baseline)
        marked = result.report
        stats = {**marked.stats, "baseline": {**marked.stats["baseline"], "fail_on": self.fail_on}}
        marked = replace(marked, stats=stats)
        return marked, replace(result, report=marked)

    def write(self, report: Report, stack: ExitStack) -> None:
        """Enter ``--write-baseline``'s writer into `stack` (an output group: the baseline
        appears with the command's other outputs, or none of them do), when asked."""
        if self.write_to is not None:
            text = dump_baseline(findings(report, per_source=self.per_source))
            stack.enter_context(atomic_writer(self.write_to, inputs=self.inputs, mode="w")).write(
                text
            )

    def verdict(self, report: Report, result: BaselineResult | None) -> int:
        return EXIT_FOUND if gate(report, result, self.fail_on) else EXIT_CLEAN


def output_format(ctx: typer.Context, fmt: OutputFormat, json_out: bool = False) -> OutputFormat:
    """The format to print: ``--json``, an explicit ``--format``, else ``github`` when GitHub
    Actions runs the command with stdout in its log, else `fmt` (the default)."""
    if json_out:
        return OutputFormat.json
    source = ctx.get_parameter_source("fmt")
    if source is not None and source.name != "DEFAULT":
        return fmt
    if os.environ.get("GITHUB_ACTIONS") == "true" and not sys.stdout.isatty():
        return OutputFormat.github
    return fmt


def baseline_line(report: Report) -> str | None:
    """One line on the baseline's counts (None without a baseline)."""
    b = report.stats.get("baseline")
    if not isinstance(b, Mapping):
        return None
    fixed = b.get("fixed", 0)
    hint = "; refresh it with --write-baseline" if fixed else ""
    return (
        f"baseline {b.get('path')}: {b.get('new', 0)} new, {b.get('accepted', 0)} accepted, "
        f"{fixed} fixed (in the baseline, no longer found){hint}"
    )


def print_result(
    report: Report, fmt: OutputFormat, limit: int, result: BaselineResult | None
) -> None:
    """The report on stdout in `fmt`: SARIF with the baseline's states, a table followed by the
    baseline's counts, any other format as :func:`print_report` prints it."""
    if fmt is OutputFormat.sarif and result is not None:
        from contam_cli.render.sarif import render_sarif

        sys.stdout.write(render_sarif(report, baseline=result.sarif_states()))
        return
    print_report(report, fmt, limit)
    line = baseline_line(report)
    if fmt is OutputFormat.table and line is not None:
        sys.stdout.write(line + "\n")


def append_step_summary(report: Report, inputs: Sequence[Path] = ()) -> None:
    """Append the Markdown summary to ``$GITHUB_STEP_SUMMARY`` when it is set; a failure is a
    warning on stderr (the verdict stays what the report says)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        target = check_target(path, inputs)
        size = target.stat().st_size if target.exists() else 0
        budget = min(1_000_000, SUMMARY_LIMIT - size - 2)
        if budget < MIN_BYTES:
            raise OutputError(f"it is full ({size} bytes)")
        text = render_markdown(report, max_bytes=budget)
        # NOTE: append, never truncate: earlier steps' summaries share the file.
        with open(target, "a", encoding="utf-8", newline="") as fh:
            fh.write(("\n" if size else "") + text)
    except (OSError, ContamError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        say(f"contam: warning: cannot append the step summary to {path}: {why}")
