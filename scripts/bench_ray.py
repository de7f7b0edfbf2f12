"""The Ray engine's overhead against the local engine, on the throughput benchmark, in one run.

    python scripts/bench_ray.py [--mb 1000] [--data DIR] [--cpus 2] [--repeat 1] [--address A]
        [--cluster]

Generates (or reuses) the benchmark corpus with ``python -m contam_cli.features.bench.generate
--reuse``, then times on the same files, each in its own child process: ``wc -w``; ``contam scan
--jobs CPUS`` (the CLI); and the library's ``scan()`` with ``LocalProcesses(CPUS)`` and with
``RayExecutor(num_cpus=CPUS)`` (a local Ray started and shut down inside the run, as ``--engine
ray`` does; or the cluster at ``--address``); with ``--cluster`` also through a Ray started
beforehand with ``ray start --head`` (the start-up a long-lived cluster does not pay). Prints a
Markdown table: wall seconds (best of ``--repeat``), MB/s, the ratio to ``contam scan --jobs
CPUS``, for the library runs when (seconds from the child's start) the workers were up
(``on_start``), the last task was done and scan() returned (after shutting Ray down), and whether
the report is byte-identical to the CLI's.

Exit status: 0 normally; 1 if a report differs from the CLI's; 2 if a run failed.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------
# The child: one library scan, with its timings


def child(args: argparse.Namespace) -> int:
    """Scan with the asked engine; write the report and its timings (seconds from the start):
    workers up (``on_start``), the last task done, scan() returned."""
    import orjson

    from contam_cli import scan
    from contam_cli.cli.common import tune_allocator
    from contam_cli.engine.executor import Executor, LocalProcesses
    from contam_cli.render import write_json

    tune_allocator()  # NOTE: what the contam command does first, so the rows compare alike
    began = time.perf_counter()
    marks: dict[str, float] = {}
    executor: Executor
    if args.child == "ray":
        from contam_cli.engine.ray_executor import RayExecutor

        executor = RayExecutor(args.address, None if args.address else args.cpus)
    else:
        executor = LocalProcesses(args.cpus)
    report = scan(
        args.eval,
        args.corpus,
        executor=_Timed(executor, marks),
    )
    end = time.perf_counter()
    with open(args.report, "wb") as fh:
        write_json(report, fh)
    timing = {k: v - began for k, v in marks.items()} | {"total": end - began}
    Path(args.timing).write_bytes(orjson.dumps(timing))
    return 0


def _Timed(inner: Any, marks: dict[str, float]) -> Any:
    """`inner`, noting when its workers were up (``on_start``) and when the last task was done."""
    from contam_cli.engine.executor import Executor

    class Timed(Executor):
        def map(self, work: Any, context: Any, tasks: Any, *, on_start: Any = None,
                on_done: Any = None) -> Any:  # fmt: skip
            def started() -> None:
                marks.setdefault("up", time.perf_counter())
                if on_start is not None:
                    on_start()

            def done(i: int) -> None:
                marks["last"] = time.perf_counter()
                if on_done is not None:
                    on_done(i)

            return inner.map(work, context, tasks, on_start=started, on_done=done)

    return Timed()


# ---------------------------------------------------------------------------------------------
# The parent: data, runs, table


@dataclass
class Row:
    """One tool's runs: wall seconds per repeat, and what the child said."""

    tool: str
    walls: list[float] = field(default_factory=list)
    marks: dict[str, float] = field(default_factory=dict)
    """The child's timings of its best run (seconds from its start)."""
    report: Path | None = None
    same: str = "—"
    error: str | None = None

    @property
    def wall(self) -> float:
        return min(self.walls) if self.walls else float("nan")


def run(cmd: list[str]) -> tuple[int, float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc.returncode, time.perf_counter() - start, proc.stderr.decode(errors="replace")


def prepare(args: argparse.Namespace) -> tuple[Path, Path, int]:
    cmd = [sys.executable, "-m", "contam_cli.features.bench.generate", "--out", str(args.data),
           "--mb", f"{args.mb:g}", "--seed", str(args.seed), "--n-eval", str(args.n_eval),
           "--reuse"]  # fmt: skip
    print(f"bench_ray: data in {args.data}", file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    corpus = args.data / "corpus"
    size = sum(p.stat().st_size for p in corpus.glob("shard_*.jsonl"))
    (args.data / "runs").mkdir(exist_ok=True)
    return args.data / "eval.jsonl", corpus, size


def measure_all(args: argparse.Namespace, ev: Path, corpus: Path) -> list[Row]:
    runs = args.data / "runs"
    files = [str(p) for p in sorted(corpus.glob("shard_*.jsonl"))]
    cli = [sys.executable, "-m", "contam_cli", "scan", str(ev), "--corpus", str(corpus),
           "--no-fail", "--jobs", str(args.cpus)]  # fmt: skip
    where = args.address or f"a local Ray of {args.cpus} CPUs started per run"
    rows = {
        "wc": Row("`wc -w`"),
        "cli": Row(f"`contam scan --jobs {args.cpus}`", report=runs / "ray-bench-cli.json"),
        "local": Row(
            f"`scan(executor=LocalProcesses({args.cpus}))`", report=runs / "ray-bench-local.json"
        ),  # fmt: skip
        "ray": Row(
            f"`scan(executor=RayExecutor(...))` ({where})", report=runs / "ray-bench-ray.json"
        ),  # fmt: skip
    }
    if args.cluster:
        label = f"`scan(executor=RayExecutor({CLUSTER!r}))` (a running Ray, {args.cpus} CPUs)"
        rows["cluster"] = Row(label, report=runs / "ray-bench-cluster.json")
    for k in range(args.repeat):
        for key, row in rows.items():
            print(f"bench_ray: {row.tool} ({k + 1}/{args.repeat})", file=sys.stderr, flush=True)
            timing = runs / f"ray-bench-{key}.timing.json"
            if key == "wc":
                cmd = ["wc", "-w", *files]
            elif key == "cli":
                cmd = [*cli, "--report", str(row.report)]
            else:
                address = CLUSTER if key == "cluster" else args.address
                cmd = [sys.executable, __file__, "--child", "local" if key == "local" else "ray",
                       "--eval", str(ev), "--corpus", str(corpus), "--report", str(row.report),
                       "--timing", str(timing), "--cpus", str(args.cpus),
                       *(["--address", address] if address else [])]  # fmt: skip
            code, wall, err = run(cmd)
            if code not in (0, 1):
                row.error = f"{row.tool}: exit {code}: {' | '.join(err.strip().splitlines()[-3:])}"
                continue
            if key not in ("wc", "cli") and not timing.exists():
                row.error = f"{row.tool}: exit {code} without timings: {err.strip()[-300:]}"
                continue
            row.walls.append(wall)
            if key not in ("wc", "cli"):
                import orjson

                if wall <= min(row.walls):
                    row.marks = orjson.loads(timing.read_bytes())
    return list(rows.values())


CLUSTER = "127.0.0.1:6399"


def start_cluster(cpus: int) -> subprocess.Popen[bytes]:
    """``ray start --head --block`` on port 6399, in a process group of its own (stopped by a
    signal to that group, which stops no other Ray on this machine)."""
    # NOTE: on 127.0.0.1: a head on the machine's own address is unreachable where that
    # address is firewalled from itself (this benchmark is local anyway).
    cmd = ["ray", "start", "--head", "--block", "--num-cpus", str(cpus), "--port", "6399",
           "--node-ip-address", "127.0.0.1", "--include-dashboard", "false",
           "--disable-usage-stats"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=os.environ, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", 6399)) == 0:
                time.sleep(3)  # NOTE: the raylet registers a moment after the GCS listens
                return proc
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGTERM)
    raise SystemExit("bench_ray: the Ray cluster did not start")


def judge(rows: list[Row]) -> bool:
    """Mark each report row: byte-identical to the CLI's report or not; True if all are."""
    reference = rows[1].report.read_bytes() if rows[1].report and rows[1].walls else None
    ok = True
    for row in rows[1:]:
        if row.report is None or not row.walls or reference is None:
            continue
        same = row.report.read_bytes() == reference
        row.same = "yes" if same else "NO"
        ok &= same
    return ok


def table(rows: list[Row], size: int, cpus: int) -> str:
    mb = size / 1e6
    base = rows[1].wall
    out = [
        f"| tool | wall s | MB/s | vs `--jobs {cpus}` | workers up at s | last task done at s "
        "| scan() returned at s | same report |",
        "|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for row in rows:
        if not row.walls:
            out.append(f"| {row.tool} | failed | | | | | | |")
            continue
        at = [f"{row.marks[k]:.2f}" if k in row.marks else "" for k in ("up", "last", "total")]
        ratio = f"{base / row.wall:.3f}×" if base == base else ""
        out.append(f"| {row.tool} | {row.wall:.2f} | {mb / row.wall:.1f} | {ratio} | "
                   f"{' | '.join(at)} | {row.same} |")  # fmt: skip
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=1000.0, help="corpus size in MB (default 1000)")
    ap.add_argument("--data", type=Path, default=None, help="data directory (default: per --mb)")
    ap.add_argument("--n-eval", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--cpus", type=int, default=2, help="workers of both engines (default 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool; the best is shown")
    ap.add_argument("--address", default=None, help="a Ray cluster instead of a local Ray")
    ap.add_argument(
        "--cluster",
        action="store_true",
        help="also time a Ray started beforehand (`ray start --head`, port 6399)",
    )
    ap.add_argument("--child", choices=["local", "ray"], help=argparse.SUPPRESS)
    for name in ("--eval", "--corpus", "--report", "--timing"):
        ap.add_argument(name, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.data is None:
        # NOTE: the same directory bench_scan.py uses for these parameters, so one is reused.
        name = f"contam-bench-{a.mb:g}mb-n{a.n_eval}-s{a.seed}"
        a.data = Path(tempfile.gettempdir()) / name
    a.data = a.data.resolve()
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child(args)
    ev, corpus, size = prepare(args)
    cluster = start_cluster(args.cpus) if args.cluster else None
    try:
        load_before = os.getloadavg()
        rows = measure_all(args, ev, corpus)
        load_after = os.getloadavg()
    finally:
        if cluster is not None:
            os.killpg(cluster.pid, signal.SIGTERM)
            cluster.wait(timeout=60)
    same = judge(rows)
    print(f"{size / 1e6:,.0f} MB corpus (`{corpus}`), {args.n_eval} eval examples\n")
    print(table(rows, size, args.cpus))
    for row in rows:
        if row.error:
            print(f"\n{row.error}")
    try:
        from importlib.metadata import version

        ray_version = version("ray")
    except Exception:  # noqa: BLE001 - only for the footer
        ray_version = "not installed"
    print(f"\nray {ray_version}; python {platform.python_version()}; {os.cpu_count()} cores;"
          f" load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")  # fmt: skip
    if any(row.error for row in rows):
        return 2
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
