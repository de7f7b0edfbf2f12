"""Ctrl-C and SIGTERM at any moment: exit 130 or 143, one line on stderr, no traceback, nothing
left behind. Slow (real processes); marked so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from conftest import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """87 MB, so that an uninterrupted scan takes about 2 s on this project's 2-core machines
    and the delays below land at its start, in its pass and at its end; a smaller corpus ended
    before the later signals."""
    corpus = tmp_path_factory.mktemp("signals") / "corpus"
    corpus.mkdir()
    line = orjson.dumps({"text": "the quick brown fox jumps over the lazy dog " * 40}) + b"\n"
    for k in range(4):
        (corpus / f"c{k}.jsonl").write_bytes(line * 12000)
    return corpus


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
# NOTE: from 0.5 s on: before that the interpreter may still be starting (on a loaded machine),
# and a signal there meets Python's own handling, before any of contam's code runs.
@pytest.mark.parametrize("delay", [0.5, 0.8, 1.2, 1.6])
# NOTE: spawned workers (macOS, and Windows but for the signals) start while the scan runs: a
# signal may meet one half-started; "" is this platform's own rule.
@pytest.mark.parametrize("start", ["", "spawn"], ids=["default", "spawn"])
def test_a_signal_at_any_moment_ends_cleanly(
    tmp_path: Path, corpus: Path, sig: signal.Signals, code: int, delay: float, start: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    bench = ROOT / "fixtures" / "contamination_detector" / "examples" / "benchmark.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "contam_cli", "scan", str(bench), "--corpus", str(corpus),
         "--report", str(out / "r.json"), "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # NOTE: spawned workers without the kernels (a second's more start-up each, which only
        # lengthens every case): they read this corpus in about 1.8 s, as forked ones with them.
        env=dict(os.environ, PYTHONPATH=str(ROOT), CONTAM_START_METHOD=start,
                 CONTAM_ACCEL="0" if start == "spawn" else "1"),
    )  # fmt: skip
    time.sleep(delay)
    proc.send_signal(sig)
    # NOTE: a worker left running would hold stderr open: communicate() would time out.
    _, err = proc.communicate(timeout=60)
    if proc.returncode in (0, 1):  # it finished before the signal: a whole report
        assert (out / "r.json").exists()
        return
    # NOTE: a process that ends by the signal itself reads as 128 + signal in a shell, the same
    # exit status as the code contam returns.
    assert proc.returncode in (code, -sig), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert os.listdir(out) == [], "a partial output was left behind"
