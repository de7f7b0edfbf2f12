"""The `contam` command line: thin commands over the library, one module per command.

Each command's module is imported only when that command runs (or when ``contam --help`` lists
them all): a scan does not import the page server, the probe providers or the bench, nor pay
for Typer reading all their options.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
import typer.main

from contam_cli._version import __version__
from contam_cli.cli.exits import AS_PROCESS, ContamGroup, install_signal_handlers

# NOTE: the order `contam --help` lists them in.
COMMANDS: dict[str, tuple[str, str]] = {
    "scan": ("contam_cli.cli.scan", "scan_command"),
    "clean": ("contam_cli.cli.clean", "clean_command"),
    "calibrate": ("contam_cli.cli.calibrate", "calibrate_command"),
    "impact": ("contam_cli.cli.impact", "impact_command"),
    "report": ("contam_cli.cli.report", "report_command"),
    "bench": ("contam_cli.cli.bench", "bench_command"),
    "app": ("contam_cli.cli.app_page", "app_command"),
    "index": ("contam_cli.cli.index", "index_app"),
    "probe": ("contam_cli.cli.probe", "probe_app"),
}
"""Every command: its name, and the module and attribute of its function (or Typer group)."""

_SETTINGS: dict[str, Any] = {
    "rich_markup_mode": None,
    "pretty_exceptions_show_locals": False,
    "add_completion": False,
}


@functools.cache
def _command(name: str) -> Any:
    """The click command `name`, built as eager registration on the root would build it."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    holder = typer.Typer(**_SETTINGS)
    holder.callback()(lambda: None)  # NOTE: a group even for one command, as the root is
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return typer.main.get_group(holder).commands[name]


class _Commands(MutableMapping[str, Any]):
    """The root group's commands: every name at once, each command built on first use."""

    def __init__(self, added: MutableMapping[str, Any]) -> None:
        self._added = dict(added)

    def __getitem__(self, name: str) -> Any:
        if name in self._added:
            return self._added[name]
        if name in COMMANDS:
            return _command(name)
        raise KeyError(name)

    def __setitem__(self, name: str, command: Any) -> None:
        self._added[name] = command

    def __delitem__(self, name: str) -> None:
        del self._added[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (n for n in self._added if n not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(n not in COMMANDS for n in self._added)


class _Root(ContamGroup):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands(self.commands)


app = typer.Typer(
    name="contam",
    help="Find eval benchmark examples that leaked into training data, with evidence.",
    no_args_is_help=True,
    cls=_Root,
    **_SETTINGS,
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


def main() -> None:
    """Console entry point (see also :mod:`contam_cli.entry`, which installs the signal
    handlers before anything heavy is imported)."""
    from contam_cli.cli.common import tune_allocator

    install_signal_handlers()
    tune_allocator()
    AS_PROCESS[0] = True
    try:
        app()
    finally:
        AS_PROCESS[0] = False
