"""SIGTERM or Ctrl-C during a `--engine ray` run with a local Ray ends it as the local engine
does: exit 143 or 130, the one line, no output, and none of the Ray processes the run started
left running (ray.init had put its own SIGTERM handler in place of contam's: exit 1 or 15, no
line, the dashboard and runtime-env agents left under PID 1). Slow (a real local Ray)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

pytest.importorskip("ray", reason="the Ray engine needs its extra: pip install 'contam-cli[ray]'")

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "fixtures" / "contamination_detector" / "examples" / "benchmark.jsonl"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 files of 21 MB, a task each taking seconds: a signal sent once the first task runs
    lands while every task is mid-way."""
    corpus = tmp_path_factory.mktemp("ray-signals") / "corpus"
    corpus.mkdir()
    line = orjson.dumps({"text": "the quick brown fox jumps over the lazy dog " * 40}) + b"\n"
    for k in range(4):
        (corpus / f"c{k}.jsonl").write_bytes(line * 12000)
    return corpus


@pytest.fixture
def ray_tmp() -> Iterator[Path]:
    """Ray's temp directory for this run alone, short (Ray's socket paths must fit in 107
    bytes): its processes name it on their command lines."""
    path = Path(tempfile.mkdtemp(prefix="contam-rs-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _processes() -> dict[int, tuple[str, int, str]]:
    """Every process: pid -> (state, parent pid, command line)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
        found[int(entry)] = (
            state,
            int(parent),
            cmdline.replace(b"\0", b" ").decode(errors="replace"),
        )
    return found


def _descendants(root: int, processes: dict[int, tuple[str, int, str]]) -> set[int]:
    tree = {root}
    while True:
        more = {pid for pid, (_, parent, _) in processes.items() if parent in tree} - tree
        if not more:
            return tree - {root}
        tree |= more


@pytest.mark.parametrize(
    "command, sig, code, line",
    [
        ("scan", signal.SIGTERM, 143, "contam: terminated"),
        ("scan", signal.SIGINT, 130, "contam: interrupted"),
        ("clean", signal.SIGTERM, 143, "contam: terminated"),
    ],
)
def test_a_signal_during_a_local_ray_run_ends_it_and_its_ray(
    tmp_path: Path,
    corpus: Path,
    ray_tmp: Path,
    command: str,
    sig: signal.Signals,
    code: int,
    line: str,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    args = (
        ["--report", str(out / "r.json")]
        if command == "scan"
        else ["--target", "corpus", "-o", str(out / "clean")]
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "contam_cli", command, str(BENCH), "--corpus", str(corpus),
         "--engine", "ray", "--ray-cpus", "2", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), RAY_TMPDIR=str(ray_tmp)),
    )  # fmt: skip
    started: set[int] = set()
    try:
        err = _signal_once_running(proc, sig, started)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(60)
        left = _left_running(started, ray_tmp)
    assert proc.returncode == code, err
    assert len(err.splitlines()) == 1 and err.startswith(line), err
    assert os.listdir(out) == [], "a partial output was left behind"
    assert not left, f"Ray processes left running: {left}"


def _signal_once_running(proc: subprocess.Popen[str], sig: int, started: set[int]) -> str:
    """Send `sig` once a worker runs one of the run's tasks (its process title says so); the
    run's stderr. Every process met below the run on the way goes into `started` (a worker
    renames itself, and the agents are orphaned by a run that ends badly)."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        processes = _processes()
        below = _descendants(proc.pid, processes)
        started |= below
        if any("ray::_run_task" in processes[pid][2] for pid in below if pid in processes):
            break
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended before the signal: {proc.communicate()}"
    assert time.monotonic() < deadline, "no Ray task started in 240 s"
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # NOTE: Ctrl-C: the terminal signals the whole group
    else:
        proc.send_signal(sig)
    return proc.communicate(timeout=120)[1]


def _left_running(started: set[int], ray_tmp: Path) -> dict[int, str]:
    """The run's Ray processes still running after 30 s (each then killed, not to outlive the
    test): those met below it, and any naming its temp directory.

    NOTE: Ray's processes end a moment after the shut-down asks them to; a zombie has ended.
    """
    deadline = time.monotonic() + 30
    while True:
        left = {
            pid: cmd
            for pid, (state, _, cmd) in _processes().items()
            if state != "Z" and (pid in started or str(ray_tmp) in cmd)
        }
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left
