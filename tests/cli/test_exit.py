"""The process ends at once when the command is done (entry.leave), and still does everything a
normal exit does that can be seen: threads joined, thread pools finished, atexit handlers run,
buffered output flushed, the exit code kept."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from contam_cli import entry

_LEAVE = """
import atexit, concurrent.futures, sys, threading, time
from pathlib import Path
from contam_cli.entry import leave
out = Path(sys.argv[1])
atexit.register(lambda: print("atexit ran"))
def late(name):
    time.sleep(0.3)
    (out / name).write_text("done")
threading.Thread(target=late, args=("thread",)).start()
pool = concurrent.futures.ThreadPoolExecutor(1)
pool.submit(late, "pool")
sys.stdout.write("buffered, no newline")
leave(int(sys.argv[2]))
print("never")
"""


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.parametrize("code", [0, 1, 3])
def test_leave_joins_threads_runs_atexit_flushes_and_keeps_the_code(
    tmp_path: Path, code: int
) -> None:
    proc = _python(_LEAVE, str(tmp_path), str(code))
    assert proc.returncode == code, proc.stderr
    assert proc.stdout == "buffered, no newlineatexit ran\n"
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "pool").read_text() == "done"


_BROKEN = """
import io, sys
from contam_cli.entry import leave
class Gone(io.StringIO):
    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")
sys.stdout = Gone()
leave(int(sys.argv[1]))
"""


@pytest.mark.parametrize("code, expected", [(0, 120), (1, 1)])
def test_a_stdout_that_cannot_be_flushed_is_never_a_clean_exit(code: int, expected: int) -> None:
    """120, CPython's status for it, where the code was 0; another code (a verdict) stays."""
    assert _python(_BROKEN, str(code)).returncode == expected


def test_the_exit_code_of_sys_exit_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert entry._code(None) == 0
    assert entry._code(2) == 2
    assert entry._code("contam: gone") == 1
    assert capsys.readouterr().err == "contam: gone\n"


def test_the_console_command_ends_with_the_verdict_and_its_whole_output(tmp_path: Path) -> None:
    bench = ROOT / "fixtures" / "contamination_detector" / "examples" / "benchmark.jsonl"
    corpus = ROOT / "fixtures" / "contamination_detector" / "examples" / "corpus"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "contam_cli", "scan", str(bench), "--corpus", str(corpus)]
    proc = subprocess.run([*cmd, "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.rstrip().endswith("}")  # the whole JSON document, flushed
    assert '"flagged": 2' in proc.stdout


@pytest.mark.parametrize("given", [entry.GC_THRESHOLDS, None])
def test_the_collector_thresholds_hold_while_the_command_runs_and_are_restored(
    monkeypatch: pytest.MonkeyPatch, given: tuple[int, int, int] | None
) -> None:
    import contam_cli.cli

    seen = []

    def command() -> None:
        seen.append(gc.get_threshold())
        raise SystemExit(3)

    monkeypatch.setattr(contam_cli.cli, "main", command)
    before = gc.get_threshold()
    handler = signal.getsignal(signal.SIGTERM)
    try:
        assert entry.run(given) == 3
    finally:
        signal.signal(signal.SIGTERM, handler)  # NOTE: run() installs the command's handler
    assert seen == [given or before]
    assert gc.get_threshold() == before


_BLAS = """
import os, sys
from contam_cli import entry
entry.run = lambda **kw: print(os.environ.get("OPENBLAS_NUM_THREADS"), "numpy" in sys.modules) or 0
entry.main()
"""


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("3", "3")])
def test_main_keeps_blas_to_one_thread_unless_the_environment_says(
    given: str | None, seen: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = str(ROOT)
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    proc = subprocess.run(
        [sys.executable, "-c", _BLAS], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    # NOTE: set before numpy is first imported, which is when OpenBLAS reads it
    assert proc.stdout.split() == [seen, "False"]


_SCAN = """
import sys
from contam_cli import entry
sys.argv = ["contam", "scan", sys.argv[1], "--corpus", sys.argv[2], "--no-fail"]
code = entry.run()
print(code, sorted(m for m in sys.modules if m.split(".")[0] == "pydantic"))
"""


def test_a_scan_does_not_import_pydantic() -> None:
    # NOTE: what typer 0.29 imports to build each parameter's converter, 0.08 s of each start
    # (pyproject.toml keeps typer below it)
    examples = ROOT / "fixtures" / "contamination_detector" / "examples"
    proc = _python(_SCAN, str(examples / "benchmark.jsonl"), str(examples / "corpus"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 []"
