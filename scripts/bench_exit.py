"""How long a `contam` process takes to end once its command is done: the interpreter's normal
shutdown against :func:`contam_cli.entry.leave`, alternating in fresh processes.

    python scripts/bench_exit.py EVAL CORPUS [--runs 5] [-- contam scan options, e.g. --jobs 2]

Each run is ``contam scan EVAL --corpus CORPUS --report <temp> --no-fail [options]`` in a child
process, through :func:`contam_cli.entry.run`; the child notes the time when the command has
returned and then ends either by ``sys.exit(code)`` (the interpreter's shutdown) or by
``entry.leave(code)`` (what the console command does). The ending is the parent's clock when
the child is gone, less that note; the wall is the child's whole life. Prints the median and
the range of both, per way of ending.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import sys, time
from contam_cli import entry
how, sys.argv = sys.argv[1], ["contam", *sys.argv[2:]]
code = entry.run()
sys.stderr.write(f"\\nbench_exit: done at {time.time():.6f}\\n")
sys.stderr.flush()
sys.exit(code) if how == "normal" else entry.leave(code)
"""

MODES = ("normal", "leave")


def one(how: str, argv: list[str]) -> tuple[float, float]:
    """(seconds from the command's end to the process's, the process's whole wall)."""
    start = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, how, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    gone = time.time()
    if proc.returncode not in (0, 1):
        sys.exit(f"bench_exit: contam exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    done = float(proc.stderr.rsplit("bench_exit: done at ", 1)[1].split()[0])
    return gone - done, gone - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("eval")
    parser.add_argument("corpus")
    parser.add_argument("--runs", type=int, default=5, help="runs of each way (default 5)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.rest = argv[cut + 1 :]
    results: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-exit-") as tmp:
        report = str(Path(tmp) / "report.json")
        command = ["scan", args.eval, "--corpus", args.corpus, "--report", report, "--no-fail"]
        command += args.rest
        one("normal", command)  # NOTE: warm-up: numba's cache and the page cache
        for _ in range(args.runs):
            for how in MODES:
                results[how].append(one(how, command))
    print(f"`contam {' '.join(command[:1] + args.rest)}`, {args.runs} alternating runs each, "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")  # fmt: skip
    print("| ending | end of the command to end of process, s | wall, s |")
    print("|---|--:|--:|")
    for how in MODES:
        ends = [e for e, _ in results[how]]
        walls = [w for _, w in results[how]]
        print(
            f"| `{'sys.exit' if how == 'normal' else 'entry.leave'}` "
            f"| {statistics.median(ends):.3f} ({min(ends):.3f}-{max(ends):.3f}) "
            f"| {statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
