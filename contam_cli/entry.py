"""The console entry point: signal handlers first, then the command line is imported.

Importing the command line (Typer, Rich, numpy) takes a moment; a Ctrl-C during it would
otherwise end in a traceback. Exit codes: see :mod:`contam_cli.cli.exits`.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

__all__ = ["main"]


def _terminated(signum: int, frame: Any) -> None:
    sys.stderr.write("contam: terminated\n")
    sys.exit(143)


def main() -> None:
    """Run `contam`."""
    previous = signal.signal(signal.SIGTERM, _terminated) if hasattr(signal, "SIGTERM") else None
    try:
        from contam_cli.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("contam: interrupted\n")
        sys.exit(130)
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
    cli_main()
