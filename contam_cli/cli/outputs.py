"""A command's outputs: checked before any work, written together, printed to stdout."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.text import Text

from contam_cli.errors import NothingScoredError, UsageError
from contam_cli.io.inputs import name_paths
from contam_cli.io.output import atomic_writer, check_target, output_group
from contam_cli.render import OutputFormat, render
from contam_cli.render.table import render_table
from contam_cli.report import Report, iter_json, write_json

__all__ = [
    "Outputs",
    "check_outputs",
    "option_files",
    "print_report",
    "require_scored",
    "write_table",
]


def option_files(*given: Path | Iterable[Path] | None) -> list[Path]:
    """The files that options name for a command to read (``--thresholds``, each
    ``--ignore-from``, ``--labels``...): inputs too, which no output may land over or inside."""
    out: list[Path] = []
    for item in given:
        if isinstance(item, Path):
            out.append(item)
        elif item is not None:
            out.extend(item)
    return out


def check_outputs(paths: Iterable[Path | None], inputs: Sequence[Path]) -> None:
    """Check every output file given before any work (:func:`check_target`: never over or
    inside one of `inputs`); one path given for two outputs is a UsageError."""
    seen: dict[Path, Path] = {}
    for path in paths:
        if path is None:
            continue
        target = check_target(path, inputs)
        if target in seen:
            raise UsageError(f"{path}: given for two outputs ({seen[target]} too)")
        seen[target] = path


@dataclass
class Outputs:
    """The files a command writes besides stdout (the JSON report, the HTML page, SARIF): each
    checked when made, so that a bad path fails before any work; all written together."""

    report: Path | None = None
    html: Path | None = None
    sarif: Path | None = None
    inputs: Sequence[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_outputs(self.paths(), self.inputs)

    def paths(self) -> list[Path]:
        return [p for p in (self.report, self.html, self.sarif) if p is not None]

    def write(
        self,
        report: Report,
        *,
        sarif_baseline: Mapping[str, str] | None = None,
        also: Callable[[ExitStack], None] | None = None,
    ) -> None:
        """Write every output of `report`: all appear, or none (`sarif_baseline`: each
        accepted finding's SARIF baselineState, by fingerprint; `also` enters the command's
        other writers, a baseline say, into the same output group)."""
        if not self.paths() and also is None:
            return
        with output_group() as stack:
            if also is not None:
                also(stack)
            if self.report is not None:
                write_json(
                    report, stack.enter_context(atomic_writer(self.report, inputs=self.inputs))
                )
            for path, fmt in ((self.html, OutputFormat.html), (self.sarif, OutputFormat.sarif)):
                if path is not None:
                    fh = stack.enter_context(atomic_writer(path, inputs=self.inputs, mode="w"))
                    fh.write(render(report, fmt, baseline=sarif_baseline))


def require_scored(
    report: Report,
    hint: str = "lower -n or check --field",
    paths: Sequence[str | os.PathLike[str]] | None = None,
) -> None:
    """NothingScoredError when no example could be scored (every one shorter than n, say, or
    no score at all in the files a report combines): nothing was checked, so no verdict.
    `paths`: the inputs to name (default: the report's eval files)."""
    if len(report.examples) and not report.scorable_mask().any():
        n = report.config.get("n")
        why = f"all {len(report.examples)} shorter than n={n}" if n else "no method scored any"
        if "boilerplate" in report.config:
            why += ", or every n-gram ignored as boilerplate"
        raise NothingScoredError(
            f"{name_paths(report.eval_paths() if paths is None else paths)}no eval example "
            f"could be scored ({why}): nothing "
            f"was checked; {hint}"
        )


def print_report(report: Report, fmt: OutputFormat, limit: int) -> None:
    """The report on stdout in `fmt` (the table coloured on a terminal); `limit`: flagged
    examples listed in full (0: all)."""
    if fmt is OutputFormat.json:
        # NOTE: piece by piece: the JSON of a large report is never whole in memory.
        for piece in iter_json(report):
            sys.stdout.write(piece.decode())
        return
    if fmt is OutputFormat.table:
        text = render_table(report, flagged_rows=None if limit == 0 else limit)
        write_table(text, report.contaminated)
        return
    text = render(report, fmt, top=limit or len(report.examples))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def write_table(text: str, contaminated: bool) -> None:
    """A rendered table on stdout: as it is into a pipe or file, coloured on a terminal (the
    flags and the summary line)."""
    if not sys.stdout.isatty():
        sys.stdout.write(text)
        return
    out = Console(highlight=False, soft_wrap=True)
    body, _, summary = text.rstrip("\n").rpartition("\n")
    if body:
        shown = Text(body)
        shown.highlight_words(["FLAGGED"], style="bold red")
        out.print(shown)
    out.print(Text(summary, style="bold red" if contaminated else "bold green"))
