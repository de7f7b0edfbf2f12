"""handle_errors: an interrupt that reaches it wrapped in another exception (numba's dispatcher
turns a Ctrl-C inside its callbacks into a SystemError) is still the interrupt: 130 or 143."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import typer

from contam_cli.cli.exits import handle_errors
from contam_cli.errors import ContamError, Terminated


def _numba_like(interrupt: BaseException) -> None:
    """What numba's dispatcher does when its Python callback raises: a SystemError raised
    while the interrupt is being handled (its __context__), or from it."""
    try:
        raise interrupt
    except BaseException as e:
        raise SystemError(
            "CPUDispatcher(<function f>) returned a result with an exception set"
        ) from e


def _exit_of(
    body: Callable[[], None], capsys: pytest.CaptureFixture[str], debug: bool = False
) -> tuple[int, str]:
    with pytest.raises(typer.Exit) as info, handle_errors(debug):
        body()
    return info.value.exit_code, capsys.readouterr().err


@pytest.mark.parametrize(
    "interrupt, code, line",
    [
        (KeyboardInterrupt(), 130, "contam: interrupted; no output was written"),
        (Terminated(), 143, "contam: terminated; no output was written"),
    ],
)
@pytest.mark.parametrize("debug", [False, True])
def test_an_interrupt_wrapped_in_a_system_error_is_the_interrupt(
    capsys: pytest.CaptureFixture[str], interrupt: BaseException, code: int, line: str, debug: bool
) -> None:
    got, err = _exit_of(lambda: _numba_like(interrupt), capsys, debug)
    assert got == code
    assert err.strip().splitlines()[-1] == line
    if not debug:
        assert err.strip() == line


def test_an_interrupt_further_down_the_context_chain_counts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def body() -> None:
        try:
            _numba_like(KeyboardInterrupt())
        except SystemError:
            raise OSError("cleanup failed") from None  # __cause__ None, __context__ kept

    got, err = _exit_of(body, capsys)
    assert (got, err.strip()) == (130, "contam: interrupted; no output was written")


@pytest.mark.parametrize("interrupt, code", [(KeyboardInterrupt(), 130), (Terminated(), 143)])
def test_a_bare_interrupt_keeps_its_code(
    capsys: pytest.CaptureFixture[str], interrupt: BaseException, code: int
) -> None:
    def body() -> None:
        raise interrupt

    got, err = _exit_of(body, capsys)
    assert got == code and len(err.strip().splitlines()) == 1


def test_failures_without_an_interrupt_behind_them_stay_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def crash() -> None:
        try:
            raise ValueError("inner")
        except ValueError as e:
            raise SystemError("outer") from e

    def bad_input() -> None:
        raise ContamError("x.json: bad")

    assert _exit_of(crash, capsys) == (
        2, "contam: internal error: SystemError: outer (rerun with --debug)\n"
    )  # fmt: skip
    assert _exit_of(bad_input, capsys) == (2, "contam: error: x.json: bad\n")


def test_an_error_line_names_its_file_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    # Rich turns ``:name:`` into an emoji even with markup off: the path must stay as typed.
    def bad_input() -> None:
        raise ContamError("a:warning:b :smile: [bold]x[/].jsonl: bad")

    def odd_path() -> None:
        raise ContamError("a\x1b[2Jb\nc.jsonl: bad")

    assert _exit_of(bad_input, capsys) == (
        2, "contam: error: a:warning:b :smile: [bold]x[/].jsonl: bad\n"
    )  # fmt: skip
    # NOTE: one line, and an ESC in a path does not reach the terminal.
    assert _exit_of(odd_path, capsys) == (2, "contam: error: a\\x1b[2Jb c.jsonl: bad\n")
