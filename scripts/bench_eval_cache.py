"""Measure `contam scan --eval-cache`: a small corpus against a large eval set, cold and warm.

    python scripts/bench_eval_cache.py [--data DIR] [--shards 1] [--jobs 1] [--cache DIR]

On the data of ``python scripts/bench_scan.py --mb 1000 --n-eval 100000 --skip-ref --jobs 1``
(default ``/tmp/contam-bench-1000mb-n100000-s1234``; generated with that command if missing),
scans the first ``--shards`` corpus shard files three times, each in a child process measured with
``wait4`` (wall, CPU, peak RSS): cold (no cache), building the cache (an empty ``--eval-cache``)
and warm (from the cache). ``wc -w`` on the same files, in the same run, gives the speed floor.
The three reports must be byte-identical (exit 1 if not); the table, the cache entry's size and
the load average are printed as Markdown.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scan import Run, measure  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path(tempfile.gettempdir()) / "contam-bench-1000mb-n100000-s1234"


def _generate(data: Path) -> None:
    cmd = [sys.executable, "-m", "contam_cli.features.bench.generate", "--out", str(data)]
    cmd += ["--mb", "1000", "--n-eval", "100000", "--reuse"]
    subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL)


def _scan(data: Path, shards: list[Path], report: Path, jobs: int, cache: Path | None) -> Run:
    cmd = [sys.executable, "-m", "contam_cli", "scan", str(data / "eval.jsonl")]
    for s in shards:
        cmd += ["--corpus", str(s)]
    cmd += ["--report", str(report), "--no-fail", "--jobs", str(jobs)]
    if cache is not None:
        cmd += ["--eval-cache", str(cache)]
    report.unlink(missing_ok=True)
    run = measure(cmd, cwd=REPO)
    if run.returncode not in (0, 1):
        raise SystemExit(f"bench_eval_cache: scan failed ({run.returncode}): {run.tail()}")
    return run


def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--shards", type=int, default=1, help="corpus shard files to scan (1)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=None, help="cache directory (default: temp)")
    args = ap.parse_args(argv)
    if not (args.data / "meta.json").is_file():
        _generate(args.data)
    shards = sorted((args.data / "corpus").glob("shard_*.jsonl"))[: args.shards]
    work = Path(tempfile.mkdtemp(prefix="contam-bench-eval-cache-"))
    cache = args.cache or work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    load = os.getloadavg()
    try:
        for s in [args.data / "eval.jsonl", *shards]:
            s.read_bytes()  # NOTE: every run reads from the page cache, the first one too
        wc = measure(["wc", "-w", *map(str, shards)])
        reports = [work / f"{k}.json" for k in ("cold", "build", "warm")]
        runs = {
            "cold (no cache)": _scan(args.data, shards, reports[0], args.jobs, None),
            "building the cache": _scan(args.data, shards, reports[1], args.jobs, cache),
            "warm (from the cache)": _scan(args.data, shards, reports[2], args.jobs, cache),
        }
        same = reports[0].read_bytes() == reports[1].read_bytes() == reports[2].read_bytes()
        entry_mb = _size_mb(cache)
    finally:
        if args.cache is None:
            shutil.rmtree(work, ignore_errors=True)
    mb = sum(s.stat().st_size for s in shards) / 1e6
    eval_mb = (args.data / "eval.jsonl").stat().st_size / 1e6
    cold = runs["cold (no cache)"].wall
    print(
        f"### `contam scan --jobs {args.jobs}`: {eval_mb:,.1f} MB of eval examples "
        f"({args.data.name}) against {mb:,.1f} MB of corpus ({len(shards)} shard file(s))\n"
    )
    print("| run | wall s | CPU s | peak RSS MB | wall vs cold | MB/s vs `wc -w` |")
    print("|---|--:|--:|--:|--:|--:|")
    floor = mb / wc.wall
    print(f"| `wc -w` | {wc.wall:.2f} | {wc.cpu:.2f} | {wc.max_rss_mb:,.0f} | — | 1.000× |")
    for name, r in runs.items():
        print(
            f"| {name} | {r.wall:.2f} | {r.cpu:.2f} | {r.max_rss_mb:,.0f} "
            f"| {r.wall / cold:.2f}× | {mb / r.wall / floor:.3f}× |"
        )
    print(f"\n- cache entry: {entry_mb:,.1f} MB on disk")
    print(f"- reports byte-identical (cold, building, warm): {'yes' if same else 'NO'}")
    print(f"- load average before the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
