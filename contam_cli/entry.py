"""The console entry point: signal handlers first, then the command line is imported.

Importing the command line (Typer, Rich, numpy) takes a moment, and a signal can arrive during
it, or between the command's own handling and the end of the process: whenever it comes, it ends
the process with one line and its exit code (130 Ctrl-C, 143 SIGTERM), never a traceback. The
commands themselves clean up what they were writing (see :mod:`contam_cli.cli.exits`).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from contam_cli.errors import Terminated

__all__ = ["main"]


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def main() -> None:
    """Run `contam`."""
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminated)
    _utf8_streams()
    try:
        from contam_cli.cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        _end("contam: interrupted\n", 130)
    except Terminated:
        _end("contam: terminated\n", 143)


def _utf8_streams() -> None:
    """stdout and stderr in UTF-8 with LF line ends on Windows too.

    NOTE: into a pipe or a file Windows gives the locale's code page and CRLF line ends: JSON
    and tables would differ by OS, and eval text outside the code page would fail to print.
    """
    if os.name != "nt":  # NOTE: os.name, not sys.platform: mypy would call the rest unreachable
        return
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors=stream.errors, newline="\n")


def _end(message: str, code: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write(message)
    sys.exit(code)
