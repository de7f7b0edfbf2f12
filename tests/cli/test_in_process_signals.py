"""A command run inside another program (a test's CliRunner, a notebook, ``entry.run``) leaves
that program's Ctrl-C and SIGTERM handling as it was. The command line ignores both once its
exit code is decided (so that a late one cannot end the interpreter's shutdown with a
traceback); done inside a host process, that had left the host deaf to Ctrl-C, and every
process it started afterwards too (they inherit an ignored signal): a Ray scan started by such
a test ran to its end through a Ctrl-C and exited 0."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contam_cli import entry
from contam_cli.cli import app

BENCH = Path(__file__).resolve().parents[2] / "fixtures" / "contamination_detector" / "examples"


@pytest.fixture
def handlers() -> Iterator[dict[int, object]]:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield before
    for sig, handler in before.items():
        signal.signal(sig, handler)  # type: ignore[arg-type]


def _child_sigint() -> str:
    code = "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout


def test_a_command_under_clirunner_leaves_the_host_signals_alone(
    handlers: dict[int, object],
) -> None:
    args = ["scan", str(BENCH / "benchmark.jsonl"), "--corpus", str(BENCH / "corpus")]
    assert CliRunner().invoke(app, args).exit_code == 1
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers
    assert _child_sigint().strip() == "False"


def test_entry_run_puts_the_host_signals_back(
    handlers: dict[int, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        sys, "argv", ["contam", "scan", str(BENCH / "missing.jsonl"), "--corpus", "x"]
    )
    assert entry.run() == 2
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers
    assert _child_sigint().strip() == "False"
