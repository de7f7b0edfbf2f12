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

__all__ = ["main", "no_huge_pages"]


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def main() -> None:
    """Run `contam`."""
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminated)
    _utf8_streams()
    no_huge_pages()
    try:
        from contam_cli.cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        _end("contam: interrupted\n", 130)
    except Terminated:
        _end("contam: terminated\n", 143)


def no_huge_pages() -> None:
    """Ask numpy for no transparent huge pages, unless ``NUMPY_MADVISE_HUGEPAGE`` is set: it is
    read when numpy is imported, so this runs first (and workers inherit it). The command line
    only: a library must not change process-wide settings.

    NOTE: numpy asks the kernel for huge pages for every array of 4 MB or more. Where the kernel
    compacts memory to find them (``defrag`` "madvise", a common setting), and memory is mostly
    page cache (as it is once a corpus has been read), the first write to each page stalls. The
    eval side of a 1,000,000-example scan took about 3.7 CPU-s more with them, all of it in the
    kernel, and peaked 150 MB higher: ``NUMPY_MADVISE_HUGEPAGE=0|1 python
    scripts/profile_eval_side.py EVAL CORPUS``, alternating (README, Performance).
    """
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


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
