"""The `contam` command line: thin commands over the library, one module per command."""

from __future__ import annotations

import typer

from contam_cli._version import __version__
from contam_cli.cli.app import app_command
from contam_cli.cli.bench import bench_command
from contam_cli.cli.calibrate import calibrate_command
from contam_cli.cli.clean import clean_command
from contam_cli.cli.common import tune_allocator
from contam_cli.cli.exits import ContamGroup, install_signal_handlers
from contam_cli.cli.impact import impact_command
from contam_cli.cli.index import index_app
from contam_cli.cli.probe import probe_app
from contam_cli.cli.report import report_command
from contam_cli.cli.scan import scan_command

app = typer.Typer(
    name="contam",
    help="Find eval benchmark examples that leaked into training data, with evidence.",
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,
    no_args_is_help=True,
    add_completion=False,
    cls=ContamGroup,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contam {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """contam: benchmark contamination checks for LLM training data."""


app.command("scan")(scan_command)
app.add_typer(index_app, name="index")
app.add_typer(probe_app, name="probe")
app.command("clean")(clean_command)
app.command("calibrate")(calibrate_command)
app.command("impact")(impact_command)
app.command("report")(report_command)
app.command("bench")(bench_command)
app.command("app")(app_command)


def main() -> None:
    """Console entry point (see also :mod:`contam_cli.entry`, which installs the signal
    handlers before anything heavy is imported)."""
    install_signal_handlers()
    tune_allocator()
    app()
