"""How `contam scan` scales with its worker count: ``--jobs 1`` against ``--jobs N``, alternating.

    python scripts/bench_jobs.py DATA [--jobs 2] [--runs 3]

DATA is a data directory of ``scripts/bench_scan.py`` (its ``eval.jsonl`` and ``corpus/``). Each
round runs ``contam scan`` (the console command's module, ``python -m contam_cli``) with
``--jobs 1`` and ``--jobs N``, once with the corpus hashed (the default) and once with
``--no-corpus-hash``, in fresh processes, after one warm-up run (numba's cache, the page cache).
Wall time is the parent's clock; CPU time is user + sys of the command and every process it
waited for (its workers, the hasher), from ``wait4``. Prints per setting the median and range
of both, and the ratio of the wall medians (the speed-up).

The hashed and unhashed rows differ in what the one-worker run gets for free: ``--jobs 1`` hashes
in a thread on a core its scan leaves idle, while ``--jobs N`` on N cores shares them with the
hashing. The last line gives the bound that puts on the hashed speed-up where N is every core:
N * S / (S + H), S the one-worker scan's CPU time and H what hashing adds to it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench_tools import measure  # NOTE: scripts/ is on the path as the script runs

SETTINGS = (("hashed", ()), ("--no-corpus-hash", ("--no-corpus-hash",)))


def one(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `command`."""
    run = measure(command)
    if run.returncode not in (0, 1):
        sys.exit(f"bench_jobs: contam exited {run.returncode}: {run.tail()}")
    return run.wall, run.cpu


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a bench_scan.py data directory")
    parser.add_argument("--jobs", type=int, default=2, help="the worker count to compare (2)")
    parser.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args(argv)
    if args.jobs < 2 or args.runs < 1:
        parser.error("--jobs must be at least 2 and --runs at least 1")
    eval_path, corpus = args.data / "eval.jsonl", args.data / "corpus"
    if not eval_path.is_file() or not corpus.is_dir():
        parser.error(f"{args.data}: no eval.jsonl and corpus/ (make one with bench_scan.py)")
    times: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as tmp:
        base = [sys.executable, "-m", "contam_cli", "scan", str(eval_path), "--corpus", str(corpus)]
        base += ["--report", str(Path(tmp) / "report.json"), "--no-fail"]
        one([*base, "--jobs", "1"])  # NOTE: warm-up
        for _ in range(args.runs):
            for label, extra in SETTINGS:
                for jobs in (1, args.jobs):
                    run = one([*base, "--jobs", str(jobs), *extra])
                    times.setdefault((label, jobs), []).append(run)
    size = sum(f.stat().st_size for f in corpus.rglob("*") if f.is_file()) / 1e6
    python = sys.version.split()[0]
    print(f"`contam scan --jobs 1` against `--jobs {args.jobs}`: {size:,.0f} MB of corpus, "
          f"{args.runs} alternating rounds, {os.cpu_count()} CPUs, Python {python}\n")  # fmt: skip
    print(f"| setting | `-j 1` wall s | `-j {args.jobs}` wall s | speed-up | `-j 1` CPU s | "
          f"`-j {args.jobs}` CPU s |")  # fmt: skip
    print("|---|--:|--:|--:|--:|--:|")
    one_cpu: dict[str, float] = {}  # the one-worker run's median CPU time, per setting
    for label, _ in SETTINGS:
        walls = [[w for w, _ in times[(label, j)]] for j in (1, args.jobs)]
        cpus = [[c for _, c in times[(label, j)]] for j in (1, args.jobs)]
        one_cpu[label] = statistics.median(cpus[0])
        speedup = statistics.median(walls[0]) / statistics.median(walls[1])
        print(f"| {label} | {_spread(walls[0])} | {_spread(walls[1])} | {speedup:.2f}× "
              f"| {_spread(cpus[0])} | {_spread(cpus[1])} |")  # fmt: skip
    scan = one_cpu["--no-corpus-hash"]
    hashing = one_cpu["hashed"] - scan
    if args.jobs == os.cpu_count() and hashing > 0:
        bound = args.jobs * scan / (scan + hashing)
        print(f"\nHashing adds {hashing:.2f} CPU-s to the one-worker scan's {scan:.2f}: on "
              f"{args.jobs} cores the hashed speed-up is at most {bound:.2f}×.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
