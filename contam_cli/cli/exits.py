"""Exit codes and the one-line messages behind them, for every way a command can end.

0 clean, 1 contamination found, 2 usage error, bad input or any failure (a crash is never 0 or
1), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM). Every failure is one line on stderr,
``contam: error: ...`` naming the file (and line) or the option; ``--debug`` adds the traceback.
A closed stdout (``contam scan ... --json | head``) ends quietly with the verdict's exit code.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
import typer.core
from rich.console import Console
from typer.core import TyperGroup

from contam_cli.errors import ContamError, Terminated
from contam_cli.io.remote import mask

__all__ = [
    "EXIT_CLEAN",
    "EXIT_ERROR",
    "EXIT_FOUND",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "ContamGroup",
    "err_console",
    "handle_errors",
    "install_signal_handlers",
    "say",
    "stdout_guard",
]

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143

# NOTE: emoji=False: Rich replaces ``:name:`` codes even with markup off, so a path such as
# ``a:warning:b.jsonl`` read ``a⚠b.jsonl`` in an error line.
err_console = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


_SAID = [False]
"""Whether a command already explained its end on stderr (so the group does not repeat it)."""


def _say(message: str) -> None:
    _SAID[0] = True
    say(message)


def say(line: str) -> None:
    """`line` on stderr as one line, as given: no markup or emoji codes read, newlines and tabs
    as spaces, other control characters escaped (an ESC in a path or an id must not reach the
    terminal)."""
    line = line.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    if not line.isprintable():
        line = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in line)
    err_console.print(line, markup=False)


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


#: Whether this process is the command line itself (:func:`contam_cli.cli.main`): only then are
#: late signals ignored once the exit code is decided. A command run inside another program (a
#: test's CliRunner, a notebook) leaves that program's Ctrl-C and SIGTERM as they were.
AS_PROCESS = [False]


def ignore_signals() -> None:
    """Once the exit code is decided, a late Ctrl-C or SIGTERM changes nothing: ignore them, so
    that one arriving during the interpreter's shutdown cannot end it with a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def install_signal_handlers() -> None:
    """SIGTERM becomes :class:`Terminated` (so cleanups run); SIGINT stays KeyboardInterrupt."""
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _raise_terminated)


def _os_error(e: OSError) -> str:
    where = f"{e.filename}: " if e.filename else ""
    if e.errno == errno.ENOSPC:
        return f"{where}no space left on device; nothing was written"
    return f"{where}{e.strerror or e}"


@contextmanager
def handle_errors(debug: bool) -> Iterator[None]:
    """Turn every failure into one line on stderr and its exit code (2; 130; 143)."""
    try:
        yield
    except typer.Exit:
        raise
    except (KeyboardInterrupt, Terminated) as e:
        _end_by(e)
    except Exception as e:  # noqa: BLE001 - a crash must still exit 2, never 0 or 1
        if debug:
            traceback.print_exc()
        interrupt = _interrupt_behind(e)
        if interrupt is not None:
            _end_by(interrupt)
        _say(_failure_line(e))
        raise typer.Exit(EXIT_ERROR) from None


def _end_by(interrupt: BaseException) -> None:
    """Ctrl-C is exit 130, SIGTERM 143, each with its one line."""
    if isinstance(interrupt, Terminated):
        _say("contam: terminated; no output was written")
        raise typer.Exit(EXIT_TERMINATED) from None
    _say("contam: interrupted; no output was written")
    raise typer.Exit(EXIT_INTERRUPTED) from None


def _interrupt_behind(e: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or :class:`Terminated` that `e` was raised from or while handling
    (anywhere along its ``__cause__`` and ``__context__`` links), if any.

    NOTE: a Ctrl-C landing where compiled code calls back into Python (numba's dispatcher
    unpickling a constant, ``_numba_unpickle``) comes out as a SystemError "returned a result
    with an exception set" whose context is the KeyboardInterrupt: that is the interrupt, not a
    crash. A failure while cleaning up after an interrupt is the interrupt too.
    """
    seen: set[int] = set()
    todo: list[BaseException] = [e]
    while todo:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, (KeyboardInterrupt, Terminated)):
            return cur
        todo.extend(x for x in (cur.__cause__, cur.__context__) if x is not None)
    return None


def _failure_line(e: Exception) -> str:
    """The one line of a failure, credentials masked (a backend's error may quote an endpoint
    URL with a password or a presigned query, or a secret from the environment)."""
    if isinstance(e, ContamError):
        return mask(f"contam: error: {e}")
    if isinstance(e, OSError):
        return mask(f"contam: error: {_os_error(e)}")
    return mask(f"contam: internal error: {type(e).__name__}: {e} (rerun with --debug)")


@contextmanager
def stdout_guard(verdict: int) -> Iterator[None]:
    """Writing the result to stdout: a reader that went away (``| head``) ends the command
    quietly with `verdict`, the exit code the result already decided; a full device is an
    error."""
    try:
        yield
        sys.stdout.flush()
    except OSError as e:
        if not _closed_pipe(e):
            _say(f"contam: error: cannot write to stdout: {e.strerror or e}")
            raise typer.Exit(EXIT_ERROR) from None
        # NOTE: point stdout at /dev/null so that the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(verdict) from None


def _closed_pipe(e: OSError) -> bool:
    """The reader of stdout went away: EPIPE, or on Windows EINVAL (CPython issue 79935)."""
    return isinstance(e, BrokenPipeError) or (sys.platform == "win32" and e.errno == errno.EINVAL)


def _click() -> Any:
    """The click Typer runs on: its own copy (Typer 0.24 and later) or the click package."""
    vendored = getattr(typer.core, "_click", None)
    if vendored is not None:
        return vendored
    import click

    return click


_CLICK = _click()
_CLICK_ERROR: type[Exception] = _CLICK.ClickException
_ABORT: type[BaseException] = typer.Abort
# NOTE: click 8.2+ raises this for a bare `contam index`; older releases print the help and exit.
_NO_ARGS_IS_HELP: Any = getattr(_CLICK.exceptions, "NoArgsIsHelpError", ())


class ContamGroup(TyperGroup):
    """The root command group: usage errors become one ``contam: error:`` line (exit 2), not a
    boxed message; Ctrl-C while parsing is exit 130."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            rv = super().main(
                args=args,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                **extra,
            )
        except _NO_ARGS_IS_HELP as e:
            sys.stdout.write((e.ctx.get_help() if e.ctx else str(e)) + "\n")
            rv = EXIT_ERROR
        except _CLICK_ERROR as e:
            rv = _usage_error(e)
        except _ABORT:
            _say("contam: interrupted")
            rv = EXIT_INTERRUPTED
        code = rv if isinstance(rv, int) else EXIT_CLEAN
        if code == EXIT_INTERRUPTED and not _SAID[0]:
            _say("contam: interrupted")  # NOTE: Typer turns a Ctrl-C while parsing into 130
        if standalone_mode:
            if AS_PROCESS[0]:
                ignore_signals()
            sys.exit(code)
        return code


def _usage_error(e: Any) -> int:
    ctx = getattr(e, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    message = " ".join(e.format_message().split())
    _say(f"contam: error: {message}{hint}")
    return e.exit_code if e.exit_code not in (0, 1) else EXIT_ERROR
