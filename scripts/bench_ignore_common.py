"""The cost of boilerplate suppression: `contam scan` with and without its two options.

    python scripts/bench_ignore_common.py [--mb 200] [--repeat 3] [--jobs 1] [-k 20]

Uses the throughput benchmark's data (``scripts/bench_scan.py`` generates or reuses it, same
parameters and directory), then runs, alternating, `repeat` times each: a plain scan; a scan with
``--ignore-common K`` (a first pass counting each eval n-gram's documents, then the scan without
the common ones); a scan with ``--ignore-from`` a 1 MB collection (the first corpus documents).
Prints one Markdown table (median wall and CPU seconds over the runs, the ratio to the plain scan,
peak RSS) and how many examples each setting flagged.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("bench_scan", HERE / "bench_scan.py")
assert _spec is not None and _spec.loader is not None
bench_scan = importlib.util.module_from_spec(_spec)
sys.modules["bench_scan"] = bench_scan
_spec.loader.exec_module(bench_scan)


def collection(corpus: Path, out: Path, size: int = 1 << 20) -> Path:
    """The first `size` bytes of whole lines of the first corpus shard, as a collection."""
    first = sorted(corpus.glob("shard_*.jsonl"))[0]
    kept, total = [], 0
    with first.open("rb") as fh:
        for line in fh:
            kept.append(line)
            total += len(line)
            if total >= size:
                break
    out.write_bytes(b"".join(kept))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("-k", type=int, default=20, help="the --ignore-common value (default 20)")
    args = ap.parse_args(argv)
    data_args = bench_scan.parse_args(["--mb", str(args.mb), "--skip-ref"])
    prepared = bench_scan.prepare_data(data_args)
    if prepared is None:
        print("bench_ignore_common: data generation failed", file=sys.stderr)
        return 2
    bench, meta = prepared
    bench_scan.warm_cache([bench.eval, *bench.shards])
    coll = collection(bench.corpus, bench.runs / "boilerplate-1mb.jsonl")
    settings = {
        "plain": [],
        f"--ignore-common {args.k}": ["--ignore-common", str(args.k)],
        "--ignore-from (1 MB)": ["--ignore-from", str(coll)],
    }
    runs: dict[str, list] = {name: [] for name in settings}
    for _ in range(args.repeat):
        for name, extra in settings.items():
            report = bench.runs / f"ignore-{len(runs[name])}-{name.split()[0].strip('-')}.json"
            cmd = [*bench_scan.contam_command(bench, report, args.jobs), *extra]
            run = bench_scan.measure(cmd, cwd=bench_scan.REPO)
            if run.returncode not in (0, 1):
                print(f"bench_ignore_common: {name} failed: {run.tail()}", file=sys.stderr)
                return 2
            runs[name].append((run, report))
    print_table(runs, bench, meta, args)
    return 0


def print_table(runs: dict[str, list], bench: object, meta: dict, args: argparse.Namespace) -> None:
    mb = bench.corpus_bytes / 1e6  # type: ignore[attr-defined]
    print(
        f"### `contam scan --jobs {args.jobs}` on {mb:,.1f} MB, "
        f"{meta['eval']['examples']:,} eval examples, {args.repeat} runs each (medians)\n"
    )
    print("| setting | wall s | CPU s | vs plain (wall) | vs plain (CPU) | peak RSS MB | flagged |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    base_wall = statistics.median(r.wall for r, _ in runs["plain"])
    base_cpu = statistics.median(r.cpu for r, _ in runs["plain"])
    for name, done in runs.items():
        wall = statistics.median(r.wall for r, _ in done)
        cpu = statistics.median(r.cpu for r, _ in done)
        rss = max(r.max_rss_mb for r, _ in done)
        report = orjson.loads(done[-1][1].read_bytes())
        flagged = report["summary"]["flagged"]
        print(
            f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base_wall:.2f}× | {cpu / base_cpu:.2f}× "
            f"| {rss:.0f} | {flagged} |"
        )
    walls = {k: ", ".join(f"{r.wall:.2f}" for r, _ in v) for k, v in runs.items()}
    print("\nEvery run's wall seconds: " + "; ".join(f"{k}: {v}" for k, v in walls.items()))
    print(f"\n{bench_scan.machine_info()}")


if __name__ == "__main__":
    sys.exit(main())
