"""The console entry point: signal handlers first, then the command line is imported.

Importing the command line (Typer, Rich, numpy) takes a moment, and a signal can arrive during
it, or between the command's own handling and the end of the process: whenever it comes, it ends
the process with one line and its exit code (130 Ctrl-C, 143 SIGTERM), never a traceback. The
commands themselves clean up what they were writing (see :mod:`contam_cli.cli.exits`).

Once the exit code is known the process ends at once (:func:`leave`): the interpreter's own
shutdown, tearing down every module and object and the compiled kernels' LLVM, took 0.34-0.50 s
of a 1 GB scan (``scripts/bench_exit.py``), serial time that no worker count divides.
Everything a normal exit does that anyone could observe still happens first.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
import threading
from typing import Any

from contam_cli.errors import Terminated

__all__ = ["BLAS_THREADS", "GC_THRESHOLDS", "leave", "main", "run"]

GC_THRESHOLDS = (100_000, 50, 100)
"""The cyclic garbage collector's thresholds while a command runs, where Python's are (2000, 10,
10) from 3.13 and (700, 10, 10) before: a scan allocates its objects in long-lived heaps (numba's
types and registries, the eval index's columns, the report's examples), which the collector kept
walking. Collections took 0.31-0.39 s of a 1 GB scan with 100,000 eval examples and 0.12-0.13 s
with 1,000, against 0.06-0.09 and 0.05-0.06 s with these (``scripts/timeline_scan.py``, which
counts them, two runs each way); a young generation of 100,000 objects holds a few MB of garbage
at most before it is collected."""

_FLUSH_FAILED = 120
"""The exit status CPython gives when flushing stdout fails at shutdown."""


_STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated()


BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}
"""Set for the process (where the environment does not set them) before numpy is imported:
contam divides work among processes, not BLAS threads, and OpenBLAS's idle threads spun on the
other cores, 0.12-0.27 CPU-s of a 1 GB scan (``/usr/bin/time`` on ``contam scan --jobs 1``, three
interleaved pairs of runs)."""


def main() -> None:
    """Run `contam` and end the process with its exit code (late signals stay ignored)."""
    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)
    leave(run(restore_signals=False))


def run(
    gc_thresholds: tuple[int, int, int] | None = GC_THRESHOLDS, *, restore_signals: bool = True
) -> int:
    """Run `contam` in this process; its exit code (the process goes on). `gc_thresholds`: the
    collector's while it runs (None: leave them as they are). `restore_signals`: put this
    process's Ctrl-C and SIGTERM handlers back afterwards (the command sets its own, and
    ignores both once its exit code is decided)."""
    before = gc.get_threshold()
    handlers = {sig: signal.getsignal(sig) for sig in _STOPPING}
    if gc_thresholds is not None:
        gc.set_threshold(*gc_thresholds)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminated)
    _utf8_streams()
    try:
        from contam_cli.cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        return _end("contam: interrupted\n", 130)
    except Terminated:
        return _end("contam: terminated\n", 143)
    except SystemExit as e:
        return _code(e.code)
    finally:
        gc.set_threshold(*before)
        for sig, handler in handlers.items():
            if restore_signals and handler is not None:
                signal.signal(sig, handler)
    return 0


def leave(code: int) -> None:
    """End the process with `code` as a normal exit would, less the interpreter's teardown.

    What a normal exit does that can be seen outside the process still happens, in the same
    order: threads that are not daemons are joined (and ``concurrent.futures`` pools shut
    down), the ``atexit`` handlers run (``multiprocessing`` joining its children, Ray's
    shutdown, ``weakref.finalize`` cleanups, coverage), and stdout and stderr are flushed. A
    stdout that cannot be flushed makes a 0 into 120 (CPython's status for it), never a clean
    exit; another code, a verdict already decided, stays. Where this interpreter lacks the
    hook that joins threads, the normal exit is taken.
    """
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is None:
        sys.exit(code)
    shutdown()
    atexit._run_exitfuncs()
    if not _flushed(sys.stdout) and code == 0:
        code = _FLUSH_FAILED
    _flushed(sys.stderr)
    os._exit(code)


def _flushed(stream: Any) -> bool:
    """Flush `stream`; whether that worked (a closed or broken stream did not)."""
    try:
        if stream is not None:
            stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _code(code: object) -> int:
    """The exit status `sys.exit(code)` gives: None is 0, an int itself, anything else is
    printed to stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


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


def _end(message: str, code: int) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write(message)
    return code
